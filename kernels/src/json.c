#include <math.h>
#include "json.h"

static void sep(hx_json *j, const char *key) {
    if (j->need_comma[j->depth]) fputc(',', j->f);
    j->need_comma[j->depth] = 1;
    if (key) {
        fputc('"', j->f);
        fputs(key, j->f); /* keys are our own identifiers: no escaping needed */
        fputs("\":", j->f);
    }
}

static void put_escaped(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

void hx_json_begin(hx_json *j, FILE *f) {
    j->f = f;
    j->depth = 0;
    j->need_comma[0] = 0;
    fputc('{', f);
}
void hx_json_end(hx_json *j) { fputs("}\n", j->f); }
void hx_json_key(hx_json *j, const char *key) { sep(j, key); }
void hx_json_obj(hx_json *j, const char *key) {
    sep(j, key);
    fputc('{', j->f);
    j->need_comma[++j->depth] = 0;
}
void hx_json_arr(hx_json *j, const char *key) {
    sep(j, key);
    fputc('[', j->f);
    j->need_comma[++j->depth] = 0;
}
void hx_json_close(hx_json *j, char bracket) {
    fputc(bracket, j->f);
    j->depth--;
}
void hx_json_str(hx_json *j, const char *key, const char *v) {
    sep(j, key);
    if (v) put_escaped(j->f, v);
    else fputs("null", j->f);
}
void hx_json_u64(hx_json *j, const char *key, uint64_t v) { sep(j, key); fprintf(j->f, "%llu", (unsigned long long)v); }
void hx_json_i64(hx_json *j, const char *key, int64_t v) { sep(j, key); fprintf(j->f, "%lld", (long long)v); }
void hx_json_f64(hx_json *j, const char *key, double v) {
    sep(j, key);
    if (isfinite(v)) fprintf(j->f, "%.9g", v);
    else fputs("null", j->f);
}
void hx_json_bool(hx_json *j, const char *key, int v) { sep(j, key); fputs(v ? "true" : "false", j->f); }
void hx_json_null(hx_json *j, const char *key) { sep(j, key); fputs("null", j->f); }
void hx_json_hex64(hx_json *j, const char *key, uint64_t v) { sep(j, key); fprintf(j->f, "\"%016llx\"", (unsigned long long)v); }
