/* D on the Hexagon user DMA engine (UDMA), type-1 (2-D) descriptors.
 *
 * STATUS: written against the documented Hexagon SDK / hexagon_types.h API,
 * compile-checked for v73 with the open toolchain (make sdk-check), not yet
 * run on a simulator or phone (QEMU has no user DMA).
 *
 * One hx_copy_desc link (rows x row_bytes, src/dst strides) maps onto one
 * type-1 descriptor: roiwidth = row_bytes, roiheight = rows, srcstride,
 * dststride.  The fields are 16 bits wide: links with more than 65535 rows
 * are split; links whose row_bytes or strides do not fit are refused (-1)
 * before anything moves.  The chain is started with dmstart on its first
 * descriptor and the calling thread (the runner's `dma` engine, the only
 * thread that issues D) waits with dmwait; every descriptor's dstate is
 * checked afterwards.
 *
 * Correctness rules taken from public user-DMA code (Qualcomm's hexagon-mlir
 * UserDMA, Apache TVM's Hexagon runtime, llama.cpp's HTP DMA queue):
 *   - release(desc):at before dmstart, so the engine sees the descriptor
 *     stores (what Qualcomm's own wrappers do);
 *   - cache bypass only for VTCM endpoints (VTCM is not cached).  A DDR
 *     endpoint goes through L2, and its range is cleaned first: the source
 *     was written by the cores at set-up and the destination was poisoned by
 *     them before the trial, so a dirty line could otherwise be read stale or
 *     be written back over the copy later.  Sources are written only at
 *     set-up, so a chain's sources are cleaned the first time it is issued;
 *     a DDR destination (only in a HX_ALLOW_FALLBACK=1 build) every time;
 *   - ORDER on a descriptor whose destination may overlap an earlier one in
 *     the chain (D streams --d-repeat windows through the same scratch rows
 *     and the last window must win); NOORDER otherwise;
 *   - dmpause at first use and after an error, so a failed chain cannot
 *     leave the engine in a state that breaks every later copy.
 */
#include <stdint.h>
#include <string.h>
#include <hexagon_types.h>
#include <qurt.h>
#include "kernels_hexagon.h"
#include "vtcm_qurt.h"

#if !defined(__HEXAGON_ARCH__) || __HEXAGON_ARCH__ < 68
#error "dma_hexagon.c needs user DMA (Hexagon v68 or later)"
#endif

#ifndef HX_DMA_MAX_DESC
#define HX_DMA_MAX_DESC 256
#endif
#define HX_DMA_FIELD_MAX 65535u

/* Type-1 descriptors are 32 bytes and must be 32-byte aligned.  One pool:
 * only the `dma` engine thread issues D, so copies never interleave. */
static hexagon_udma_descriptor_type1_t pool[HX_DMA_MAX_DESC] __attribute__((aligned(32)));
static hx_dma_stats stats;
static int engine_reset;
static const hx_copy_desc *sources_cleaned; /* the chain whose sources are clean */

static inline void dma_start(void *first) {
    __asm__ __volatile__("release(%0):at" : : "r"(first) : "memory");
    __asm__ __volatile__("dmstart(%0)" : : "r"(first) : "memory");
}

static inline uint32_t dma_wait(void) {
    uint32_t st;
    __asm__ __volatile__("%0 = dmwait" : "=r"(st) : : "memory");
    return st;
}

static inline uint32_t dma_pause(void) {
    uint32_t st;
    __asm__ __volatile__("%0 = dmpause" : "=r"(st) : : "memory");
    return st;
}

static int in_vtcm(const void *p, size_t n) {
    size_t a = 0, h = 0;
    const uint8_t *base = hx_vtcm_arena(&a), *q = (const uint8_t *)p;
    if (!base) return 0;
    hx_vtcm_hmx_region(&h);
    return q >= base && q + n <= base + a + h;
}

/* Cleans a DDR range out of the data caches: FLUSH writes dirty lines back
 * (source), FLUSH_INVALIDATE also drops them (destination). */
static void clean(const void *p, size_t n, int invalidate) {
    if (!n) return;
    qurt_mem_cache_clean((qurt_addr_t)(uintptr_t)p, (qurt_size_t)n,
                         invalidate ? QURT_MEM_CACHE_FLUSH_INVALIDATE : QURT_MEM_CACHE_FLUSH, QURT_MEM_DCACHE);
    stats.cache_clean_bytes += n;
}

static void fill(hexagon_udma_descriptor_type1_t *d, const uint8_t *src, uint8_t *dst, uint32_t rows,
                 uint32_t width, uint32_t sstride, uint32_t dstride, int src_vtcm, int dst_vtcm, int ordered) {
    memset(d, 0, sizeof *d);
    d->next = NULL;
    d->length = 0; /* unused by type 1 */
    d->desctype = HEXAGON_UDMA_DESC_DESCTYPE_TYPE1;
    d->dstcomp = HEXAGON_UDMA_DESC_COMP_NONE;
    d->srccomp = HEXAGON_UDMA_DESC_COMP_NONE;
    d->srcbypass = src_vtcm ? HEXAGON_UDMA_DESC_BYPASS_ON : HEXAGON_UDMA_DESC_BYPASS_OFF;
    d->dstbypass = dst_vtcm ? HEXAGON_UDMA_DESC_BYPASS_ON : HEXAGON_UDMA_DESC_BYPASS_OFF;
    d->order = ordered ? HEXAGON_UDMA_DESC_ORDER_ORDER : HEXAGON_UDMA_DESC_ORDER_NOORDER;
    d->dstate = HEXAGON_UDMA_DESC_DSTATE_INCOMPLETE;
    d->src = (void *)src;
    d->dst = (void *)dst;
    d->allocation = 0;
    d->padding = 0;
    d->roiwidth = width;
    d->roiheight = rows;
    d->srcstride = sstride;
    d->dststride = dstride;
    d->srcwidthoffset = 0;
    d->dstwidthoffset = 0;
}

static size_t span(uint32_t rows, uint32_t width, uint32_t stride) {
    return rows ? (size_t)(rows - 1) * stride + width : 0;
}

int hx_dma_copy2d(const hx_copy_desc *chain) {
    /* Check the whole chain first: refuse before moving any byte. */
    for (const hx_copy_desc *c = chain; c; c = c->next)
        if (c->row_bytes > HX_DMA_FIELD_MAX || c->src_stride > HX_DMA_FIELD_MAX ||
            c->dst_stride > HX_DMA_FIELD_MAX)
            return -1;
    if (!engine_reset) {
        dma_pause();
        engine_reset = 1;
    }
    stats.chains++;
    int clean_src = chain != sources_cleaned;
    const hx_copy_desc *c = chain;
    uint32_t row = 0; /* rows of *c already issued */
    while (c) {
        int n = 0;
        uintptr_t lo = UINTPTR_MAX, hi = 0; /* destination envelope of this batch */
        while (c && n < HX_DMA_MAX_DESC) {
            if (c->rows == 0 || c->row_bytes == 0) {
                c = c->next;
                row = 0;
                continue;
            }
            uint32_t left = c->rows - row, take = left > HX_DMA_FIELD_MAX ? HX_DMA_FIELD_MAX : left;
            const uint8_t *src = c->src + (size_t)row * c->src_stride;
            uint8_t *dst = c->dst + (size_t)row * c->dst_stride;
            size_t ssp = span(take, c->row_bytes, c->src_stride), dsp = span(take, c->row_bytes, c->dst_stride);
            int sv = in_vtcm(src, ssp), dv = in_vtcm(dst, dsp);
            if (!sv && clean_src) clean(src, ssp, 0);
            if (!dv) clean(dst, dsp, 1);
            uintptr_t d0 = (uintptr_t)dst, d1 = d0 + dsp;
            int ordered = n > 0 && d0 < hi && d1 > lo;
            if (ordered) stats.ordered++;
            if (d0 < lo) lo = d0;
            if (d1 > hi) hi = d1;
            fill(&pool[n], src, dst, take, c->row_bytes, c->src_stride, c->dst_stride, sv, dv, ordered);
            if (n > 0) pool[n - 1].next = &pool[n];
            n++;
            stats.bytes += (uint64_t)take * c->row_bytes;
            row += take;
            if (row == c->rows) {
                c = c->next;
                row = 0;
            }
        }
        if (n == 0) break;
        stats.descriptors += (uint64_t)n;
        dma_start(&pool[0]);
        uint32_t st = dma_wait();
        int bad = (st & HEXAGON_UDMA_DM0_STATUS_ERROR) != 0;
        for (int i = 0; !bad && i < n; i++)
            if (pool[i].dstate != HEXAGON_UDMA_DESC_DSTATE_COMPLETE) bad = 1;
        if (bad) {
            stats.errors++;
            dma_pause(); /* reset before anyone issues again */
            return -2;
        }
    }
    sources_cleaned = chain;
    return 0;
}

const hx_dma_stats *hx_dma_stats_get(void) { return &stats; }
