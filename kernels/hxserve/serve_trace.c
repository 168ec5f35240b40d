/* The arrival trace: CSV written by hxfuse.serve (the trace is an artifact of
 * the pipeline, seeded there), read and validated here before any thread
 * starts, so that a bad trace stops the run with the line at fault. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serve.h"

const char *const sv_kind_names[SV_NKINDS] = {"compute", "bandwidth"};

#define HEADER "arrival_ns,kind,size,deadline_ns"

static int parse_u64(const char *s, uint64_t *v) {
    if (!*s || *s == '-' || *s == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

/* One request line (header and line ending already stripped): its four
 * fields checked, arrivals not decreasing (*last: the previous one). */
static int parse_request(const char *path, int lineno, char *line, size_t len, uint64_t *last, sv_trace_req *r,
                         char *err, size_t errlen) {
    if (!len) {
        snprintf(err, errlen, "trace %s:%d: empty line", path, lineno);
        return -1;
    }
    char *field[5];
    int nf = 0;
    for (char *p = line; nf < 5;) {
        field[nf++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = 0;
        p = c + 1;
    }
    if (nf != 4) {
        snprintf(err, errlen, "trace %s:%d: %d fields, expected 4 (%s)", path, lineno, nf, HEADER);
        return -1;
    }
    uint64_t size;
    if (parse_u64(field[0], &r->arrival_ns)) {
        snprintf(err, errlen, "trace %s:%d: arrival_ns '%.100s' is not a non-negative integer", path, lineno, field[0]);
        return -1;
    }
    if (r->arrival_ns < *last) {
        snprintf(err, errlen,
                 "trace %s:%d: arrival_ns %llu is before the previous arrival %llu (arrivals must not decrease)", path,
                 lineno, (unsigned long long)r->arrival_ns, (unsigned long long)*last);
        return -1;
    }
    *last = r->arrival_ns;
    r->kind = -1;
    for (int k = 0; k < SV_NKINDS; k++)
        if (!strcmp(field[1], sv_kind_names[k])) r->kind = k;
    if (r->kind < 0) {
        snprintf(err, errlen, "trace %s:%d: kind '%.100s' is not compute or bandwidth", path, lineno, field[1]);
        return -1;
    }
    if (parse_u64(field[2], &size) || size < 1 || size > SV_MAX_SIZE) {
        snprintf(err, errlen, "trace %s:%d: size '%.100s' is not an integer in [1, %d]", path, lineno, field[2],
                 SV_MAX_SIZE);
        return -1;
    }
    r->size = (int)size;
    if (parse_u64(field[3], &r->deadline_ns) || r->deadline_ns == 0) {
        snprintf(err, errlen, "trace %s:%d: deadline_ns '%.100s' is not a positive integer", path, lineno, field[3]);
        return -1;
    }
    return 0;
}

/* Appends *r to the trace, growing it (*cap: its capacity). */
static int push_request(const char *path, sv_trace *t, int *cap, const sv_trace_req *r, char *err, size_t errlen) {
    if (t->n == SV_MAX_REQUESTS) {
        snprintf(err, errlen, "trace %s: more than %d requests", path, SV_MAX_REQUESTS);
        return -1;
    }
    if (t->n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        sv_trace_req *q = realloc(t->req, (size_t)*cap * sizeof *q);
        if (!q) {
            snprintf(err, errlen, "trace %s: out of memory", path);
            return -1;
        }
        t->req = q;
    }
    t->req[t->n++] = *r;
    return 0;
}

int sv_trace_read(const char *path, sv_trace *t, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "trace %s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    uint64_t h = 0xcbf29ce484222325ull;
    char line[512];
    int lineno = 0, cap = 0, rc = -1;
    uint64_t last = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)line[i]) * 0x100000001b3ull;
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            snprintf(err, errlen, "trace %s:%d: line longer than %zu bytes", path, lineno, sizeof line - 2);
            goto out;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (lineno == 1) {
            if (strcmp(line, HEADER) != 0) {
                snprintf(err, errlen, "trace %s:1: header must be '%s' (got '%.200s')", path, HEADER, line);
                goto out;
            }
            continue;
        }
        sv_trace_req r;
        if (parse_request(path, lineno, line, len, &last, &r, err, errlen)) goto out;
        if (push_request(path, t, &cap, &r, err, errlen)) goto out;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "trace %s: read error", path);
        goto out;
    }
    if (lineno == 0) {
        snprintf(err, errlen, "trace %s: empty file (expected the header '%s')", path, HEADER);
        goto out;
    }
    if (t->n == 0) {
        snprintf(err, errlen, "trace %s: no requests after the header", path);
        goto out;
    }
    t->digest = h;
    rc = 0;
out:
    fclose(f);
    if (rc) sv_trace_free(t);
    return rc;
}

void sv_trace_free(sv_trace *t) {
    free(t->req);
    t->req = NULL;
    t->n = 0;
}
