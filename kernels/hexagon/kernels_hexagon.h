/* Hexagon backends beside the portable interface in ../src/kernels.h.
 *
 *   hx_kernels_hvx   kernels_hvx.c: HVX integer kernels (open toolchain and
 *                    SDK; verified under qemu-hexagon by test_hvx.c).
 *   hx_hmx_*         kernels_hmx.c: M on HMX through HexKL (SDK + HexKL only).
 *   hx_dma_copy2d    dma_hexagon.c: D on the user DMA engine (v68+ device).
 *
 * The device build links kernels_device.c, which composes these into the
 * hx_kernels_fast() table; the QEMU build uses hx_kernels_hvx directly. */
#ifndef HX_KERNELS_HEXAGON_H
#define HX_KERNELS_HEXAGON_H
#include "../src/kernels.h"

extern const hx_kernels hx_kernels_hvx;

/* User DMA (dma_hexagon.c).  Executes the chain with type-1 (2-D)
 * descriptors and waits for completion.  Returns 0, or -1 if a link does not
 * fit the descriptor fields (row bytes or strides >= 65536); the caller
 * then falls back to hx_kernels_hvx.copy2d. */
int hx_dma_copy2d(const hx_copy_desc *chain);

/* HMX GEMM through HexKL (kernels_hmx.c). */
size_t hx_hmx_u8i8_prep_bytes(int m, int n, int k);
void hx_hmx_u8i8_prepare(const uint8_t *A, const int8_t *B, int m, int n, int k, void *prep);
void hx_hmx_u8i8_run(const void *prep, int32_t *C, int m, int n, int k);
/* 1: the last run used HMX, 2: the shape did not fit the HMX VTCM region
 * and ran on HVX; last HexKL status (0 = AEE_SUCCESS). */
int hx_hmx_last_mode(void);
int hx_hmx_last_error(void);
#endif
