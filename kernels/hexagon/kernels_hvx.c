/* HVX backend (Hexagon Vector eXtensions, 128-byte vectors).
 *
 * Built for hexagon-linux-musl with an open toolchain (zig cc / clang,
 * -mcpu=hexagonv67+hvxv67+hvx_length128b) and run under qemu-hexagon, and
 * for the cDSP with the Hexagon SDK's hexagon-clang (-mhvx -mhvx-length=128B).
 * Only HVX integer instructions up to v66/v67 are used, so the same source
 * runs in QEMU (which has no HVX floating point) and on any v66+ device.
 *
 * Integer kernels are bit-identical to kernels_ref.c (checked by
 * kernels/hexagon/test_hvx.c and by the runner's verification round):
 *   - gemm_u8i8: prepared layout (below) + vrmpybusv multiply-accumulate.
 *   - vec_i16:   Q13 hard-swish on int16 (exact 32-bit products), int32
 *                wrap-around row sum, row max.
 *   - copy2d:    row copies with unaligned vector loads/stores (vmemu).
 * The fp32 entries (gemm_f32_*, vec_f32) call the portable reference kernels
 * through the hx_kernels_ref table: v67 HVX has no IEEE single precision
 * (qfloat arrives with v68/v69, and QEMU emulates neither), so on this
 * backend fp32 runs as scalar Hexagon code.  Use --precision u8i8 for HVX.
 */
#include <stdint.h>
#include <string.h>
#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>
#include "../common/kernels.h"
#include "kernels_hexagon.h"

#if !defined(__HVX__) || __HVX_LENGTH__ != 128
#error "kernels_hvx.c needs 128-byte HVX (-mcpu=hexagonv67+hvxv67+hvx_length128b or -mhvx -mhvx-length=128B)"
#endif

#define VLEN 128
/* Unaligned vector access (vmemu): byte alignment, may alias anything. */
typedef long hvx_uvec __attribute__((__vector_size__(VLEN), __aligned__(1), __may_alias__));

static inline HVX_Vector vload_u(const void *p) { return *(const hvx_uvec *)p; }
static inline void vstore_u(void *p, HVX_Vector v) { *(hvx_uvec *)p = v; }

/* ------------------------------------------------------------------------ */
/* M: u8 x i8 -> i32 GEMM                                                    */
/*
 * Prepared layout (offsets from the first 128-byte aligned address inside
 * the prep buffer; prep_bytes includes 127 bytes of slack for that):
 *   kp = k rounded up to 4, np = ceil(n / 32)
 *   A: m rows of kp bytes, row-major, zero-padded in k   (4-byte words)
 *      -- placed after B so that B panels are 128-byte aligned.
 *   B: np panels; panel p is kp/4 vectors of 128 bytes; vector q holds
 *      byte 4*j + t = B[4q + t][32p + j]  (j < 32, t < 4), zero-padded.
 * vrmpybusv on (splat of A[i][4q..4q+3], B vector q of panel p) adds
 *   sum_t A[i][4q+t] * B[4q+t][32p+j] to lane j: a 32-column strip of C row i.
 * The micro-kernel keeps 4 rows x 2 panels (8 accumulators) in registers.
 */
#define PANEL 32

static inline int round_up(int x, int a) { return (x + a - 1) / a * a; }

static size_t hvx_u8i8_prep_bytes(int m, int n, int k) {
    size_t kp = (size_t)round_up(k, 4), np = (size_t)((n + PANEL - 1) / PANEL);
    return (VLEN - 1) + np * kp * PANEL + (size_t)m * kp;
}

static inline uint8_t *align_prep(const void *prep) {
    return (uint8_t *)(((uintptr_t)prep + (VLEN - 1)) & ~(uintptr_t)(VLEN - 1));
}

static void hvx_u8i8_prepare(const uint8_t *A, const int8_t *B, int m, int n, int k, void *prep) {
    int kp = round_up(k, 4), np = (n + PANEL - 1) / PANEL;
    uint8_t *pb = align_prep(prep);
    uint8_t *pa = pb + (size_t)np * kp * PANEL;
    memset(pb, 0, (size_t)np * kp * PANEL);
    for (int p = 0; p < np; p++)
        for (int kk = 0; kk < k; kk++) {
            uint8_t *dst = pb + ((size_t)p * (kp / 4) + kk / 4) * VLEN + (kk % 4);
            for (int j = 0; j < PANEL && p * PANEL + j < n; j++)
                dst[4 * j] = (uint8_t)B[(size_t)kk * n + p * PANEL + j];
        }
    for (int i = 0; i < m; i++) {
        memcpy(pa + (size_t)i * kp, A + (size_t)i * k, (size_t)k);
        memset(pa + (size_t)i * kp + k, 0, (size_t)(kp - k));
    }
}

/* Stores one 32-lane strip of C row i (columns c0 .. c0+31, clipped at n). */
static inline void store_strip(int32_t *C, int n, int i, int c0, HVX_Vector v) {
    int32_t *dst = C + (size_t)i * n + c0;
    if (c0 + PANEL <= n) {
        vstore_u(dst, v);
    } else {
        HVX_Vector tmp[1];
        tmp[0] = v;
        memcpy(dst, tmp, (size_t)(n - c0) * sizeof(int32_t));
    }
}

static inline uint32_t a_word(const uint8_t *row, int q) {
    uint32_t w;
    memcpy(&w, row + 4 * q, 4);
    return w;
}

/* Rows [r0, r1) of C (r0 a multiple of 4): the task runs the GEMM block by
 * block to time-stamp its progress; each row is computed as in a whole run.
 * No k-blocking, so kc is ignored.  Untested on hardware. */
static void hvx_u8i8_run_rows(const void *prep, int32_t *C, int m, int n, int k, int kc, int r0, int r1) {
    (void)m, (void)kc;
    int kp = round_up(k, 4), kq = kp / 4, np = (n + PANEL - 1) / PANEL;
    const uint8_t *pb = align_prep(prep);
    const uint8_t *pa = pb + (size_t)np * kp * PANEL;
    const HVX_Vector zero = Q6_V_vzero();
    int i = r0;
    for (; i + 4 <= r1; i += 4) {
        const uint8_t *a0 = pa + (size_t)i * kp, *a1 = a0 + kp, *a2 = a1 + kp, *a3 = a2 + kp;
        int p = 0;
        for (; p + 2 <= np; p += 2) {
            const HVX_Vector *b0 = (const HVX_Vector *)(pb + (size_t)p * kp * PANEL);
            const HVX_Vector *b1 = b0 + kq;
            HVX_Vector c00 = zero, c01 = zero, c10 = zero, c11 = zero;
            HVX_Vector c20 = zero, c21 = zero, c30 = zero, c31 = zero;
            for (int q = 0; q < kq; q++) {
                HVX_Vector vb0 = b0[q], vb1 = b1[q];
                HVX_Vector s0 = Q6_V_vsplat_R(a_word(a0, q));
                HVX_Vector s1 = Q6_V_vsplat_R(a_word(a1, q));
                HVX_Vector s2 = Q6_V_vsplat_R(a_word(a2, q));
                HVX_Vector s3 = Q6_V_vsplat_R(a_word(a3, q));
                c00 = Q6_Vw_vrmpyacc_VwVubVb(c00, s0, vb0);
                c01 = Q6_Vw_vrmpyacc_VwVubVb(c01, s0, vb1);
                c10 = Q6_Vw_vrmpyacc_VwVubVb(c10, s1, vb0);
                c11 = Q6_Vw_vrmpyacc_VwVubVb(c11, s1, vb1);
                c20 = Q6_Vw_vrmpyacc_VwVubVb(c20, s2, vb0);
                c21 = Q6_Vw_vrmpyacc_VwVubVb(c21, s2, vb1);
                c30 = Q6_Vw_vrmpyacc_VwVubVb(c30, s3, vb0);
                c31 = Q6_Vw_vrmpyacc_VwVubVb(c31, s3, vb1);
            }
            int c0 = p * PANEL, c1 = c0 + PANEL;
            store_strip(C, n, i + 0, c0, c00);
            store_strip(C, n, i + 0, c1, c01);
            store_strip(C, n, i + 1, c0, c10);
            store_strip(C, n, i + 1, c1, c11);
            store_strip(C, n, i + 2, c0, c20);
            store_strip(C, n, i + 2, c1, c21);
            store_strip(C, n, i + 3, c0, c30);
            store_strip(C, n, i + 3, c1, c31);
        }
        for (; p < np; p++) {
            const HVX_Vector *b0 = (const HVX_Vector *)(pb + (size_t)p * kp * PANEL);
            HVX_Vector c0v = zero, c1v = zero, c2v = zero, c3v = zero;
            for (int q = 0; q < kq; q++) {
                HVX_Vector vb = b0[q];
                c0v = Q6_Vw_vrmpyacc_VwVubVb(c0v, Q6_V_vsplat_R(a_word(a0, q)), vb);
                c1v = Q6_Vw_vrmpyacc_VwVubVb(c1v, Q6_V_vsplat_R(a_word(a1, q)), vb);
                c2v = Q6_Vw_vrmpyacc_VwVubVb(c2v, Q6_V_vsplat_R(a_word(a2, q)), vb);
                c3v = Q6_Vw_vrmpyacc_VwVubVb(c3v, Q6_V_vsplat_R(a_word(a3, q)), vb);
            }
            store_strip(C, n, i + 0, p * PANEL, c0v);
            store_strip(C, n, i + 1, p * PANEL, c1v);
            store_strip(C, n, i + 2, p * PANEL, c2v);
            store_strip(C, n, i + 3, p * PANEL, c3v);
        }
    }
    for (; i < r1; i++) {
        const uint8_t *a0 = pa + (size_t)i * kp;
        for (int p = 0; p < np; p++) {
            const HVX_Vector *b0 = (const HVX_Vector *)(pb + (size_t)p * kp * PANEL);
            HVX_Vector acc = zero;
            for (int q = 0; q < kq; q++) acc = Q6_Vw_vrmpyacc_VwVubVb(acc, Q6_V_vsplat_R(a_word(a0, q)), b0[q]);
            store_strip(C, n, i, p * PANEL, acc);
        }
    }
}

static void hvx_u8i8_run(const void *prep, int32_t *C, int m, int n, int k) {
    hvx_u8i8_run_rows(prep, C, m, n, k, 0, 0, m);
}

/* ------------------------------------------------------------------------ */
/* V: int16 hard-swish (Q13), row sum (int32, wrap-around), row max          */
/*
 * act(x) = (x * clamp(x + 4096, 0, 8192)) >> 13.  x + 4096 would overflow
 * 16 bits for x > 28671, so the gate is formed as clamp(x, -4096, 4096) +
 * 4096, which is the same value without overflow.  The product is formed
 * exactly in 32 bits (vmpyhv: even/odd lanes in the two halves of a pair),
 * shifted arithmetically by 13 and narrowed back in the original lane order
 * (vasrwh takes the low halfword of each shifted word; the result always
 * fits 16 bits because |act(x)| <= max(|x|, 4096)).
 */
static inline int16_t act_i16_scalar(int16_t x) {
    int32_t g = (int32_t)x + 4096;
    g = g < 0 ? 0 : (g > 8192 ? 8192 : g);
    return (int16_t)(((int32_t)x * g) >> 13);
}

static inline HVX_Vector act_i16_hvx(HVX_Vector x, HVX_Vector lo, HVX_Vector hi, HVX_Vector bias) {
    HVX_Vector g = Q6_Vh_vadd_VhVh(Q6_Vh_vmin_VhVh(Q6_Vh_vmax_VhVh(x, lo), hi), bias);
    HVX_VectorPair prod = Q6_Ww_vmpy_VhVh(x, g);
    /* hi half: odd lanes, lo half: even lanes -> vasrwh re-interleaves. */
    return Q6_Vh_vasr_VwVwR(Q6_V_hi_W(prod), Q6_V_lo_W(prod), 13);
}

static void hvx_vec_i16(const int16_t *x, int16_t *y, int32_t *rowsum, int16_t *rowmax, int cols, int passes, int r0,
                        int r1) {
    const int per = VLEN / 2; /* 64 halfwords */
    const HVX_Vector lo = Q6_Vh_vsplat_R(-4096), hi = Q6_Vh_vsplat_R(4096);
    const HVX_Vector bias = Q6_Vh_vsplat_R(4096);
    const int body = cols / per * per;
    for (int r = r0; r < r1; r++) {
        const int16_t *xr = x + (size_t)r * cols;
        int16_t *yr = y + (size_t)r * cols;
        HVX_Vector vsum = Q6_V_vzero();
        HVX_Vector vmax = Q6_Vh_vsplat_R(INT16_MIN);
        for (int c = 0; c < body; c += per) {
            HVX_Vector v = vload_u(xr + c);
            for (int p = 0; p < passes; p++) v = act_i16_hvx(v, lo, hi, bias);
            vstore_u(yr + c, v);
            vmax = Q6_Vh_vmax_VhVh(vmax, v);
            HVX_VectorPair w = Q6_Ww_vunpack_Vh(v); /* sign-extend to 32 bits */
            vsum = Q6_Vw_vadd_VwVw(vsum, Q6_Vw_vadd_VwVw(Q6_V_lo_W(w), Q6_V_hi_W(w)));
        }
        /* Horizontal reductions through memory (once per row). */
        HVX_Vector tmp[2];
        tmp[0] = vsum;
        tmp[1] = vmax;
        const int32_t *ws = (const int32_t *)&tmp[0];
        const int16_t *hm = (const int16_t *)&tmp[1];
        uint32_t s = 0;
        int16_t mx = INT16_MIN;
        if (body > 0) {
            for (int l = 0; l < VLEN / 4; l++) s += (uint32_t)ws[l];
            for (int l = 0; l < per; l++) mx = hm[l] > mx ? hm[l] : mx;
        }
        for (int c = body; c < cols; c++) {
            int16_t v = xr[c];
            for (int p = 0; p < passes; p++) v = act_i16_scalar(v);
            yr[c] = v;
            s += (uint32_t)(int32_t)v;
            mx = v > mx ? v : mx;
        }
        rowsum[r] = (int32_t)s;
        rowmax[r] = mx;
    }
}

/* ------------------------------------------------------------------------ */
/* D: 2-D descriptor chain, row copies with vmemu                            */
/*
 * Rows of at least 128 bytes: full unaligned vectors, and the tail as one
 * more vector ending exactly at the row end (it overlaps bytes already
 * written with the same source bytes; source and destination never overlap,
 * which the executor checks).  Shorter rows: memcpy.
 */
static void copy_row(uint8_t *dst, const uint8_t *src, uint32_t bytes) {
    if (bytes < VLEN) {
        memcpy(dst, src, bytes);
        return;
    }
    uint32_t o = 0;
    for (; o + 4 * VLEN <= bytes; o += 4 * VLEN) {
        HVX_Vector v0 = vload_u(src + o), v1 = vload_u(src + o + VLEN);
        HVX_Vector v2 = vload_u(src + o + 2 * VLEN), v3 = vload_u(src + o + 3 * VLEN);
        vstore_u(dst + o, v0);
        vstore_u(dst + o + VLEN, v1);
        vstore_u(dst + o + 2 * VLEN, v2);
        vstore_u(dst + o + 3 * VLEN, v3);
    }
    for (; o + VLEN <= bytes; o += VLEN) vstore_u(dst + o, vload_u(src + o));
    if (o < bytes) vstore_u(dst + bytes - VLEN, vload_u(src + bytes - VLEN));
}

static void hvx_copy2d(const hx_copy_desc *d) {
    for (; d; d = d->next)
        for (uint32_t r = 0; r < d->rows; r++)
            copy_row(d->dst + (size_t)r * d->dst_stride, d->src + (size_t)r * d->src_stride, d->row_bytes);
}

/* ------------------------------------------------------------------------ */
/* fp32: scalar reference (no HVX IEEE float on v67 / in QEMU)              */
static size_t hvx_f32_prep_bytes(int m, int n, int k) { return hx_kernels_ref.gemm_f32_prep_bytes(m, n, k); }
static void hvx_f32_prepare(const float *A, const float *B, int m, int n, int k, void *prep) {
    hx_kernels_ref.gemm_f32_prepare(A, B, m, n, k, prep);
}
static void hvx_f32_run(const void *prep, float *C, int m, int n, int k) {
    hx_kernels_ref.gemm_f32_run(prep, C, m, n, k);
}
static void hvx_f32_run_rows(const void *prep, float *C, int m, int n, int k, int kc, int r0, int r1) {
    hx_kernels_ref.gemm_f32_run_rows(prep, C, m, n, k, kc, r0, r1);
}
static void hvx_vec_f32(const float *x, float *y, float *rowsum, float *rowmax, int cols, int passes, int r0, int r1) {
    hx_kernels_ref.vec_f32(x, y, rowsum, rowmax, cols, passes, r0, r1);
}

/* Exported so that the device build (kernels_device.c) can reuse the HVX
 * entries and override M with HMX and D with user DMA. */
const hx_kernels hx_kernels_hvx = {
    .name = "hvx",
    .gemm_f32_prep_bytes = hvx_f32_prep_bytes,
    .gemm_f32_prepare = hvx_f32_prepare,
    .gemm_f32_run = hvx_f32_run,
    .gemm_u8i8_prep_bytes = hvx_u8i8_prep_bytes,
    .gemm_u8i8_prepare = hvx_u8i8_prepare,
    .gemm_u8i8_run = hvx_u8i8_run,
    .gemm_f32_run_rows = hvx_f32_run_rows,
    .gemm_u8i8_run_rows = hvx_u8i8_run_rows,
    /* the u8i8 rows come in strips of 4; the fp32 reference takes any row */
    .gemm_rows_align = 4,
    .vec_f32 = hvx_vec_f32,
    .vec_i16 = hvx_vec_i16,
    .copy2d = hvx_copy2d,
};

#ifndef HX_HVX_NO_FAST_ENTRY
const hx_kernels *hx_kernels_fast(void) { return &hx_kernels_hvx; }
#endif
