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
    uint64_t resets, reset_not_idle; /* dmpause resets, and those not IDLE after */
    uint32_t last_error_status;      /* DM0 status of the last error or failed reset */
} hx_dma_stats;

/* What the planner needs from the platform: whether a range is VTCM (not
 * cached: bypass on), and how to clean a DDR range out of the data caches
 * (invalidate = 0: write dirty lines back; 1: write back and drop). */
typedef struct hx_dma_env {
    int (*in_vtcm)(const void *p, size_t n);
    void (*clean)(const void *p, size_t n, int invalidate);
    /* D's DDR source policy: 0 read through L2 (the default), 1 bypass the
     * caches (streaming reads that do not evict M's and V's lines, as
     * llama.cpp's "nocache" DMA queue reads DDR: htp/dma-queue.h,
     * dma_queue_create_alias nocache).  Either way the source is cleaned
     * (written back) at set-up, so a bypassed read sees the cores' stores. */
    int src_bypass_ddr;
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

/* Fills pool[0..n) with the next descriptors of the chain (n <= max), each
 * with .next NULL (hx_dma_submit links them, one release per descriptor),
 * and advances the cursor; returns n (0 at the end).
 *   - bypass on for VTCM endpoints, and for DDR sources when
 *     env->src_bypass_ddr; DDR ranges are cleaned through
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

/* How descriptors reach the engine.  Every public user-DMA user hands each
 * descriptor over with its own release: dmstart on the first, dmlink onto
 * the chain's tail for each next one, each preceded by release(desc):at on
 * the descriptor it hands over (llama.cpp ggml/src/ggml-hexagon/htp/
 * dma-queue.h, dmstart / dmlink; qualcomm/hexagon-mlir
 * bin/runtime/UserDMA/UserDMAInstructions.h; Apache TVM
 * src/runtime/hexagon/hexagon_user_dma.cc links with dmlink too).  A chain
 * pre-linked by plain stores and released once at its head leaves the engine
 * free to read a later descriptor before its stores reach it: with one pool
 * reused chain after chain, that is a stale descriptor of the previous
 * chain (a silent wrong copy, an early stop or a fault).
 *   start(first): release(first):at; dmstart(first)
 *   link(tail, next): release(next):at; dmlink(tail, next)
 * dma_hexagon.c issues the instructions; tests and the ladder's dma_model
 * step use the engine-view model below. */
typedef struct hx_dma_hw {
    void (*start)(hexagon_udma_descriptor_type1_t *first, void *ctx);
    void (*link)(hexagon_udma_descriptor_type1_t *tail, hexagon_udma_descriptor_type1_t *next, void *ctx);
    uint32_t (*pause)(void *ctx); /* dmpause: stops and resets the engine, returns its DM0 status */
} hx_dma_hw;

/* The engine reset before a thread's first copy and after an error: dmpause
 * on the issuing thread, its status IDLE or the copy is refused (Apache TVM
 * src/runtime/hexagon/hexagon_user_dma.cc, init_hexagon_user_dma;
 * qualcomm/hexagon-mlir bin/runtime/UserDMA/UserDMA.cc, UserDMA::init).
 * `by` is the thread whose reset read IDLE last (0: none, or an error since);
 * self is the calling thread's id.  Returns 0, or -3 (not IDLE; counted in
 * st->reset_not_idle, status in st->last_error_status). */
typedef struct hx_dma_reset {
    unsigned by;
} hx_dma_reset;
int hx_dma_reset_here(hx_dma_reset *r, unsigned self, const hx_dma_hw *hw, void *ctx, hx_dma_stats *st);
/* Hands d[0..n) to the engine: start(d[0]), then link(d[i-1], d[i]). */
void hx_dma_submit(hexagon_udma_descriptor_type1_t *d, int n, const hx_dma_hw *hw, void *ctx);

/* A software model of what the engine sees: only a descriptor's contents as
 * of its last release (a snapshot per pool slot, kept from chain to chain, as
 * stale memory would be), chained by dmstart/dmlink.  hx_dma_model_run then
 * executes the chain from the started descriptor in the engine's view, writes
 * each descriptor's dstate back as the engine does, and returns 0, or -2 with
 * the reason in m->why (a descriptor never released, a link outside the
 * pool, a chain longer than the pool). */
#define HX_DMA_MODEL_MAX 256
typedef struct hx_dma_model {
    hexagon_udma_descriptor_type1_t *pool;
    int max;
    hexagon_udma_descriptor_type1_t seen[HX_DMA_MODEL_MAX];
    unsigned char released[HX_DMA_MODEL_MAX];
    int head;
    uint32_t pause_status; /* what the next dmpause reads (tests plant a busy engine) */
    int pauses;
    char why[160];
} hx_dma_model;
void hx_dma_model_init(hx_dma_model *m, hexagon_udma_descriptor_type1_t *pool, int max);
extern const hx_dma_hw hx_dma_model_hw; /* ctx: the hx_dma_model; pause returns m->pause_status */
int hx_dma_model_run(hx_dma_model *m);

/* Executes one batch of n planned descriptors (hx_dma_submit + dmwait +
 * dstate on the device, the model in tests); returns 0, or -2 on an engine
 * error. */
typedef int (*hx_dma_execute_fn)(hexagon_udma_descriptor_type1_t *pool, int n, void *ctx);

/* Plans and executes a whole chain in batches of at most max descriptors.
 * A chain's sources are cleaned unless all of them lie in the range cleaned
 * at set-up (cs): a chain nobody prepared is still correct, only slower.
 * Returns 0, or the first non-zero result of execute. */
int hx_dma_issue(const hx_copy_desc *chain, hexagon_udma_descriptor_type1_t *pool, int max, const hx_dma_env *env,
                 hx_dma_src_clean *cs, hx_dma_stats *st, hx_dma_execute_fn execute, void *ctx);
#endif
