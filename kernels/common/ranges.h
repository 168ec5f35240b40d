/* Address-range conflict check, the one rule of every runner: two accesses
 * conflict when they share a byte and at least one of them writes.  hxrun's
 * fused entry checks its tasks' ranges with hx_ranges_check (step 1); hxgraph
 * checks the strided regions of nodes with no dependency path between them
 * with hx_regions_overlap (hxgraph/graph.c). */
#ifndef HX_RANGES_H
#define HX_RANGES_H
#include <stddef.h>
#include <stdint.h>

/* A 2-D region: rows of row_bytes bytes, stride bytes apart, from start (one
 * row: a contiguous range).  rows >= 1, row_bytes <= stride when rows > 1. */
typedef struct hx_region {
    uintptr_t start;
    size_t rows, row_bytes, stride;
} hx_region;
/* 1 when the regions share a byte. */
int hx_regions_overlap(const hx_region *a, const hx_region *b);

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
