#include <math.h>
#include <stdarg.h>
#include <string.h>
#include "json.h"

/* Integrity of the output: every byte written goes through put(), which
 * keeps a 64-bit FNV-1a digest and the number of records of the stream, so
 * that the end record can carry both (hx_json_digest).  Each FNV-1a step is a
 * bijection of the state for a given byte, so any single changed byte changes
 * the digest.  One output stream per process: the state restarts when the
 * stream changes. */
static FILE *dig_f;
static uint64_t dig_h;
static int64_t dig_records;

/* A writer into memory (hx_json_begin_buf) has no stream: its bytes enter
 * no digest, and what does not fit is cut and counted as truncated. */
static void put(hx_json *j, const char *s, size_t n) {
    if (!j->f) {
        size_t room = j->cap > j->len + 1 ? j->cap - j->len - 1 : 0;
        size_t k = n < room ? n : room;
        memcpy(j->buf + j->len, s, k);
        j->len += k;
        j->buf[j->len] = 0;
        if (k < n) j->truncated = 1;
        return;
    }
    FILE *f = j->f;
    if (f != dig_f) dig_f = f, dig_h = 0xcbf29ce484222325ull, dig_records = 0;
    for (size_t i = 0; i < n; i++) dig_h = (dig_h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    fwrite(s, 1, n, f);
}
static void putch(hx_json *f, char c) { put(f, &c, 1); }
static void puts_(hx_json *f, const char *s) { put(f, s, strlen(s)); }
static void putf(hx_json *f, const char *fmt, ...) {
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap); /* numbers only: always fits */
    va_end(ap);
    if (n > 0) put(f, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void hx_json_digest(FILE *f, uint64_t *digest, int64_t *records) {
    if (f != dig_f) dig_f = f, dig_h = 0xcbf29ce484222325ull, dig_records = 0;
    *digest = dig_h, *records = dig_records;
}

void hx_json_begin_end_record(hx_json *j, FILE *f) {
    uint64_t digest;
    int64_t records;
    hx_json_digest(f, &digest, &records); /* before the first byte of this record */
    char dig[32];
    snprintf(dig, sizeof dig, "fnv1a64:%016llx", (unsigned long long)digest);
    hx_json_begin(j, f);
    hx_json_str(j, "record", "end");
    hx_json_i64(j, "records", records);
    hx_json_str(j, "digest", dig);
}

static void sep(hx_json *j, const char *key) {
    if (j->need_comma[j->depth]) putch(j, ',');
    j->need_comma[j->depth] = 1;
    if (key) {
        putch(j, '"');
        puts_(j, key); /* keys are our own identifiers: no escaping needed */
        puts_(j, "\":");
    }
}

static void put_escaped(hx_json *f, const char *s) {
    putch(f, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') putf(f, "\\%c", c);
        else if (c < 0x20) putf(f, "\\u%04x", c);
        else putch(f, (char)c);
    }
    putch(f, '"');
}

void hx_json_begin(hx_json *j, FILE *f) {
    j->f = f;
    j->buf = NULL, j->cap = j->len = 0, j->truncated = 0;
    j->depth = 0;
    j->need_comma[0] = 0;
    putch(j, '{');
}
void hx_json_begin_buf(hx_json *j, char *buf, size_t cap) {
    j->f = NULL;
    j->buf = buf, j->cap = cap, j->len = 0, j->truncated = 0;
    if (cap) buf[0] = 0;
    j->depth = 0;
    j->need_comma[0] = 0;
    putch(j, '{');
}
void hx_json_end(hx_json *j) {
    if (!j->f) { /* one object, no newline: it is a value inside another record */
        putch(j, '}');
        return;
    }
    puts_(j, "}\n");
    dig_records++;
}
void hx_json_raw(hx_json *j, const char *key, const char *text) {
    sep(j, key);
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' ')) n--;
    put(j, text, n);
}
void hx_json_key(hx_json *j, const char *key) { sep(j, key); }
void hx_json_obj(hx_json *j, const char *key) {
    sep(j, key);
    putch(j, '{');
    j->need_comma[++j->depth] = 0;
}
void hx_json_arr(hx_json *j, const char *key) {
    sep(j, key);
    putch(j, '[');
    j->need_comma[++j->depth] = 0;
}
void hx_json_close(hx_json *j, char bracket) {
    putch(j, bracket);
    j->depth--;
}
void hx_json_str(hx_json *j, const char *key, const char *v) {
    sep(j, key);
    if (v) put_escaped(j, v);
    else puts_(j, "null");
}
void hx_json_u64(hx_json *j, const char *key, uint64_t v) {
    sep(j, key);
    putf(j, "%llu", (unsigned long long)v);
}
void hx_json_i64(hx_json *j, const char *key, int64_t v) {
    sep(j, key);
    putf(j, "%lld", (long long)v);
}
void hx_json_f64(hx_json *j, const char *key, double v) {
    sep(j, key);
    if (isfinite(v)) putf(j, "%.9g", v);
    else puts_(j, "null");
}
void hx_json_bool(hx_json *j, const char *key, int v) {
    sep(j, key);
    puts_(j, v ? "true" : "false");
}
void hx_json_null(hx_json *j, const char *key) {
    sep(j, key);
    puts_(j, "null");
}
void hx_json_hex64(hx_json *j, const char *key, uint64_t v) {
    sep(j, key);
    putf(j, "\"%016llx\"", (unsigned long long)v);
}
