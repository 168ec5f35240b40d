/* D on the Hexagon user DMA engine (UDMA), type-1 (2-D) descriptors.
 *
 * STATUS: written against the documented Hexagon SDK / hexagon_types.h API,
 * compile-checked for v73 with the open toolchain (make sdk-check), not yet
 * run on a simulator or phone (QEMU has no user DMA).
 *
 * One hx_copy_desc link (rows x row_bytes, src/dst strides) maps onto one
 * type-1 descriptor: roiwidth = row_bytes, roiheight = rows, srcstride,
 * dststride (built by dma_plan.c, tested under qemu-hexagon).  The fields
 * are 16 bits wide: links with more than 65535 rows are split; links whose
 * row_bytes or strides do not fit are refused (-1) before anything moves.
 * The chain is started with dmstart on its first descriptor and the calling
 * thread (the runner's `dma` engine, the only thread that issues D) waits
 * with dmwait; every descriptor's dstate is checked afterwards.
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
 *     set-up, so D's sources (every window of every buffer) are cleaned once
 *     there (hx_dma_prepare_sources), never inside a timed D task; a chain
 *     whose sources were not prepared is cleaned each time it is issued; a
 *     DDR destination (only in a HX_ALLOW_FALLBACK=1 build) every time;
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
#include "dma_plan.h"
#include "kernels_hexagon.h"
#include "vtcm_qurt.h"

#if !defined(__HEXAGON_ARCH__) || __HEXAGON_ARCH__ < 68
#error "dma_hexagon.c needs user DMA (Hexagon v68 or later)"
#endif

#ifndef HX_DMA_MAX_DESC
#define HX_DMA_MAX_DESC 256
#endif

/* Type-1 descriptors are 32 bytes and must be 32-byte aligned.  One pool:
 * only the `dma` engine thread issues D, so copies never interleave. */
static hexagon_udma_descriptor_type1_t pool[HX_DMA_MAX_DESC] __attribute__((aligned(32)));
static hx_dma_stats stats;
static int engine_reset;
static hx_dma_src_clean sources_cleaned; /* D's sources, cleaned at set-up */

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

static void clean(const void *p, size_t n, int invalidate) {
    if (!n) return;
    qurt_mem_cache_clean((qurt_addr_t)(uintptr_t)p, (qurt_size_t)n,
                         invalidate ? QURT_MEM_CACHE_FLUSH_INVALIDATE : QURT_MEM_CACHE_FLUSH, QURT_MEM_DCACHE);
}

static const hx_dma_env env = {in_vtcm, clean};

void hx_dma_prepare_sources(const hx_copy_desc *links, size_t n) {
    hx_dma_clean_sources(links, n, &env, &sources_cleaned, &stats);
}

/* One planned batch on the engine: start, wait, every dstate checked. */
static int execute(hexagon_udma_descriptor_type1_t *d, int n, void *ctx) {
    (void)ctx;
    dma_start(&d[0]);
    uint32_t st = dma_wait();
    int bad = (st & HEXAGON_UDMA_DM0_STATUS_ERROR) != 0;
    for (int i = 0; !bad && i < n; i++)
        if (d[i].dstate != HEXAGON_UDMA_DESC_DSTATE_COMPLETE) bad = 1;
    if (!bad) return 0;
    stats.errors++;
    dma_pause(); /* reset before anyone issues again */
    return -2;
}

int hx_dma_copy2d(const hx_copy_desc *chain) {
    if (!hx_dma_chain_fits(chain)) return -1; /* refuse before moving any byte */
    if (!engine_reset) {
        dma_pause();
        engine_reset = 1;
    }
    stats.chains++;
    return hx_dma_issue(chain, pool, HX_DMA_MAX_DESC, &env, &sources_cleaned, &stats, execute, NULL);
}

const hx_dma_stats *hx_dma_stats_get(void) { return &stats; }
