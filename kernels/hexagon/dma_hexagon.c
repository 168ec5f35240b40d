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
 * Each descriptor is handed to the engine with its own release (dma_plan.h,
 * hx_dma_submit): release(first):at + dmstart(first), then release(next):at +
 * dmlink(tail, next) for every next one, as llama.cpp's dma-queue.h
 * (dmstart / dmlink) and qualcomm/hexagon-mlir's UserDMAInstructions.h do;
 * the pool is reused chain after chain, so a descriptor the engine could see
 * before its stores would be the previous chain's.  The calling thread (the
 * runner's `dma` engine, the only thread that issues D) waits with dmwait;
 * every descriptor's dstate is checked afterwards.
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
 *   - dmpause on the issuing thread before its first copy and after an
 *     error, its status checked for IDLE (reset_here), so a failed chain
 *     cannot leave the engine in a state that breaks every later copy.
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
static hx_dma_src_clean sources_cleaned; /* D's sources, cleaned at set-up */

static void dma_start(hexagon_udma_descriptor_type1_t *first, void *ctx) {
    (void)ctx;
    __asm__ __volatile__("release(%0):at" : : "r"(first) : "memory");
    __asm__ __volatile__("dmstart(%0)" : : "r"(first) : "memory");
}

static void dma_link(hexagon_udma_descriptor_type1_t *tail, hexagon_udma_descriptor_type1_t *next, void *ctx) {
    (void)ctx;
    __asm__ __volatile__("release(%0):at" : : "r"(next) : "memory");
    __asm__ __volatile__("dmlink(%0, %1)" : : "r"(tail), "r"(next) : "memory");
}

static uint32_t hw_pause(void *ctx);
static hx_dma_reset reset; /* the thread whose dmpause read IDLE last */
static const hx_dma_hw hw = {dma_start, dma_link, hw_pause};

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

/* D's DDR source through L2 (0, default) or bypassing it (1): a build
 * option (make TARGET=hexagon HX_D_SRC_CACHE=l2|bypass), recorded in every
 * run's resources (udma.src_cache). */
#ifndef HX_D_SRC_BYPASS
#define HX_D_SRC_BYPASS 0
#endif
static const hx_dma_env env = {in_vtcm, clean, HX_D_SRC_BYPASS};
const char *hx_dma_src_cache(void) { return HX_D_SRC_BYPASS ? "bypass" : "l2"; }

void hx_dma_prepare_sources(const hx_copy_desc *links, size_t n) {
    hx_dma_clean_sources(links, n, &env, &sources_cleaned, &stats);
}

/* One planned batch on the engine: start, wait, every dstate checked. */
static int execute(hexagon_udma_descriptor_type1_t *d, int n, void *ctx) {
    hx_dma_submit(d, n, &hw, ctx);
    uint32_t st = dma_wait();
    int bad = (st & HEXAGON_UDMA_DM0_STATUS_ERROR) != 0;
    for (int i = 0; !bad && i < n; i++)
        if (d[i].dstate != HEXAGON_UDMA_DESC_DSTATE_COMPLETE) bad = 1;
    if (!bad) return 0;
    stats.errors++;
    stats.last_error_status = st;
    reset.by = 0; /* reset (and its IDLE check) before anyone issues again */
    return -2;
}

/* The engine is reset with dmpause on the thread that issues, its status
 * checked for IDLE (dma_plan.h, hx_dma_reset_here: TVM and hexagon-mlir
 * reset from the thread that then copies; which thread's reset reaches which
 * engine state is not documented publicly, so no thread relies on
 * another's).  A thread other than the last reset's resets again; so does
 * the next copy after an error. */
static uint32_t hw_pause(void *ctx) {
    (void)ctx;
    return dma_pause();
}
int hx_dma_copy2d(const hx_copy_desc *chain) {
    if (!hx_dma_chain_fits(chain)) return -1; /* refuse before moving any byte */
    if (hx_dma_reset_here(&reset, (unsigned)qurt_thread_get_id(), &hw, NULL, &stats) != 0) return -3;
    stats.chains++;
    return hx_dma_issue(chain, pool, HX_DMA_MAX_DESC, &env, &sources_cleaned, &stats, execute, NULL);
}

const hx_dma_stats *hx_dma_stats_get(void) { return &stats; }
