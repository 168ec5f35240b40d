/* The device's kernel table: HVX for V, HMX (HexKL) for M, user DMA for D.
 *
 * STATUS: written against the documented Hexagon SDK API, not yet run on
 * hardware.  Builds only with the SDK (TARGET=hexagon / hexagon-sim), with
 * kernels_hvx.c compiled with -DHX_HVX_NO_FAST_ENTRY.
 *
 *   HX_WITH_HEXKL=1 (set by targets/hexagon.mk when HEXKL_ROOT is given):
 *       M = kernels_hmx.c; otherwise M = the HVX GEMM (named "hvx-nohmx").
 *   D = dma_hexagon.c; a chain the descriptor fields cannot express falls
 *       back to the HVX row copy (counted by hx_dma_fallbacks()).
 *   fp32 = the scalar reference, as on every HVX build.
 */
#include "kernels_hexagon.h"

static unsigned dma_fallbacks;
unsigned hx_dma_fallbacks(void) { return dma_fallbacks; }

static void dev_copy2d(const hx_copy_desc *chain) {
    if (hx_dma_copy2d(chain) != 0) {
        dma_fallbacks++;
        hx_kernels_hvx.copy2d(chain);
    }
}

static hx_kernels table;
static int ready;

const hx_kernels *hx_kernels_fast(void) {
    if (!ready) {
        table = hx_kernels_hvx;
#if defined(HX_WITH_HEXKL) && HX_WITH_HEXKL
        table.name = "hmx+hvx+udma";
        table.gemm_u8i8_prep_bytes = hx_hmx_u8i8_prep_bytes;
        table.gemm_u8i8_prepare = hx_hmx_u8i8_prepare;
        table.gemm_u8i8_run = hx_hmx_u8i8_run;
#else
        table.name = "hvx-nohmx+udma";
#endif
        table.copy2d = dev_copy2d;
        ready = 1;
    }
    return &table;
}
