/* D on the Hexagon user DMA engine (UDMA), type-1 (2-D) descriptors.
 *
 * STATUS: written against the documented Hexagon SDK / hexagon_types.h API,
 * not yet run on hardware.  It compiles with the open toolchain for v68+
 * (see README.md), but QEMU (v67 only) cannot execute dm* instructions.
 *
 * One hx_copy_desc link (rows x row_bytes, src/dst strides) maps onto one
 * type-1 descriptor: roiwidth = row_bytes, roiheight = rows, srcstride,
 * dststride.  The descriptor fields are 16 bits wide, so links with more
 * than 65535 rows are split, and links whose row_bytes or strides do not fit
 * are refused (-1) so that the caller falls back to the HVX copy and records
 * why.  The chain is started with dmstart on the first descriptor and the
 * calling thread (the runner's `dma` engine) waits with dmwait, which
 * returns when every descriptor of this thread's chain has completed; the
 * per-descriptor dstate bit is checked afterwards.
 */
#include <stdint.h>
#include <string.h>
#include <hexagon_types.h>
#include <hexagon_protos.h>
#include "kernels_hexagon.h"

#if !defined(__HEXAGON_ARCH__) || __HEXAGON_ARCH__ < 68
#error "dma_hexagon.c needs user DMA (Hexagon v68 or later)"
#endif

#ifndef HX_DMA_MAX_DESC
#define HX_DMA_MAX_DESC 256
#endif
#define HX_DMA_FIELD_MAX 65535u

/* Type-1 descriptors are 32 bytes and must be 32-byte aligned.  One pool:
 * the runner issues D from its single `dma` engine thread only (group A's
 * serial path runs D on that thread too), so copies never interleave. */
static hexagon_udma_descriptor_type1_t pool[HX_DMA_MAX_DESC] __attribute__((aligned(32)));

static inline void dma_start(void *first) {
    /* Descriptor stores must be visible to the engine before dmstart. */
    __asm__ __volatile__("barrier" ::: "memory");
    __asm__ __volatile__("dmstart(%0)" : : "r"(first) : "memory");
}

static inline uint32_t dma_wait(void) {
    uint32_t st;
    __asm__ __volatile__("%0 = dmwait" : "=r"(st) : : "memory");
    return st;
}

static void fill(hexagon_udma_descriptor_type1_t *d, const uint8_t *src, uint8_t *dst,
                 uint32_t rows, uint32_t width, uint32_t sstride, uint32_t dstride) {
    memset(d, 0, sizeof *d);
    d->next = NULL;
    d->length = 0; /* unused by type 1 */
    d->desctype = HEXAGON_UDMA_DESC_DESCTYPE_TYPE1;
    d->dstcomp = HEXAGON_UDMA_DESC_COMP_NONE;
    d->srccomp = HEXAGON_UDMA_DESC_COMP_NONE;
    /* Source in DDR: keep it out of L2 (streamed once); destination is the
     * VTCM arena, which is not cached anyway. */
    d->srcbypass = HEXAGON_UDMA_DESC_BYPASS_ON;
    d->dstbypass = HEXAGON_UDMA_DESC_BYPASS_ON;
    d->order = HEXAGON_UDMA_DESC_ORDER_NOORDER;
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

int hx_dma_copy2d(const hx_copy_desc *chain) {
    /* Check the whole chain first: refuse before moving any byte. */
    for (const hx_copy_desc *c = chain; c; c = c->next)
        if (c->row_bytes > HX_DMA_FIELD_MAX || c->src_stride > HX_DMA_FIELD_MAX ||
            c->dst_stride > HX_DMA_FIELD_MAX)
            return -1;
    const hx_copy_desc *c = chain;
    uint32_t row = 0; /* rows of *c already issued */
    while (c) {
        int n = 0;
        while (c && n < HX_DMA_MAX_DESC) {
            if (c->rows == 0 || c->row_bytes == 0) {
                c = c->next;
                row = 0;
                continue;
            }
            uint32_t left = c->rows - row, take = left > HX_DMA_FIELD_MAX ? HX_DMA_FIELD_MAX : left;
            fill(&pool[n], c->src + (size_t)row * c->src_stride, c->dst + (size_t)row * c->dst_stride,
                 take, c->row_bytes, c->src_stride, c->dst_stride);
            if (n > 0) pool[n - 1].next = &pool[n];
            n++;
            row += take;
            if (row == c->rows) {
                c = c->next;
                row = 0;
            }
        }
        if (n == 0) break;
        dma_start(&pool[0]);
        uint32_t st = dma_wait();
        if (st & HEXAGON_UDMA_DM0_STATUS_ERROR) return -2;
        for (int i = 0; i < n; i++)
            if (pool[i].dstate != HEXAGON_UDMA_DESC_DSTATE_COMPLETE) return -2;
    }
    return 0;
}
