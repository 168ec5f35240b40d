/* Kernel interface.  One table per backend: kernels_ref.c (portable scalar
 * reference, always linked), the host kernels (kernels_host*.c: GCC/Clang
 * vector extensions, and on x86-64 AVX2 / AVX-512 variants chosen at run
 * time) and hexagon/kernels_hvx.c (HVX intrinsics).  The build
 * links exactly one non-reference backend, which defines hx_kernels_fast().
 *
 * Every backend must produce bit-identical results to the reference for the
 * integer kernels; fp32 GEMM and fp32 activation may differ in rounding only
 * (tolerance documented in docs/runner.md). */
#ifndef HX_KERNELS_H
#define HX_KERNELS_H
#include <stddef.h>
#include <stdint.h>

/* One link of a 2-D DMA descriptor chain (mirrors a Hexagon type-1 descriptor:
 * roi width = row_bytes, roi height = rows, src/dst strides). */
typedef struct hx_copy_desc {
    const uint8_t *src;
    uint8_t *dst;
    uint32_t rows;
    uint32_t row_bytes;
    uint32_t src_stride;
    uint32_t dst_stride;
    struct hx_copy_desc *next;
} hx_copy_desc;

typedef struct hx_kernels {
    const char *name;
    /* How the backend was chosen where a build holds several (the host's
     * per-ISA variants: "auto" or the forcing setting); NULL otherwise. */
    const char *choice;

    /* M: GEMM C[m][n] = A[m][k] * B[k][n], row-major logical layout.
     * prepare() converts A and B to the backend's own layout ("prepared
     * layout"); it runs before timing and is timed separately.  run() reads
     * only the prepared buffer and writes C. */
    size_t (*gemm_f32_prep_bytes)(int m, int n, int k);
    void (*gemm_f32_prepare)(const float *A, const float *B, int m, int n, int k, void *prep);
    void (*gemm_f32_run)(const void *prep, float *C, int m, int n, int k);

    /* u8 x i8 -> i32, exact (the HMX/HVX integer format). */
    size_t (*gemm_u8i8_prep_bytes)(int m, int n, int k);
    void (*gemm_u8i8_prepare)(const uint8_t *A, const int8_t *B, int m, int n, int k, void *prep);
    void (*gemm_u8i8_run)(const void *prep, int32_t *C, int m, int n, int k);
    /* Optional (NULL: the backend's blocking is fixed and --m-tile is
     * rejected): the same GEMMs with the k-block depth kc as a parameter
     * (kc a multiple of 8).  run() is the kc = HX_M_TILE_DEFAULT case. */
    void (*gemm_f32_run_kc)(const void *prep, float *C, int m, int n, int k, int kc);
    void (*gemm_u8i8_run_kc)(const void *prep, int32_t *C, int m, int n, int k, int kc);
    /* Optional (NULL: M runs as one block and records no inner checkpoint):
     * rows [r0, r1) of C only, from the whole problem's prepared layout, with
     * each element computed exactly as run_kc (or run) computes it, so that
     * the task can run the GEMM block by block and time-stamp each block
     * (its progress checkpoints) without knowing the layout.  r0 and r1 are
     * multiples of gemm_rows_align (r1 may also be m); kc <= 0 is the
     * backend's default blocking, and a backend without run_kc ignores it. */
    void (*gemm_f32_run_rows)(const void *prep, float *C, int m, int n, int k, int kc, int r0, int r1);
    void (*gemm_u8i8_run_rows)(const void *prep, int32_t *C, int m, int n, int k, int kc, int r0, int r1);
    int gemm_rows_align; /* row granularity of the run_rows entries (its panel height) */

    /* V: y = act^passes(x) elementwise, then per-row reduction of y, for rows
     * [r0, r1) of a rows x cols row-major array (workers split rows).
     * fp32: act = SiLU, x / (1 + exp(-x)); rowsum = sum of y, rowmax = max of y.
     * i16:  act(x) = (x * clamp(x + 4096, 0, 8192)) >> 13 (arithmetic shift,
     *       hard-swish in Q13), rowsum = int32 sum with wrap-around, rowmax = max. */
    void (*vec_f32)(const float *x, float *y, float *rowsum, float *rowmax, int cols, int passes, int r0, int r1);
    void (*vec_i16)(const int16_t *x, int16_t *y, int32_t *rowsum, int16_t *rowmax, int cols, int passes, int r0,
                    int r1);
    /* V, stream variant, fp32: the same rows and reductions with a cheap
     * activation, hard-swish act(x) = x * min(max(x + 3, 0), 6) * (1/6) (two
     * multiplies, no exp, no division), so the task is bound by memory
     * traffic, not arithmetic.  Optional: NULL uses the reference's. */
    void (*vec_stream_f32)(const float *x, float *y, float *rowsum, float *rowmax, int cols, int passes, int r0,
                           int r1);

    /* D: execute a descriptor chain (memory-to-memory, rows in order). */
    void (*copy2d)(const hx_copy_desc *chain);
    /* Optional: called once at set-up with every link D will issue (all
     * windows, links[0..n)), after its sources are written: a backend whose
     * copy engine reads DDR behind the caches cleans the sources here, so
     * no timed copy has to. */
    void (*copy2d_prepare)(const hx_copy_desc *links, size_t n);
} hx_kernels;

extern const hx_kernels hx_kernels_ref;
/* The tuned backend of this build (host SIMD or HVX). */
const hx_kernels *hx_kernels_fast(void);

/* Output checksum used by every trial: over little-endian 64-bit words w_i
 * (tail zero-padded), h = sum_i (w_i XOR 0x9E3779B97F4A7C15) * ((i+1) * 0xBF58476D1CE4E5B9 | 1)
 * mod 2^64.  Position-weighted so that swapped or stale words change it;
 * hxfuse.checks recomputes it with numpy from the .npy files. */
uint64_t hx_checksum(const void *data, size_t bytes);
#endif
