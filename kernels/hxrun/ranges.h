/* Address-range conflict check: the fused entry's step 1.  Each task declares
 * what it reads, writes and uses as scratch; two tasks conflict when a range
 * one writes (or its scratch) overlaps any range of the other. */
#ifndef HX_RANGES_H
#define HX_RANGES_H
#include <stddef.h>
#include <stdint.h>

typedef enum { HX_READ = 0, HX_WRITE = 1, HX_SCRATCH = 2 } hx_access;

typedef struct hx_range {
    const char *name; /* e.g. "M.C" */
    const void *ptr;
    size_t bytes;
    hx_access access;
} hx_range;

#define HX_MAX_RANGES 8
typedef struct hx_range_set {
    const char *task;
    int n;
    hx_range r[HX_MAX_RANGES];
} hx_range_set;

void hx_ranges_add(hx_range_set *s, const char *name, const void *ptr, size_t bytes, hx_access access);
/* Returns 0 if no two sets conflict, else -1 with a message naming both tasks
 * and both ranges. */
int hx_ranges_check(const hx_range_set *const sets[], int nsets, char *err, size_t errlen);
#endif
