/* Building user-DMA descriptors for a copy chain (dma_plan.c).
 *
 * Kept apart from the code that issues them (dma_hexagon.c, device only) so
 * that the descriptors can be built and checked anywhere hexagon_types.h
 * compiles: test_dma_plan.c builds them under qemu-hexagon, executes them
 * with a software model of the type-1 transfer and compares the result with
 * the reference copy. */
#ifndef HX_DMA_PLAN_H
#define HX_DMA_PLAN_H
#include <stddef.h>
#include <stdint.h>
#include <hexagon_types.h>
#include "../src/kernels.h"

/* Type-1 descriptor fields are 16 bits wide. */
#define HX_DMA_FIELD_MAX 65535u

typedef struct hx_dma_stats {
    uint64_t chains, descriptors, ordered, bytes, cache_clean_bytes, errors;
} hx_dma_stats;

/* What the planner needs from the platform: whether a range is VTCM (not
 * cached: bypass on), and how to clean a DDR range out of the data caches
 * (invalidate = 0: write dirty lines back; 1: write back and drop). */
typedef struct hx_dma_env {
    int (*in_vtcm)(const void *p, size_t n);
    void (*clean)(const void *p, size_t n, int invalidate);
} hx_dma_env;

/* 1 if every link fits the descriptor fields (row bytes and strides at most
 * HX_DMA_FIELD_MAX), else 0: such a chain is refused before anything moves. */
int hx_dma_chain_fits(const hx_copy_desc *chain);

/* Where the planner is in a chain: the link and the rows of it already
 * planned (links with more than HX_DMA_FIELD_MAX rows are split). */
typedef struct hx_dma_cursor {
    const hx_copy_desc *link;
    uint32_t row;
} hx_dma_cursor;

/* Fills pool[0..n) with the next descriptors of the chain (n <= max), linked
 * through .next, and advances the cursor; returns n (0 at the end).
 *   - bypass on only for VTCM endpoints; DDR ranges are cleaned through
 *     env->clean first (sources only when clean_src; destinations always);
 *   - ORDER on a descriptor whose destination overlaps the envelope of the
 *     earlier destinations in this batch (the last write must win);
 *   - counts descriptors, ordered descriptors, bytes and cleaned bytes in st. */
int hx_dma_plan(hx_dma_cursor *cur, hexagon_udma_descriptor_type1_t *pool, int max, const hx_dma_env *env,
                int clean_src, hx_dma_stats *st);
#endif
