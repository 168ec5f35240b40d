/* The runners' table-driven option parser (opts.h). */
#include "opts.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const hx_opt *find(const hx_opt *opts, int nopts, const char *name) {
    for (int i = 0; i < nopts; i++)
        if (!strcmp(opts[i].name, name)) return &opts[i];
    return NULL;
}

static int choice(const hx_opt *o, const char *v) {
    for (int i = 0; o->choices && (o->nchoices ? i < o->nchoices : o->choices[i] != NULL); i++)
        if (!strcmp(o->choices[i], v)) return i;
    return -1;
}

int hx_opt_bad(const hx_opt_style *st, const hx_opt *o, const char *why, const char *v, char *err, size_t n) {
    char gen[128];
    if (!why && !st->int_why) {
        why = "bad value";
    } else if (!why) {
        snprintf(gen, sizeof gen, st->int_why, o->lo, o->hi);
        why = gen;
    }
    if (st->value_first) snprintf(err, n, "%s: '%s' %s", o->name, v, why);
    else snprintf(err, n, "%s: %s (got '%s')", o->name, why, v);
    return -1;
}

/* 0 when v is the whole of an unsigned 64-bit decimal integer (no sign). */
static int parse_u64(const char *v, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || end == v || v[0] == '-') return -1;
    *out = (uint64_t)x;
    return 0;
}

static int parse_double(const char *v, double lo, double hi, double *out) {
    char *end;
    double x = strtod(v, &end);
    if (end == v || *end || !(x >= lo && x <= hi)) return -1;
    *out = x;
    return 0;
}

/* The value of one option into its destination. */
static int set_value(const hx_opt *o, const hx_opt_style *st, const char *v, char *err, size_t n) {
    long long x;
    int i;
    switch (o->kind) {
    case HX_OPT_INT:
    case HX_OPT_I64:
    case HX_OPT_SIZE:
        if (hx_parse_ll(v, st->base, o->lo, o->hi, &x)) return hx_opt_bad(st, o, o->why, v, err, n);
        if (o->kind == HX_OPT_INT) *(int *)o->dst = (int)x;
        else if (o->kind == HX_OPT_I64) *(int64_t *)o->dst = (int64_t)x;
        else *(size_t *)o->dst = (size_t)x;
        return 0;
    case HX_OPT_U64:
        if (parse_u64(v, (uint64_t *)o->dst)) return hx_opt_bad(st, o, o->why, v, err, n);
        return 0;
    case HX_OPT_DOUBLE:
        if (parse_double(v, o->dlo, o->dhi, (double *)o->dst)) return hx_opt_bad(st, o, o->why, v, err, n);
        return 0;
    case HX_OPT_STR:
        if (o->choices && choice(o, v) < 0) return hx_opt_bad(st, o, o->why, v, err, n);
        *(const char **)o->dst = v;
        return 0;
    case HX_OPT_ENUM:
        if ((i = choice(o, v)) < 0) return hx_opt_bad(st, o, o->why, v, err, n);
        *(int *)o->dst = i;
        return 0;
    case HX_OPT_CUSTOM:
        err[0] = 0;
        if (!o->parse(o, v, err, n)) return 0;
        return err[0] ? -1 : hx_opt_bad(st, o, o->why, v, err, n);
    case HX_OPT_FLAG: break; /* takes no value: hx_opts_parse */
    }
    return -1;
}

int hx_opts_parse(const hx_opt *opts, int nopts, const hx_opt_style *st, int argc, char **argv, char *err, size_t n) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return 1;
        const hx_opt *o = find(opts, nopts, a);
        if (o && o->kind == HX_OPT_FLAG) {
            *(int *)o->dst = 1;
            continue;
        }
        if (st->stray && strncmp(a, "--", 2) != 0) {
            snprintf(err, n, st->stray, a, a);
            return -1;
        }
        /* a last option without its value, known or not */
        if (i + 1 >= argc) {
            snprintf(err, n, st->missing, a, a);
            return -1;
        }
        const char *v = argv[++i];
        if (!o) {
            snprintf(err, n, st->unknown, a, a);
            return -1;
        }
        if (set_value(o, st, v, err, n)) return -1;
    }
    return 0;
}

void hx_opts_usage(FILE *f, const hx_opt *opts, int nopts, int width) {
    char head[128];
    for (int i = 0; i < nopts; i++) {
        if (!opts[i].help) continue;
        snprintf(head, sizeof head, "%s%s%s", opts[i].name, opts[i].metavar ? " " : "",
                 opts[i].metavar ? opts[i].metavar : "");
        fprintf(f, "  %-*s %s\n", width, head, opts[i].help);
    }
}
