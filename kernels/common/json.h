/* Minimal JSON Lines writer: enough for flat records with nested objects. */
#ifndef HX_JSON_H
#define HX_JSON_H
#include <stdint.h>
#include <stdio.h>

typedef struct hx_json {
    FILE *f;   /* NULL: writing into buf */
    char *buf; /* hx_json_begin_buf: NUL-terminated text so far */
    size_t cap, len;
    int truncated; /* buf was too small: the text is cut */
    int need_comma[16];
    int depth;
} hx_json;

void hx_json_begin(hx_json *j, FILE *f); /* opens the top-level object */
void hx_json_end(hx_json *j);            /* closes it and writes '\n' */
/* The same writer into memory: one object as text (no newline), for a value
 * built on one side of a boundary and written into a record on the other
 * (the DSP's description in hxrun-ap's meta).  Cut at cap - 1 bytes, with
 * j->truncated set. */
void hx_json_begin_buf(hx_json *j, char *buf, size_t cap);
/* A value given as JSON text (trusted: written by hx_json on the other side). */
void hx_json_raw(hx_json *j, const char *key, const char *text);
void hx_json_key(hx_json *j, const char *key); /* key of the next value (objects only) */
void hx_json_obj(hx_json *j, const char *key);
void hx_json_arr(hx_json *j, const char *key);
void hx_json_close(hx_json *j, char bracket);                 /* '}' or ']' */
void hx_json_str(hx_json *j, const char *key, const char *v); /* NULL -> null */
void hx_json_u64(hx_json *j, const char *key, uint64_t v);
void hx_json_i64(hx_json *j, const char *key, int64_t v);
void hx_json_f64(hx_json *j, const char *key, double v);
void hx_json_bool(hx_json *j, const char *key, int v);
void hx_json_null(hx_json *j, const char *key);
void hx_json_hex64(hx_json *j, const char *key, uint64_t v); /* "0123456789abcdef" */
/* FNV-1a 64 digest of every byte written to f so far and the number of
 * records (lines) written to it: what the end record carries. */
void hx_json_digest(FILE *f, uint64_t *digest, int64_t *records);
/* Opens the end record: "record":"end", then "records" and "digest"
 * ("fnv1a64:<16 hex>") of everything written to f before it.  The caller
 * adds its own fields and closes it with hx_json_end. */
void hx_json_begin_end_record(hx_json *j, FILE *f);
#endif
