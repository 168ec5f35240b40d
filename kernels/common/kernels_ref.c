/* Portable scalar reference kernels: the definition every tuned backend is
 * checked against.  "Prepared layout" here is simply a row-major copy of A
 * followed by B, so the reference pays no packing cost it could hide. */
#include <math.h>
#include <string.h>
#include "kernels.h"

static size_t ref_f32_prep_bytes(int m, int n, int k) { return ((size_t)m * k + (size_t)k * n) * sizeof(float); }
static void ref_f32_prepare(const float *A, const float *B, int m, int n, int k, void *prep) {
    float *p = (float *)prep;
    memcpy(p, A, (size_t)m * k * sizeof(float));
    memcpy(p + (size_t)m * k, B, (size_t)k * n * sizeof(float));
}
/* Rows [r0, r1) of C; the reference has no k-blocking, so kc is ignored. */
static void ref_f32_run_rows(const void *prep, float *C, int m, int n, int k, int kc, int r0, int r1) {
    (void)kc;
    const float *A = (const float *)prep, *B = A + (size_t)m * k;
    for (int i = r0; i < r1; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++) acc += A[(size_t)i * k + p] * B[(size_t)p * n + j];
            C[(size_t)i * n + j] = acc;
        }
}

static void ref_f32_run(const void *prep, float *C, int m, int n, int k) {
    ref_f32_run_rows(prep, C, m, n, k, 0, 0, m);
}

static size_t ref_u8i8_prep_bytes(int m, int n, int k) { return (size_t)m * k + (size_t)k * n; }
static void ref_u8i8_prepare(const uint8_t *A, const int8_t *B, int m, int n, int k, void *prep) {
    uint8_t *p = (uint8_t *)prep;
    memcpy(p, A, (size_t)m * k);
    memcpy(p + (size_t)m * k, B, (size_t)k * n);
}
static void ref_u8i8_run_rows(const void *prep, int32_t *C, int m, int n, int k, int kc, int r0, int r1) {
    (void)kc;
    const uint8_t *A = (const uint8_t *)prep;
    const int8_t *B = (const int8_t *)(A + (size_t)m * k);
    for (int i = r0; i < r1; i++)
        for (int j = 0; j < n; j++) {
            int32_t acc = 0;
            for (int p = 0; p < k; p++) acc += (int32_t)A[(size_t)i * k + p] * (int32_t)B[(size_t)p * n + j];
            C[(size_t)i * n + j] = acc;
        }
}

static void ref_u8i8_run(const void *prep, int32_t *C, int m, int n, int k) {
    ref_u8i8_run_rows(prep, C, m, n, k, 0, 0, m);
}

static void ref_vec_f32(const float *x, float *y, float *rowsum, float *rowmax, int cols, int passes, int r0, int r1) {
    for (int r = r0; r < r1; r++) {
        float s = 0.0f, mx = -INFINITY;
        for (int c = 0; c < cols; c++) {
            float v = x[(size_t)r * cols + c];
            for (int p = 0; p < passes; p++) v = v / (1.0f + expf(-v));
            y[(size_t)r * cols + c] = v;
            s += v;
            mx = v > mx ? v : mx;
        }
        rowsum[r] = s;
        rowmax[r] = mx;
    }
}

/* hard-swish in fp32: the multiply by the rounded constant 1/6 (not a
 * division) is part of the definition, so every backend and numpy agree. */
static inline float hswish_f32(float v) {
    float g = v + 3.0f;
    g = g < 0.0f ? 0.0f : (g > 6.0f ? 6.0f : g);
    return v * g * (1.0f / 6.0f);
}
static void ref_vec_stream_f32(const float *x, float *y, float *rowsum, float *rowmax, int cols, int passes, int r0,
                               int r1) {
    for (int r = r0; r < r1; r++) {
        float s = 0.0f, mx = -INFINITY;
        for (int c = 0; c < cols; c++) {
            float v = x[(size_t)r * cols + c];
            for (int p = 0; p < passes; p++) v = hswish_f32(v);
            y[(size_t)r * cols + c] = v;
            s += v;
            mx = v > mx ? v : mx;
        }
        rowsum[r] = s;
        rowmax[r] = mx;
    }
}

static inline int16_t act_i16(int16_t x) {
    int32_t g = (int32_t)x + 4096;
    g = g < 0 ? 0 : (g > 8192 ? 8192 : g);
    return (int16_t)(((int32_t)x * g) >> 13);
}
static void ref_vec_i16(const int16_t *x, int16_t *y, int32_t *rowsum, int16_t *rowmax, int cols, int passes, int r0,
                        int r1) {
    for (int r = r0; r < r1; r++) {
        uint32_t s = 0; /* unsigned: wrap-around is defined */
        int16_t mx = INT16_MIN;
        for (int c = 0; c < cols; c++) {
            int16_t v = x[(size_t)r * cols + c];
            for (int p = 0; p < passes; p++) v = act_i16(v);
            y[(size_t)r * cols + c] = v;
            s += (uint32_t)(int32_t)v;
            mx = v > mx ? v : mx;
        }
        rowsum[r] = (int32_t)s;
        rowmax[r] = mx;
    }
}

static void ref_copy2d(const hx_copy_desc *d) {
    for (; d; d = d->next)
        for (uint32_t r = 0; r < d->rows; r++)
            memcpy(d->dst + (size_t)r * d->dst_stride, d->src + (size_t)r * d->src_stride, d->row_bytes);
}

const hx_kernels hx_kernels_ref = {
    .name = "ref",
    .gemm_f32_prep_bytes = ref_f32_prep_bytes,
    .gemm_f32_prepare = ref_f32_prepare,
    .gemm_f32_run = ref_f32_run,
    .gemm_u8i8_prep_bytes = ref_u8i8_prep_bytes,
    .gemm_u8i8_prepare = ref_u8i8_prepare,
    .gemm_u8i8_run = ref_u8i8_run,
    .gemm_f32_run_rows = ref_f32_run_rows,
    .gemm_u8i8_run_rows = ref_u8i8_run_rows,
    .gemm_rows_align = 1,
    .vec_f32 = ref_vec_f32,
    .vec_i16 = ref_vec_i16,
    .vec_stream_f32 = ref_vec_stream_f32,
    .copy2d = ref_copy2d,
};
