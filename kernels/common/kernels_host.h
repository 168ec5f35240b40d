/* Shared by the host kernel files (kernels_host.c and the per-ISA variants
 * kernels_host_avx2.c / kernels_host_avx512.c): the fp32 GEMM's packed
 * layout and its cache-blocking plan, which every variant uses with its own
 * micro-tile shape, and the variant tables the run-time choice picks from. */
#ifndef HX_KERNELS_HOST_H
#define HX_KERNELS_HOST_H
#include "kernels.h"

/* Default k-block (--m-tile): must equal HX_M_TILE_DEFAULT. */
#define HX_HOST_KC 256

/* Packed layout for an mr x nr micro-tile: ceil(m/mr) A panels, each k x mr
 * (k-major, zero-padded rows), then ceil(n/nr) B panels, each k x nr
 * (zero-padded columns). */
size_t hx_host_f32_prep_bytes(int m, int n, int k, int mr, int nr);
void hx_host_f32_pack(const float *A, const float *B, int m, int n, int k, int mr, int nr, void *prep);

/* u8 x i8 layout of the AVX2 / AVX-512 variants, for a 16-bit pair multiply
 * (vpmaddwd: a0 b0 + a1 b1 into 32 bits, exact for u8 x i8): k in pairs,
 * ceil(k/2) of them (an odd k's last pair zero-padded).  A: ceil(m/mr)
 * panels, each k-pair a row of mr 32-bit words (a[i][2p], a[i][2p+1] as
 * int16); B: ceil(n/nr) panels, each k-pair nr words (b[2p][j],
 * b[2p+1][j]). */
size_t hx_host_u8i8_pairs_bytes(int m, int n, int k, int mr, int nr);
void hx_host_u8i8_pack_pairs(const uint8_t *A, const int8_t *B, int m, int n, int k, int mr, int nr, void *prep);

/* Loop bounds of one run_rows call: the panels holding rows [r0, r1), and
 * how many row panels (A block, kept in L2) and column panels (B block) one
 * cache block holds for the k-block depth kcb. */
typedef struct {
    const float *Ap, *Bp;
    int kcb, ip0, ip1, npanels, mc_panels, nc_panels;
} hx_host_f32_blocks;
hx_host_f32_blocks hx_host_f32_plan(const void *prep, int m, int n, int k, int kcb, int r0, int r1, int mr, int nr);

/* V stream's scalar tail of one row, columns c..cols (every variant's, so
 * that their rounding is the same): hard-swish `passes` times into yr, and
 * the row's sum and max carried on in *ss and *mm. */
static inline void hx_host_stream_tail(const float *xr, float *yr, int c, int cols, int passes, float *ss, float *mm) {
    for (; c < cols; c++) {
        float v = xr[c];
        for (int p = 0; p < passes; p++) {
            float g = v + 3.0f;
            g = g < 0.0f ? 0.0f : (g > 6.0f ? 6.0f : g);
            v = v * g * (1.0f / 6.0f);
        }
        yr[c] = v;
        *ss += v;
        *mm = v > *mm ? v : *mm;
    }
}

/* Generic kernels (GCC/Clang vector extensions, the build's -march): every
 * entry of every variant that the variant does not replace. */
extern const hx_kernels hx_kernels_host_generic;
/* x86-64 variants: only their tuned entries are set (the rest NULL). */
extern const hx_kernels hx_kernels_host_avx2, hx_kernels_host_avx512;
#endif
