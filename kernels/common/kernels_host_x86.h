/* 8-lane helpers shared by the AVX2 and AVX-512 host kernels (both files
 * are compiled with at least AVX2): the V stream variant's per-element
 * hard-swish and its row reduction, in exactly the generic kernel's order
 * (8 partial sums, lane i holding elements c = i mod 8 in order; then the
 * lanes summed 0..7; then the tail), so all variants agree bit for bit. */
#ifndef HX_KERNELS_HOST_X86_H
#define HX_KERNELS_HOST_X86_H
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

/* The V stream kernels prefetch x this many floats (8 KiB) ahead: the
 * hardware prefetcher stops at each 4 KiB page, a software prefetch does
 * not (a prefetch past the array's end never faults).  Measured on a shared
 * 2-core Xeon: +4-8 points of the single-thread read rate, in noise. */
#define HX_HOST_STREAM_AHEAD 2048

/* min/max with the constant first: NaN and -0 pass through as in the
 * reference's g < 0 ? 0 : (g > 6 ? 6 : g). */
static inline __m256 hx_host_hswish_v8(__m256 v) {
    __m256 g = _mm256_add_ps(v, _mm256_set1_ps(3.0f));
    g = _mm256_min_ps(_mm256_set1_ps(6.0f), _mm256_max_ps(_mm256_setzero_ps(), g));
    return _mm256_mul_ps(_mm256_mul_ps(v, g), _mm256_set1_ps(1.0f / 6.0f));
}

/* Eight elements through `passes` hard-swishes, stored (cached) at y. */
static inline __m256 hx_host_hswish8(const float *x, float *y, int passes) {
    __m256 v = _mm256_loadu_ps(x);
    for (int p = 0; p < passes; p++) v = hx_host_hswish_v8(v);
    _mm256_storeu_ps(y, v);
    return v;
}

typedef struct {
    __m256 s, mx;
} hx_host_red8;
static inline hx_host_red8 hx_host_red8_init(void) {
    return (hx_host_red8){_mm256_setzero_ps(), _mm256_set1_ps(-INFINITY)};
}
/* max_ps(v, mx) is v > mx ? v : mx, the generic kernel's select. */
static inline void hx_host_red8_add(hx_host_red8 *r, __m256 v) {
    r->s = _mm256_add_ps(r->s, v);
    r->mx = _mm256_max_ps(v, r->mx);
}
/* Lanes in order, then the scalar tail c..cols of the row. */
static inline void hx_host_red8_finish(const hx_host_red8 *r, const float *xr, float *yr, int c, int cols, int passes,
                                       float *sum, float *max) {
    float s[8], mx[8], ss = 0.0f, mm = -INFINITY;
    _mm256_storeu_ps(s, r->s);
    _mm256_storeu_ps(mx, r->mx);
    for (int i = 0; i < 8; i++) ss += s[i], mm = mx[i] > mm ? mx[i] : mm;
    hx_host_stream_tail(xr, yr, c, cols, passes, &ss, &mm);
    *sum = ss;
    *max = mm;
}
#endif
