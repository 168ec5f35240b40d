/* A small JSON reader for graph files: the whole document as a tree.  Errors
 * name the line and column. */
#ifndef HX_GRAPH_JSON_H
#define HX_GRAPH_JSON_H
#include <stddef.h>

typedef enum { GJ_NULL, GJ_BOOL, GJ_NUM, GJ_STR, GJ_ARR, GJ_OBJ } gj_type;

typedef struct gj_value {
    gj_type type;
    int line;
    double num;
    int boolean;
    char *str;
    int n;       /* elements of an array or members of an object */
    char **keys; /* object member names */
    struct gj_value **items;
} gj_value;

/* Parses text; returns NULL with a message on a syntax error. */
gj_value *gj_parse(const char *text, char *err, size_t errlen);
void gj_free(gj_value *v);
/* Member of an object, or NULL. */
gj_value *gj_get(const gj_value *obj, const char *key);
#endif
