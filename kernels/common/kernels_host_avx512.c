/* Host kernels for x86-64 with AVX-512F (compiled with this file's own ISA
 * flags, targets/host.mk, and chosen at run time by kernels_host_x86.c):
 * the fp32 GEMM as a 14 x 32 register-blocked microkernel over the packed
 * panels, the u8 x i8 GEMM on the same tiles with 16-bit pair multiply-adds,
 * and the V stream variant with non-temporal stores.  The other entries are
 * the generic host kernels (kernels_host.c).
 *
 * Every fp32 GEMM element is computed as in kernels_host_avx2.c: per k-block,
 * a fused multiply-add chain over the block's k steps in order starting from
 * zero, then C = the first block's sum, or C + the block's sum.  The two ISA
 * variants therefore give bit-identical C (and checksums); only the panel
 * shapes, i.e. the prepared layout, differ. */
#include <immintrin.h>
#include "kernels_host.h"
#include "kernels_host_x86.h"

#define MR 14 /* rows of C per micro-tile: 28 accumulators + 2 B vectors */
#define NR 32 /* columns: two 16-lane vectors */

static size_t f32_prep_bytes(int m, int n, int k) { return hx_host_f32_prep_bytes(m, n, k, MR, NR); }
static void f32_prepare(const float *A, const float *B, int m, int n, int k, void *prep) {
    hx_host_f32_pack(A, B, m, n, k, MR, NR, prep);
}

/* Tile rows [lo, hi) and cols columns into C: stored, or added to C.  Both
 * loops over the accumulators have a constant trip count, so that the
 * compiler keeps acc in registers (a variable index would put it in memory
 * for the whole k loop); a partial tile goes through a buffer. */
static inline void store_tile(__m512 acc[MR][2], float *C, int ldc, int lo, int hi, int cols, int add) {
    if (lo == 0 && hi == MR && cols == NR) {
        for (int r = 0; r < MR; r++) {
            float *row = C + (size_t)r * ldc;
            __m512 c0 = acc[r][0], c1 = acc[r][1];
            if (add) c0 = _mm512_add_ps(_mm512_loadu_ps(row), c0), c1 = _mm512_add_ps(_mm512_loadu_ps(row + 16), c1);
            _mm512_storeu_ps(row, c0);
            _mm512_storeu_ps(row + 16, c1);
        }
        return;
    }
    float t[MR][NR];
    for (int r = 0; r < MR; r++) _mm512_storeu_ps(t[r], acc[r][0]), _mm512_storeu_ps(t[r] + 16, acc[r][1]);
    for (int r = lo; r < hi; r++)
        for (int j = 0; j < cols; j++) C[(size_t)r * ldc + j] = add ? C[(size_t)r * ldc + j] + t[r][j] : t[r][j];
}

/* The MR x NR tile of the block: acc[r][j] = sum over the kc steps of a * b,
 * one FMA per step in k order. Then stored (store_tile). */
static inline void micro(const float *a, const float *b, int kc, float *C, int ldc, int lo, int hi, int cols, int add) {
    /* local accumulators, so that they live in registers for the whole loop */
    __m512 acc[MR][2];
    for (int r = 0; r < MR; r++) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int p = 0; p < kc; p++) {
        __m512 b0 = _mm512_loadu_ps(b + p * NR), b1 = _mm512_loadu_ps(b + p * NR + 16);
        for (int r = 0; r < MR; r++) {
            __m512 ar = _mm512_set1_ps(a[p * MR + r]);
            acc[r][0] = _mm512_fmadd_ps(ar, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(ar, b1, acc[r][1]);
        }
    }
    store_tile(acc, C, ldc, lo, hi, cols, add);
}

static void f32_run_rows(const void *prep, float *C, int m, int n, int k, int kcb, int r0, int r1) {
    hx_host_f32_blocks b = hx_host_f32_plan(prep, m, n, k, kcb, r0, r1, MR, NR);
    for (int k0 = 0; k0 < k; k0 += b.kcb) {
        int kc = k - k0 < b.kcb ? k - k0 : b.kcb;
        for (int jc = 0; jc < b.npanels; jc += b.nc_panels)
            for (int ic = b.ip0; ic < b.ip1; ic += b.mc_panels)
                for (int jp = jc; jp < jc + b.nc_panels && jp < b.npanels; jp++) {
                    const float *bp = b.Bp + ((size_t)jp * k + k0) * NR;
                    int cols = n - jp * NR < NR ? n - jp * NR : NR;
                    for (int ip = ic; ip < ic + b.mc_panels && ip < b.ip1; ip++) {
                        int lo = r0 > ip * MR ? r0 - ip * MR : 0;
                        int hi = r1 < ip * MR + MR ? r1 - ip * MR : MR;
                        micro(b.Ap + ((size_t)ip * k + k0) * MR, bp, kc, C + (size_t)ip * MR * n + jp * NR, n, lo, hi,
                              cols, k0 > 0);
                    }
                }
    }
}

static void f32_run_kc(const void *prep, float *C, int m, int n, int k, int kcb) {
    f32_run_rows(prep, C, m, n, k, kcb, 0, m);
}
static void f32_run(const void *prep, float *C, int m, int n, int k) { f32_run_kc(prep, C, m, n, k, HX_HOST_KC); }

/* ---- M: u8 x i8 -> i32 GEMM (exact) ----------------------------------- */
/* k in pairs (kernels_host.h): one 16-bit pair multiply-add (vpmaddwd) per
 * k-pair and accumulator, then 32-bit adds, which wrap exactly like the
 * reference's int32 sums; the k-blocking changes speed, never results. */
static size_t u8i8_prep_bytes(int m, int n, int k) { return hx_host_u8i8_pairs_bytes(m, n, k, MR, NR); }
static void u8i8_prepare(const uint8_t *A, const int8_t *B, int m, int n, int k, void *prep) {
    hx_host_u8i8_pack_pairs(A, B, m, n, k, MR, NR, prep);
}

static inline void u8i8_micro(const int32_t *a, const int32_t *b, int kp, int32_t *C, int ldc, int lo, int hi, int cols,
                              int add) {
    __m512i acc[MR][2];
    for (int r = 0; r < MR; r++) acc[r][0] = acc[r][1] = _mm512_setzero_si512();
    for (int p = 0; p < kp; p++) {
        __m512i b0 = _mm512_loadu_si512((__m512i const *)(b + p * NR)),
                b1 = _mm512_loadu_si512((__m512i const *)(b + p * NR + 16));
        for (int r = 0; r < MR; r++) {
            __m512i ar = _mm512_set1_epi32(a[p * MR + r]);
            acc[r][0] = _mm512_add_epi32(acc[r][0], _mm512_madd_epi16(ar, b0));
            acc[r][1] = _mm512_add_epi32(acc[r][1], _mm512_madd_epi16(ar, b1));
        }
    }
    int32_t t[MR][NR]; /* constant-index spill, as store_tile */
    for (int r = 0; r < MR; r++)
        _mm512_storeu_si512((__m512i *)t[r], acc[r][0]), _mm512_storeu_si512((__m512i *)(t[r] + 16), acc[r][1]);
    for (int r = lo; r < hi; r++)
        for (int j = 0; j < cols; j++)
            C[(size_t)r * ldc + j] = add ? (int32_t)((uint32_t)C[(size_t)r * ldc + j] + (uint32_t)t[r][j]) : t[r][j];
}

static void u8i8_run_rows(const void *prep, int32_t *C, int m, int n, int k, int kcb, int r0, int r1) {
    hx_host_f32_blocks b = hx_host_f32_plan(prep, m, n, k, kcb, r0, r1, MR, NR); /* bounds only */
    int kp = (k + 1) / 2;
    const int32_t *Ap = (const int32_t *)prep, *Bp = Ap + (size_t)((m + MR - 1) / MR) * MR * kp;
    for (int k0 = 0; k0 < k; k0 += b.kcb) {
        int p0 = k0 / 2, pc = ((k - k0 < b.kcb ? k - k0 : b.kcb) + 1) / 2;
        for (int jc = 0; jc < b.npanels; jc += b.nc_panels)
            for (int ic = b.ip0; ic < b.ip1; ic += b.mc_panels)
                for (int jp = jc; jp < jc + b.nc_panels && jp < b.npanels; jp++) {
                    const int32_t *bp = Bp + ((size_t)jp * kp + p0) * NR;
                    int cols = n - jp * NR < NR ? n - jp * NR : NR;
                    for (int ip = ic; ip < ic + b.mc_panels && ip < b.ip1; ip++) {
                        int lo = r0 > ip * MR ? r0 - ip * MR : 0;
                        int hi = r1 < ip * MR + MR ? r1 - ip * MR : MR;
                        u8i8_micro(Ap + ((size_t)ip * kp + p0) * MR, bp, pc, C + (size_t)ip * MR * n + jp * NR, n, lo,
                                   hi, cols, k0 > 0);
                    }
                }
    }
}

static void u8i8_run_kc(const void *prep, int32_t *C, int m, int n, int k, int kcb) {
    u8i8_run_rows(prep, C, m, n, k, kcb, 0, m);
}
static void u8i8_run(const void *prep, int32_t *C, int m, int n, int k) { u8i8_run_kc(prep, C, m, n, k, HX_HOST_KC); }

/* ---- V stream: hard-swish with non-temporal stores --------------------- */
/* The same per-element arithmetic as the reference (bit-identical y) and the
 * generic kernel's 8-lane partial sums (each 16-lane vector is folded in as
 * its low then its high half), so rowsum/rowmax agree across variants.  y is
 * written with streaming stores: it is not read again by V, and a cached
 * store would first read every output line (read-for-ownership), adding a
 * third stream of DDR traffic to the two the task needs. */
static inline __m512 hswish(__m512 v) {
    __m512 g = _mm512_add_ps(v, _mm512_set1_ps(3.0f));
    g = _mm512_min_ps(_mm512_set1_ps(6.0f), _mm512_max_ps(_mm512_setzero_ps(), g)); /* as hx_host_hswish_v8 */
    return _mm512_mul_ps(_mm512_mul_ps(v, g), _mm512_set1_ps(1.0f / 6.0f));
}

static void vec_stream_f32(const float *x, float *y, float *rowsum, float *rowmax, int cols, int passes, int r0,
                           int r1) {
    for (int r = r0; r < r1; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        hx_host_red8 red = hx_host_red8_init();
        int c = 0;
        /* 8-element steps until y is 64-byte aligned, then 16-lane streaming */
        for (; c + 8 <= cols && ((uintptr_t)(yr + c) & 63); c += 8)
            hx_host_red8_add(&red, hx_host_hswish8(xr + c, yr + c, passes));
        for (; c + 16 <= cols; c += 16) {
            _mm_prefetch((const char *)(xr + c + HX_HOST_STREAM_AHEAD), _MM_HINT_T0);
            __m512 v = _mm512_loadu_ps(xr + c);
            for (int p = 0; p < passes; p++) v = hswish(v);
            _mm512_stream_ps(yr + c, v);
            hx_host_red8_add(&red, _mm512_castps512_ps256(v));
            hx_host_red8_add(&red, _mm512_extractf32x8_ps(v, 1));
        }
        for (; c + 8 <= cols; c += 8) hx_host_red8_add(&red, hx_host_hswish8(xr + c, yr + c, passes));
        hx_host_red8_finish(&red, xr, yr, c, cols, passes, rowsum + r, rowmax + r);
    }
    _mm_sfence(); /* the streaming stores are visible before V reports done */
}

const hx_kernels hx_kernels_host_avx512 = {
    .name = "host-avx512",
    .gemm_f32_prep_bytes = f32_prep_bytes,
    .gemm_f32_prepare = f32_prepare,
    .gemm_f32_run = f32_run,
    .gemm_f32_run_kc = f32_run_kc,
    .gemm_f32_run_rows = f32_run_rows,
    .gemm_u8i8_prep_bytes = u8i8_prep_bytes,
    .gemm_u8i8_prepare = u8i8_prepare,
    .gemm_u8i8_run = u8i8_run,
    .gemm_u8i8_run_kc = u8i8_run_kc,
    .gemm_u8i8_run_rows = u8i8_run_rows,
    .gemm_rows_align = MR,
    .vec_stream_f32 = vec_stream_f32,
};
