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
#include "../common/kernels.h"

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

/* The DDR source range cleaned once at set-up (hx_dma_clean_sources). */
typedef struct hx_dma_src_clean {
    uintptr_t lo, hi;
} hx_dma_src_clean;

/* Cleans the DDR sources of links[0..n) (D's whole descriptor array: every
 * window of every buffer, linked or not) as one range and records it.  D's
 * sources are written only at set-up, so after this no timed copy needs to
 * clean them again. */
void hx_dma_clean_sources(const hx_copy_desc *links, size_t n, const hx_dma_env *env, hx_dma_src_clean *cs,
                          hx_dma_stats *st);

/* Executes one batch of n planned descriptors (dmstart + dmwait + dstate on
 * the device, a software model in tests); returns 0, or -2 on an engine error. */
typedef int (*hx_dma_execute_fn)(hexagon_udma_descriptor_type1_t *pool, int n, void *ctx);

/* Plans and executes a whole chain in batches of at most max descriptors.
 * A chain's sources are cleaned unless all of them lie in the range cleaned
 * at set-up (cs): a chain nobody prepared is still correct, only slower.
 * Returns 0, or the first non-zero result of execute. */
int hx_dma_issue(const hx_copy_desc *chain, hexagon_udma_descriptor_type1_t *pool, int max, const hx_dma_env *env,
                 hx_dma_src_clean *cs, hx_dma_stats *st, hx_dma_execute_fn execute, void *ctx);
#endif
