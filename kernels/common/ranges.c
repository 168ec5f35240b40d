#include <stdio.h>
#include "ranges.h"

void hx_ranges_add(hx_range_set *s, const char *name, const void *ptr, size_t bytes, hx_access access) {
    if (s->n < HX_MAX_RANGES && bytes) s->r[s->n++] = (hx_range){name, ptr, bytes, access};
}

int hx_regions_overlap(const hx_region *a, const hx_region *b) {
    uintptr_t s1 = a->start, e1 = s1 + (a->rows - 1) * a->stride + a->row_bytes;
    uintptr_t s2 = b->start, e2 = s2 + (b->rows - 1) * b->stride + b->row_bytes;
    if (e1 <= s2 || e2 <= s1) return 0;
    /* rows of a against rows of b; both lists are sorted, so one sweep */
    size_t i = 0, j = 0;
    while (i < a->rows && j < b->rows) {
        uintptr_t x0 = s1 + i * a->stride, x1 = x0 + a->row_bytes;
        uintptr_t y0 = s2 + j * b->stride, y1 = y0 + b->row_bytes;
        if (x0 < y1 && y0 < x1) return 1;
        if (x1 <= y1) i++;
        else j++;
    }
    return 0;
}

static const char *access_name(hx_access a) { return a == HX_READ ? "read" : (a == HX_WRITE ? "write" : "scratch"); }

int hx_ranges_check(const hx_range_set *const sets[], int nsets, char *err, size_t errlen) {
    for (int i = 0; i < nsets; i++)
        for (int j = i + 1; j < nsets; j++)
            for (int a = 0; a < sets[i]->n; a++)
                for (int b = 0; b < sets[j]->n; b++) {
                    const hx_range *x = &sets[i]->r[a], *y = &sets[j]->r[b];
                    if (x->access == HX_READ && y->access == HX_READ) continue; /* shared reads are fine */
                    uintptr_t x0 = (uintptr_t)x->ptr, x1 = x0 + x->bytes;
                    uintptr_t y0 = (uintptr_t)y->ptr, y1 = y0 + y->bytes;
                    hx_region rx = {x0, 1, x->bytes, x->bytes}, ry = {y0, 1, y->bytes, y->bytes};
                    if (hx_regions_overlap(&rx, &ry)) {
                        snprintf(err, errlen,
                                 "range conflict between task %s and task %s: %s %s [%#lx, %#lx) overlaps %s %s [%#lx, "
                                 "%#lx)",
                                 sets[i]->task, sets[j]->task, access_name(x->access), x->name, (unsigned long)x0,
                                 (unsigned long)x1, access_name(y->access), y->name, (unsigned long)y0,
                                 (unsigned long)y1);
                        return -1;
                    }
                }
    return 0;
}
