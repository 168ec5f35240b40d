/* Hexagon backends beside the portable interface in ../common/kernels.h.
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
#include "../common/kernels.h"

extern const hx_kernels hx_kernels_hvx;

/* The core clock against the QTimer (clock_qurt.c): cycles per us over about
 * 2 ms, and whether this thread's pcycles advanced meanwhile.  Returns 0, or
 * -1 with the reason in err (a QTimer that does not advance).
 * hx_qurt_clock_started records the start-up value (platform.h,
 * hx_clock_calibration_start). */
int hx_qurt_measure_clock(uint64_t *pcycles_per_us, int *thread_advances, char *err, size_t errlen);
void hx_qurt_clock_started(uint64_t pcycles_per_us);

/* User DMA (dma_hexagon.c).  Executes the chain with type-1 (2-D)
 * descriptors and waits for completion.  Returns 0; -1 if a link does not
 * fit the descriptor fields (row bytes or strides >= 65536), before anything
 * moved; -2 if the engine reported an error (it is reset before the next
 * copy); -3 if the reset on this thread (dmpause) did not leave it IDLE. */
int hx_dma_copy2d(const hx_copy_desc *chain);
/* Cleans D's DDR sources (links[0..n), every window) once, at set-up. */
void hx_dma_prepare_sources(const hx_copy_desc *links, size_t n);
const struct hx_dma_stats *hx_dma_stats_get(void);
/* D's DDR source cache policy of this build: "l2" or "bypass". */
const char *hx_dma_src_cache(void);

/* HMX GEMM through HexKL (kernels_hmx.c). */
size_t hx_hmx_u8i8_prep_bytes(int m, int n, int k);
void hx_hmx_u8i8_prepare(const uint8_t *A, const int8_t *B, int m, int n, int k, void *prep);
void hx_hmx_u8i8_run(const void *prep, int32_t *C, int m, int n, int k);
/* GEMM runs per engine (HMX, or HVX when a shape did not fit the HMX region
 * in a HX_ALLOW_FALLBACK=1 build) and the prepared mode. */
typedef struct hx_hmx_stats {
    uint64_t runs_hmx, runs_hvx;
    int prepared_hmx;           /* 1 HMX, 0 HVX */
    uint32_t padded_output;     /* C written through an mp x np staging buffer */
    uint32_t weights_resident;  /* weight tiles placed in VTCM at set-up */
    uint32_t tile_footprint;    /* bytes rm_to_wh_i8 writes per tile (probed) */
    uint64_t hvx_code_calls;    /* HexKL activation/read-out calls: HVX code on mx */
    uint64_t weight_copy_bytes; /* weights copied into VTCM inside runs */
} hx_hmx_stats;
const hx_hmx_stats *hx_hmx_stats_get(void);
long hx_hmx_weight_tile_footprint(void);

/* selftest_hvx.c: the HVX GEMM against the reference (a selftest step; the
 * caller holds an HVX context where the platform needs one). */
int hx_st_hvx_gemm(char *detail, size_t len);

/* kernels_device.c: the device kernels' part of the resources record. */
struct hx_json;
void hx_kernels_device_resources(struct hx_json *j);
unsigned hx_kernels_device_fallbacks(void);
/* device_fatal.c (its own unit: kernels_hmx.c needs it, and kernels_device.c
 * needs kernels_hmx.c).  Where a kernel cannot deliver what the run asked
 * for and no fallback is allowed: logs "hxrun: error: ..." (FARF and stderr)
 * and records it as the run's failure (platform.h, hx_failure_set).
 * Returns: it never ends the process from a worker; the caller returns at
 * once. */
void hx_device_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
