/* The device's kernel table: HVX for V, HMX (HexKL) for M, user DMA for D.
 *
 * STATUS: written against the documented Hexagon SDK API, compile-checked
 * with the open toolchain (make sdk-check), not yet run on a simulator or
 * phone.  kernels_hvx.c is compiled with -DHX_HVX_NO_FAST_ENTRY here.
 *
 *   HX_WITH_HEXKL=1 (targets/hexagon.mk, when HEXKL_ROOT is given):
 *       M = kernels_hmx.c; otherwise M = the HVX GEMM ("hvx-nohmx").
 *   D = dma_hexagon.c.  A chain the engine cannot run is an error that ends
 *       the run, unless the build allows fallbacks (HX_ALLOW_FALLBACK=1):
 *       then the copy is done by the scalar reference on the dma thread
 *       (it holds no HVX context) and counted in the resources record.
 *   fp32 = the scalar reference, as on every HVX build.
 */
#include <stdio.h>
#include <stdlib.h>
#include "../common/platform.h"
#include "../common/json.h"
#include "dma_plan.h"
#include "kernels_hexagon.h"
#include "vtcm_qurt.h"

static unsigned dma_fallbacks, dma_refused;
unsigned hx_kernels_device_fallbacks(void) { return dma_fallbacks; }

static void dev_copy2d(const hx_copy_desc *chain) {
    if (hx_failure()) return; /* the run has failed already (reported): issue nothing more */
    int rc = hx_dma_copy2d(chain);
    if (rc == 0) return;
    if (rc == -1) dma_refused++;
    if (!HX_ALLOW_FALLBACK) {
        hx_device_fatal("D: user DMA %s (build with HX_ALLOW_FALLBACK=1 to copy with the cores instead, counted)",
                        rc == -1   ? "cannot express this chain: a row or stride is 65536 bytes or more "
                                     "(type-1 descriptor fields are 16 bits); use --d-shape/--d-src-stride below 65536"
                        : rc == -3 ? "engine not IDLE after its reset (dmpause) on the dma thread"
                                   : "reported an error (dmwait status or a descriptor left incomplete)");
        return;
    }
    dma_fallbacks++;
    hx_kernels_ref.copy2d(chain);
}

void hx_kernels_device_resources(hx_json *j) {
#if HX_HMX_BUILD
    const hx_hmx_stats *h = hx_hmx_stats_get();
    hx_json_obj(j, "hmx");
    hx_json_str(j, "prepared", h->prepared_hmx ? "hmx" : "hvx");
    hx_json_obj(j, "gemm_runs");
    hx_json_u64(j, "hmx", h->runs_hmx);
    hx_json_u64(j, "hvx", h->runs_hvx);
    hx_json_close(j, '}');
    hx_json_bool(j, "padded_output", h->padded_output);
    hx_json_bool(j, "weights_resident", h->weights_resident);
    hx_json_u64(j, "weight_copy_bytes", h->weight_copy_bytes);
    hx_json_u64(j, "tile_footprint_bytes", h->tile_footprint);
    /* M is not HMX-only: HexKL's activation layout and read-out are HVX code */
    hx_json_u64(j, "hvx_code_calls", h->hvx_code_calls);
    hx_json_close(j, '}');
#else
    hx_json_null(j, "hmx");
#endif
    const hx_dma_stats *d = hx_dma_stats_get();
    hx_json_obj(j, "udma");
    hx_json_str(j, "src_cache", hx_dma_src_cache()); /* D's DDR source: through L2, or bypassing it */
    hx_json_u64(j, "chains", d->chains);
    hx_json_u64(j, "descriptors", d->descriptors);
    hx_json_u64(j, "ordered_descriptors", d->ordered);
    hx_json_u64(j, "bytes", d->bytes);
    hx_json_u64(j, "cache_clean_bytes", d->cache_clean_bytes);
    hx_json_u64(j, "errors", d->errors);
    hx_json_u64(j, "resets", d->resets);
    hx_json_u64(j, "resets_not_idle", d->reset_not_idle);
    hx_json_u64(j, "last_error_status", d->last_error_status);
    hx_json_u64(j, "refused_chains", dma_refused);
    hx_json_u64(j, "fallbacks", dma_fallbacks);
    hx_json_close(j, '}');
}

static hx_kernels table;
static int ready;

const hx_kernels *hx_kernels_fast(void) {
    if (!ready) {
        table = hx_kernels_hvx;
#if HX_HMX_BUILD
        table.name = "hmx+hvx+udma";
        table.gemm_u8i8_prep_bytes = hx_hmx_u8i8_prep_bytes;
        table.gemm_u8i8_prepare = hx_hmx_u8i8_prepare;
        table.gemm_u8i8_run = hx_hmx_u8i8_run;
        /* The HMX layout is not HVX's, and one HMX run holds the HMX lock and
         * stages C: no row-range entry, so M runs as one block (its
         * checkpoints are only its begin and end). */
        table.gemm_u8i8_run_rows = NULL;
#else
        table.name = "hvx-nohmx+udma";
#endif
        table.copy2d = dev_copy2d;
        table.copy2d_prepare = hx_dma_prepare_sources;
        ready = 1;
    }
    return &table;
}
