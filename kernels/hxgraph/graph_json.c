/* Recursive-descent JSON reader (RFC 8259 minus \u escapes beyond ASCII,
 * which graph files never need: names are identifiers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph_json.h"

typedef struct {
    const char *s, *p;
    char *err;
    size_t errlen;
    int failed, depth;
} gj_in;

static void where(const gj_in *in, int *line, int *col) {
    *line = 1, *col = 1;
    for (const char *q = in->s; q < in->p; q++) {
        if (*q == '\n') ++*line, *col = 1;
        else ++*col;
    }
}

static gj_value *fail(gj_in *in, const char *what) {
    if (!in->failed) {
        int line, col;
        where(in, &line, &col);
        snprintf(in->err, in->errlen, "JSON syntax error at line %d, column %d: %s", line, col, what);
    }
    in->failed = 1;
    return NULL;
}

static void ws(gj_in *in) {
    while (*in->p == ' ' || *in->p == '\t' || *in->p == '\n' || *in->p == '\r') in->p++;
}

static gj_value *mk(gj_in *in, gj_type t) {
    gj_value *v = (gj_value *)calloc(1, sizeof *v);
    if (!v) return fail(in, "out of memory");
    int col;
    where(in, &v->line, &col);
    v->type = t;
    return v;
}

static char *str(gj_in *in) {
    if (*in->p != '"') return (char *)fail(in, "expected a string");
    in->p++;
    size_t cap = 16, n = 0;
    char *out = (char *)malloc(cap);
    while (out && *in->p != '"') {
        char c = *in->p;
        if (!c || c == '\n') {
            free(out);
            return (char *)fail(in, "unterminated string");
        }
        if (c == '\\') {
            in->p++;
            switch (*in->p) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            default: free(out); return (char *)fail(in, "unsupported escape in string");
            }
        }
        if (n + 2 > cap) {
            char *o = (char *)realloc(out, cap *= 2);
            if (!o) free(out);
            out = o;
            if (!out) break;
        }
        out[n++] = c;
        in->p++;
    }
    if (!out) return (char *)fail(in, "out of memory");
    out[n] = 0;
    in->p++;
    return out;
}

static gj_value *value(gj_in *in);

static int push(gj_value *v, gj_value *item, char *key) {
    gj_value **items = (gj_value **)realloc(v->items, (size_t)(v->n + 1) * sizeof *items);
    if (!items) return -1;
    v->items = items;
    if (v->type == GJ_OBJ) {
        char **keys = (char **)realloc(v->keys, (size_t)(v->n + 1) * sizeof *keys);
        if (!keys) return -1;
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return 0;
}

static gj_value *container(gj_in *in, int obj) {
    if (++in->depth > 64) return fail(in, "nesting deeper than 64");
    gj_value *v = mk(in, obj ? GJ_OBJ : GJ_ARR);
    if (!v) return NULL;
    in->p++;
    ws(in);
    if (*in->p == (obj ? '}' : ']')) {
        in->p++;
        in->depth--;
        return v;
    }
    for (;;) {
        ws(in);
        char *key = NULL;
        if (obj) {
            if (!(key = str(in))) break;
            ws(in);
            if (*in->p != ':') {
                free(key);
                fail(in, "expected ':'");
                break;
            }
            in->p++;
            for (int i = 0; i < v->n; i++)
                if (!strcmp(v->keys[i], key)) {
                    free(key);
                    fail(in, "duplicate key in an object");
                    key = NULL;
                    break;
                }
            if (in->failed) break;
        }
        gj_value *item = value(in);
        if (!item || push(v, item, key)) {
            free(key);
            gj_free(item);
            fail(in, "bad value");
            break;
        }
        ws(in);
        if (*in->p == ',') {
            in->p++;
            continue;
        }
        if (*in->p == (obj ? '}' : ']')) {
            in->p++;
            in->depth--;
            return v;
        }
        fail(in, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        break;
    }
    gj_free(v);
    return NULL;
}

static gj_value *value(gj_in *in) {
    ws(in);
    char c = *in->p;
    if (c == '{' || c == '[') return container(in, c == '{');
    if (c == '"') {
        gj_value *v = mk(in, GJ_STR);
        if (v && !(v->str = str(in))) {
            gj_free(v);
            return NULL;
        }
        return v;
    }
    if (!strncmp(in->p, "true", 4) || !strncmp(in->p, "false", 5)) {
        gj_value *v = mk(in, GJ_BOOL);
        if (v) v->boolean = c == 't', in->p += c == 't' ? 4 : 5;
        return v;
    }
    if (!strncmp(in->p, "null", 4)) {
        gj_value *v = mk(in, GJ_NULL);
        in->p += 4;
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char *end;
        double d = strtod(in->p, &end);
        if (end == in->p) return fail(in, "bad number");
        gj_value *v = mk(in, GJ_NUM);
        if (v) v->num = d;
        in->p = end;
        return v;
    }
    return fail(in, "expected a value");
}

gj_value *gj_parse(const char *text, char *err, size_t errlen) {
    gj_in in = {text, text, err, errlen, 0, 0};
    gj_value *v = value(&in);
    if (v) {
        ws(&in);
        if (*in.p) {
            gj_free(v);
            return fail(&in, "trailing characters after the document");
        }
    }
    return v;
}

void gj_free(gj_value *v) {
    if (!v) return;
    for (int i = 0; i < v->n; i++) {
        gj_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

gj_value *gj_get(const gj_value *obj, const char *key) {
    if (!obj || obj->type != GJ_OBJ) return NULL;
    for (int i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return obj->items[i];
    return NULL;
}
