/* One table-driven option parser for the runners (hxrun, hxgraph, hxserve): each
 * runner lists its options once, as an array of hx_opt (name, kind, where
 * the value goes, bounds, the message for a bad value, the help line), and
 * hx_opts_parse walks argv against it.  What differs between the runners'
 * wording (which they keep: their tests and users read it) is the parser's
 * hx_opt_style; what several options decide together stays with the runner,
 * after hx_opts_parse. */
#ifndef HX_OPTS_H
#define HX_OPTS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum hx_opt_kind {
    HX_OPT_INT,    /* int, within [lo, hi] */
    HX_OPT_I64,    /* int64_t (or uint64_t: the same object's unsigned view), within [lo, hi] */
    HX_OPT_U64,    /* uint64_t, the whole unsigned range, base 10; no sign */
    HX_OPT_SIZE,   /* size_t, within [lo, hi] */
    HX_OPT_DOUBLE, /* double, within [dlo, dhi] */
    HX_OPT_STR,    /* const char *: the argument itself; with choices, one of them */
    HX_OPT_FLAG,   /* int set to 1; takes no value */
    HX_OPT_ENUM,   /* int: the index of the value among choices */
    HX_OPT_CUSTOM, /* parse(opt, value, err, n) */
} hx_opt_kind;

typedef struct hx_opt hx_opt;
struct hx_opt {
    const char *name; /* "--rounds" */
    hx_opt_kind kind;
    void *dst;
    long long lo, hi;           /* HX_OPT_INT, HX_OPT_I64, HX_OPT_SIZE */
    double dlo, dhi;            /* HX_OPT_DOUBLE */
    const char *const *choices; /* HX_OPT_ENUM, HX_OPT_STR: nchoices of them, or NULL-terminated */
    int nchoices;
    /* a bad value's reason ("expected spin or spin-block"); NULL for a
     * bounded integer: the style's int_why with lo and hi */
    const char *why;
    /* HX_OPT_CUSTOM: 0, or -1 with err written (or left empty: why is used) */
    int (*parse)(const hx_opt *o, const char *value, char *err, size_t n);
    const char *metavar, *help; /* hx_opts_usage's line (help NULL: not listed) */
};

/* A runner's wording of its errors.  unknown, missing and stray are printf
 * formats given the argument twice (use it once or twice); int_why is given
 * lo and hi (long long). */
typedef struct hx_opt_style {
    int value_first;     /* "OPT: 'VALUE' why" rather than "OPT: why (got 'VALUE')" */
    const char *int_why; /* "expected an integer in [%lld, %lld]" */
    const char *unknown; /* "unknown option %s" */
    const char *missing; /* an option without its value: "%s: missing value" */
    const char *stray;   /* an argument that is no --option (NULL: read as an unknown option) */
    int base;            /* of integers: 10, or 0 for C prefixes (0x.., 0..) */
} hx_opt_style;

/* Walks argv[1..argc) against opts[0..nopts).  Returns 0, 1 when -h or
 * --help was given (parsing stops there), or -1 with the message in err.
 * Defaults are the caller's: what dst holds before the call. */
int hx_opts_parse(const hx_opt *opts, int nopts, const hx_opt_style *st, int argc, char **argv, char *err, size_t n);
/* The bad-value message of option o for value v in the style st (for a
 * custom parser's own checks). */
int hx_opt_bad(const hx_opt_style *st, const hx_opt *o, const char *why, const char *v, char *err, size_t n);
/* One line per option with help: "  NAME METAVAR" in `width` columns, then help. */
void hx_opts_usage(FILE *f, const hx_opt *opts, int nopts, int width);
#endif
