/* Generic host SIMD kernels, written with GCC/Clang vector extensions so the
 * same source vectorises for AVX2/AVX-512 (x86-64) or NEON (AArch64) under
 * -march=native.  Prepared layouts are packed panels: the packing is the
 * "layout preparation" that the runner times separately.  On x86-64 the
 * per-ISA files replace both GEMMs and the V stream variant
 * (kernels_host_x86.c picks one at run time); everything else is this
 * file's, and so is every entry elsewhere (kernels_host_any.c). */
#include <math.h>
#include <string.h>
#include "kernels_host.h"

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
/* GEMM vector width: the widest the build targets (AVX-512: 16 lanes). */
#if defined(__AVX512F__)
#define GW 16
#else
#define GW 8
#endif
typedef float vgf __attribute__((vector_size(GW * 4)));

#define MR 6        /* rows of C per micro-tile */
#define NR (2 * GW) /* columns of C per micro-tile: two vectors */
/* Default k-block (--m-tile): the depth of A and B micro-panels streamed per
 * pass over C.  Deeper blocks touch C less often; shallower ones keep the B
 * micro-panel (kc x NR floats) in L1.  Must equal HX_M_TILE_DEFAULT. */
#define KC HX_HOST_KC

static inline v8f loadf(const float *p) {
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void storef(float *p, v8f v) { memcpy(p, &v, sizeof v); }
static inline vgf loadg(const float *p) {
    vgf v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void storeg(float *p, vgf v) { memcpy(p, &v, sizeof v); }
static inline v8i loadi(const int32_t *p) {
    v8i v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void storei(int32_t *p, v8i v) { memcpy(p, &v, sizeof v); }

/* Lane-wise select (C has no vector ?:): m lanes are all-ones or zero. */
static inline v8f self(v8i m, v8f a, v8f b) {
    v8i ai, bi, r;
    memcpy(&ai, &a, sizeof ai), memcpy(&bi, &b, sizeof bi);
    r = (m & ai) | (~m & bi);
    v8f out;
    memcpy(&out, &r, sizeof out);
    return out;
}
static inline v8i seli(v8i m, v8i a, v8i b) { return (m & a) | (~m & b); }

static int panels(int x, int w) { return (x + w - 1) / w; }

/* ---- M: fp32 GEMM ---------------------------------------------------- */
size_t hx_host_f32_prep_bytes(int m, int n, int k, int mr, int nr) {
    return ((size_t)panels(m, mr) * mr + (size_t)panels(n, nr) * nr) * (size_t)k * sizeof(float);
}

void hx_host_f32_pack(const float *A, const float *B, int m, int n, int k, int mr, int nr, void *prep) {
    float *Ap = (float *)prep, *Bp = Ap + (size_t)panels(m, mr) * mr * k;
    for (int ip = 0; ip < panels(m, mr); ip++)
        for (int p = 0; p < k; p++)
            for (int r = 0; r < mr; r++) {
                int i = ip * mr + r;
                Ap[((size_t)ip * k + p) * mr + r] = i < m ? A[(size_t)i * k + p] : 0.0f;
            }
    for (int jp = 0; jp < panels(n, nr); jp++)
        for (int p = 0; p < k; p++)
            for (int c = 0; c < nr; c++) {
                int j = jp * nr + c;
                Bp[((size_t)jp * k + p) * nr + c] = j < n ? B[(size_t)p * n + j] : 0.0f;
            }
}

size_t hx_host_u8i8_pairs_bytes(int m, int n, int k, int mr, int nr) {
    return ((size_t)panels(m, mr) * mr + (size_t)panels(n, nr) * nr) * (size_t)panels(k, 2) * 4;
}

void hx_host_u8i8_pack_pairs(const uint8_t *A, const int8_t *B, int m, int n, int k, int mr, int nr, void *prep) {
    int kp = panels(k, 2);
    int16_t *Ap = (int16_t *)prep, *Bp = Ap + (size_t)panels(m, mr) * mr * kp * 2;
    for (int ip = 0; ip < panels(m, mr); ip++)
        for (int p = 0; p < k + (k & 1); p++)
            for (int r = 0; r < mr; r++) {
                int i = ip * mr + r;
                Ap[(((size_t)ip * kp + p / 2) * mr + r) * 2 + (p & 1)] = i < m && p < k ? A[(size_t)i * k + p] : 0;
            }
    for (int jp = 0; jp < panels(n, nr); jp++)
        for (int p = 0; p < k + (k & 1); p++)
            for (int c = 0; c < nr; c++) {
                int j = jp * nr + c;
                Bp[(((size_t)jp * kp + p / 2) * nr + c) * 2 + (p & 1)] = j < n && p < k ? B[(size_t)p * n + j] : 0;
            }
}

/* Cache blocks sized for a typical 1-2 MiB L2 per core: an A block of about
 * 128 KiB (mc rows x kc) swept against each B micro-panel, and a B block of
 * about 1 MiB (kc x nc columns) reused by every A block of the k-block. */
hx_host_f32_blocks hx_host_f32_plan(const void *prep, int m, int n, int k, int kcb, int r0, int r1, int mr, int nr) {
    hx_host_f32_blocks b;
    b.Ap = (const float *)prep;
    b.Bp = b.Ap + (size_t)panels(m, mr) * mr * k;
    b.kcb = kcb <= 0 ? HX_HOST_KC : kcb;
    int kc = b.kcb < k ? b.kcb : k;
    b.ip0 = r0 / mr;
    b.ip1 = panels(r1, mr);
    b.npanels = panels(n, nr);
    b.mc_panels = (128 << 10) / (kc * mr * 4);
    b.nc_panels = (1 << 20) / (kc * nr * 4);
    if (b.mc_panels < 1) b.mc_panels = 1;
    if (b.nc_panels < 1) b.nc_panels = 1;
    return b;
}

/* Generic panels: MR rows by two vectors of columns. */
static size_t f32_prep_bytes(int m, int n, int k) { return hx_host_f32_prep_bytes(m, n, k, MR, NR); }
static void f32_prepare(const float *A, const float *B, int m, int n, int k, void *prep) {
    hx_host_f32_pack(A, B, m, n, k, MR, NR, prep);
}

/* C tile (MR x NR) = or += a[kc x MR] * b[kc x NR] */
static void f32_micro(const float *a, const float *b, int kc, float *C, int ldc, int rows, int cols, int accumulate) {
    vgf c[MR][2] = {{{0}}};
    for (int p = 0; p < kc; p++) {
        vgf b0 = loadg(b + p * NR), b1 = loadg(b + p * NR + GW);
        for (int r = 0; r < MR; r++) {
            vgf ar = (vgf){0} + a[p * MR + r]; /* broadcast */
            c[r][0] += ar * b0;
            c[r][1] += ar * b1;
        }
    }
    if (rows == MR && cols == NR) {
        for (int r = 0; r < MR; r++) {
            float *row = C + (size_t)r * ldc;
            if (accumulate) c[r][0] += loadg(row), c[r][1] += loadg(row + GW);
            storeg(row, c[r][0]);
            storeg(row + GW, c[r][1]);
        }
        return;
    }
    float t[MR][NR];
    for (int r = 0; r < MR; r++) storeg(t[r], c[r][0]), storeg(t[r] + GW, c[r][1]);
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < cols; j++) C[(size_t)r * ldc + j] = accumulate ? C[(size_t)r * ldc + j] + t[r][j] : t[r][j];
}

/* Rows [r0, r1) of C (r0 a multiple of MR): the row panels in that range.
 * Every element sees the same k-blocks in the same order as a whole-matrix
 * run, so running C block by block gives bit-identical results. */
static void f32_run_rows(const void *prep, float *C, int m, int n, int k, int KCB, int r0, int r1) {
    const float *Ap = (const float *)prep, *Bp = Ap + (size_t)panels(m, MR) * MR * k;
    if (KCB <= 0) KCB = KC;
    for (int k0 = 0; k0 < k; k0 += KCB) {
        int kc = k - k0 < KCB ? k - k0 : KCB;
        for (int jp = 0; jp < panels(n, NR); jp++) {
            const float *b = Bp + ((size_t)jp * k + k0) * NR;
            int cols = n - jp * NR < NR ? n - jp * NR : NR;
            for (int ip = r0 / MR; ip < panels(r1, MR); ip++) {
                int rows = m - ip * MR < MR ? m - ip * MR : MR;
                f32_micro(Ap + ((size_t)ip * k + k0) * MR, b, kc, C + (size_t)ip * MR * n + jp * NR, n, rows, cols,
                          k0 > 0);
            }
        }
    }
}

static void f32_run_kc(const void *prep, float *C, int m, int n, int k, int KCB) {
    f32_run_rows(prep, C, m, n, k, KCB, 0, m);
}

static void f32_run(const void *prep, float *C, int m, int n, int k) { f32_run_kc(prep, C, m, n, k, KC); }

/* ---- M: u8 x i8 -> i32 GEMM (exact) ----------------------------------- */
/* Same panel scheme with operands widened to int32 at preparation time. */
static size_t u8i8_prep_bytes(int m, int n, int k) {
    return ((size_t)panels(m, MR) * MR + (size_t)panels(n, NR) * NR) * (size_t)k * sizeof(int32_t);
}

static void u8i8_prepare(const uint8_t *A, const int8_t *B, int m, int n, int k, void *prep) {
    int32_t *Ap = (int32_t *)prep, *Bp = Ap + (size_t)panels(m, MR) * MR * k;
    for (int ip = 0; ip < panels(m, MR); ip++)
        for (int p = 0; p < k; p++)
            for (int r = 0; r < MR; r++) {
                int i = ip * MR + r;
                Ap[((size_t)ip * k + p) * MR + r] = i < m ? A[(size_t)i * k + p] : 0;
            }
    for (int jp = 0; jp < panels(n, NR); jp++)
        for (int p = 0; p < k; p++)
            for (int c = 0; c < NR; c++) {
                int j = jp * NR + c;
                Bp[((size_t)jp * k + p) * NR + c] = j < n ? B[(size_t)p * n + j] : 0;
            }
}

/* C tile (rows x cols at C, row stride n) = or += the products of k-steps
 * [p0, p1) of one A panel and one B panel. */
static void u8i8_micro(const int32_t *a, const int32_t *b, int p0, int p1, int32_t *C, int n, int rows, int cols,
                       int accumulate) {
    enum { NV = NR / 8 };
    v8i c[MR][NV] = {{{0}}};
    for (int p = p0; p < p1; p++) {
        v8i bv[NV];
        for (int q = 0; q < NV; q++) bv[q] = loadi(b + p * NR + 8 * q);
        for (int r = 0; r < MR; r++) {
            v8i ar = (v8i){0} + a[p * MR + r];
            for (int q = 0; q < NV; q++) c[r][q] += ar * bv[q];
        }
    }
    int32_t t[MR][NR];
    for (int r = 0; r < MR; r++)
        for (int q = 0; q < NV; q++) storei(t[r] + 8 * q, c[r][q]);
    for (int r = 0; r < rows; r++) {
        int32_t *row = C + (size_t)r * n;
        if (!accumulate) memcpy(row, t[r], (size_t)cols * 4);
        else
            for (int j = 0; j < cols; j++) row[j] += t[r][j]; /* |sum| < 255 * 128 * 8192 < 2^31 */
    }
}

/* Integer sums are exact, so the k-blocking changes speed, never results.
 * Rows [r0, r1) of C, r0 a multiple of MR. */
static void u8i8_run_rows(const void *prep, int32_t *C, int m, int n, int k, int KCB, int r0, int r1) {
    const int32_t *Ap = (const int32_t *)prep, *Bp = Ap + (size_t)panels(m, MR) * MR * k;
    if (KCB <= 0) KCB = KC;
    for (int k0 = 0; k0 < k; k0 += KCB) {
        int k1 = k - k0 < KCB ? k : k0 + KCB;
        for (int jp = 0; jp < panels(n, NR); jp++) {
            int cols = n - jp * NR < NR ? n - jp * NR : NR;
            for (int ip = r0 / MR; ip < panels(r1, MR); ip++) {
                int rows = m - ip * MR < MR ? m - ip * MR : MR;
                u8i8_micro(Ap + (size_t)ip * k * MR, Bp + (size_t)jp * k * NR, k0, k1,
                           C + (size_t)ip * MR * n + jp * NR, n, rows, cols, k0 > 0);
            }
        }
    }
}

static void u8i8_run_kc(const void *prep, int32_t *C, int m, int n, int k, int KCB) {
    u8i8_run_rows(prep, C, m, n, k, KCB, 0, m);
}

static void u8i8_run(const void *prep, int32_t *C, int m, int n, int k) { u8i8_run_kc(prep, C, m, n, k, KC); }

/* ---- V: SiLU + row reduction (fp32) ----------------------------------- */
/* exp(x) for 8 lanes: Cody-Waite range reduction and a degree-6 polynomial
 * (relative error ~2 ulp), so the activation vectorises without -ffast-math. */
static inline v8f vexp(v8f x) {
    const v8f lo = (v8f){0} - 87.0f, hi = (v8f){0} + 88.0f;
    x = self(x < lo, lo, x);
    x = self(x > hi, hi, x);
    /* round to nearest with the 1.5 * 2^23 trick: stays in vector registers */
    v8f nf = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    v8i n = __builtin_convertvector(nf, v8i);
    v8f r = x - nf * 0.693359375f + nf * 2.12194440e-4f;
    v8f p = (v8f){0} + 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    v8i bits = (n + 127) << 23;
    v8f scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static void vec_f32(const float *x, float *y, float *rowsum, float *rowmax, int cols, int passes, int r0, int r1) {
    for (int r = r0; r < r1; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        v8f s = {0}, mx = (v8f){0} - INFINITY;
        int c = 0;
        for (; c + 8 <= cols; c += 8) {
            v8f v = loadf(xr + c);
            for (int p = 0; p < passes; p++) v = v / (1.0f + vexp(-v));
            storef(yr + c, v);
            s += v;
            mx = self(v > mx, v, mx);
        }
        float ss = 0.0f, mm = -INFINITY;
        for (int i = 0; i < 8; i++) ss += s[i], mm = mx[i] > mm ? mx[i] : mm;
        for (; c < cols; c++) {
            float v = xr[c];
            for (int p = 0; p < passes; p++) v = v / (1.0f + expf(-v));
            yr[c] = v;
            ss += v;
            mm = v > mm ? v : mm;
        }
        rowsum[r] = ss;
        rowmax[r] = mm;
    }
}

/* ---- V: stream variant, fp32 hard-swish + row reduction ---------------- */
/* Two multiplies, an add and a clamp per element in the same order as the
 * reference (bit-identical y): at 4 + 4 bytes per element the loop is bound
 * by memory traffic on a DDR-sized array, which is the variant's purpose. */
static void vec_stream_f32(const float *x, float *y, float *rowsum, float *rowmax, int cols, int passes, int r0,
                           int r1) {
    const v8f zero = {0}, six = (v8f){0} + 6.0f, three = (v8f){0} + 3.0f, sixth = (v8f){0} + (1.0f / 6.0f);
    for (int r = r0; r < r1; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols;
        v8f s = {0}, mx = (v8f){0} - INFINITY;
        int c = 0;
        for (; c + 8 <= cols; c += 8) {
            v8f v = loadf(xr + c);
            for (int p = 0; p < passes; p++) {
                v8f g = v + three;
                g = self(g < zero, zero, g);
                g = self(g > six, six, g);
                v = v * g * sixth;
            }
            storef(yr + c, v);
            s += v;
            mx = self(v > mx, v, mx);
        }
        float ss = 0.0f, mm = -INFINITY;
        for (int i = 0; i < 8; i++) ss += s[i], mm = mx[i] > mm ? mx[i] : mm;
        hx_host_stream_tail(xr, yr, c, cols, passes, &ss, &mm);
        rowsum[r] = ss;
        rowmax[r] = mm;
    }
}

/* ---- V: Q13 hard-swish + row reduction (int16, exact) ------------------ */
static void vec_i16(const int16_t *x, int16_t *y, int32_t *rowsum, int16_t *rowmax, int cols, int passes, int r0,
                    int r1) {
    for (int r = r0; r < r1; r++) {
        const int16_t *xr = x + (size_t)r * cols;
        int16_t *yr = y + (size_t)r * cols;
        v8i s = {0}, mx = (v8i){0} - 32768;
        int c = 0;
        for (; c + 8 <= cols; c += 8) {
            v8i v;
            for (int i = 0; i < 8; i++) v[i] = xr[c + i];
            for (int p = 0; p < passes; p++) {
                v8i g = v + 4096;
                g = seli(g < 0, (v8i){0}, g);
                g = seli(g > 8192, (v8i){0} + 8192, g);
                v = (v * g) >> 13;
            }
            for (int i = 0; i < 8; i++) yr[c + i] = (int16_t)v[i];
            s += v;
            mx = seli(v > mx, v, mx);
        }
        uint32_t ss = 0;
        int32_t mm = -32768;
        for (int i = 0; i < 8; i++) ss += (uint32_t)s[i], mm = mx[i] > mm ? mx[i] : mm;
        for (; c < cols; c++) {
            int32_t v = xr[c];
            for (int p = 0; p < passes; p++) {
                int32_t g = v + 4096;
                g = g < 0 ? 0 : (g > 8192 ? 8192 : g);
                v = (v * g) >> 13;
            }
            yr[c] = (int16_t)v;
            ss += (uint32_t)v;
            mm = v > mm ? v : mm;
        }
        rowsum[r] = (int32_t)ss;
        rowmax[r] = (int16_t)mm;
    }
}

/* ---- D: 2-D descriptor chain ------------------------------------------ */
static void copy2d(const hx_copy_desc *d) {
    for (; d; d = d->next) {
        if (d->src_stride == d->row_bytes && d->dst_stride == d->row_bytes) {
            memcpy(d->dst, d->src, (size_t)d->rows * d->row_bytes); /* contiguous: one burst */
            continue;
        }
        for (uint32_t r = 0; r < d->rows; r++)
            memcpy(d->dst + (size_t)r * d->dst_stride, d->src + (size_t)r * d->src_stride, d->row_bytes);
    }
}

const hx_kernels hx_kernels_host_generic = {
    .name = "host-simd",
    .gemm_f32_prep_bytes = f32_prep_bytes,
    .gemm_f32_prepare = f32_prepare,
    .gemm_f32_run = f32_run,
    .gemm_u8i8_prep_bytes = u8i8_prep_bytes,
    .gemm_u8i8_prepare = u8i8_prepare,
    .gemm_u8i8_run = u8i8_run,
    .gemm_f32_run_kc = f32_run_kc,
    .gemm_u8i8_run_kc = u8i8_run_kc,
    .gemm_f32_run_rows = f32_run_rows,
    .gemm_u8i8_run_rows = u8i8_run_rows,
    .gemm_rows_align = MR,
    .vec_f32 = vec_f32,
    .vec_i16 = vec_i16,
    .vec_stream_f32 = vec_stream_f32,
    .copy2d = copy2d,
};
