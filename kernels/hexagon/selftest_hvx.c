/* The self-test's backend part on Hexagon (hexagon-qemu and the device):
 *   hvx_vrmpy  the HVX u8 x i8 GEMM (vrmpy) against the scalar reference on
 *              a shape with tails in m, n and k;
 *   dma_model  user-DMA descriptors for a 4 KiB copy and for repeat windows
 *              through the same rows (ORDER), issued back to back through
 *              one pool as dma_hexagon.c issues them, built by dma_plan.c and
 *              executed by a software model of the type-1 transfer (the
 *              descriptor fields, not the engine: on a phone the dma_* steps
 *              of selftest_qurt.c drive the engine itself).
 * The caller holds an HVX context where the platform needs one (QuRT). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../hxrun/selftest.h"
#include "dma_plan.h"
#include "kernels_hexagon.h"

int hx_st_hvx_gemm(char *d, size_t n) {
    enum { M = 37, N = 70, K = 45 };
    static uint8_t A[M * K];
    static int8_t B[K * N];
    static int32_t C[M * N], R[M * N];
    uint32_t s = 12345;
    for (int i = 0; i < M * K; i++) A[i] = (uint8_t)((s = s * 1103515245u + 12345u) >> 24);
    for (int i = 0; i < K * N; i++) B[i] = (int8_t)((s = s * 1103515245u + 12345u) >> 24);
    void *ph = malloc(hx_kernels_hvx.gemm_u8i8_prep_bytes(M, N, K) + 128);
    void *pr = malloc(hx_kernels_ref.gemm_u8i8_prep_bytes(M, N, K) + 128);
    if (!ph || !pr) {
        free(ph), free(pr);
        snprintf(d, n, "out of memory");
        return HX_ST_FAIL;
    }
    hx_kernels_hvx.gemm_u8i8_prepare(A, B, M, N, K, ph);
    hx_kernels_hvx.gemm_u8i8_run(ph, C, M, N, K);
    hx_kernels_ref.gemm_u8i8_prepare(A, B, M, N, K, pr);
    hx_kernels_ref.gemm_u8i8_run(pr, R, M, N, K);
    free(ph), free(pr);
    int bad = 0;
    for (int i = 0; i < M * N; i++) bad += C[i] != R[i];
    snprintf(d, n, "HVX GEMM %dx%dx%d (vrmpy): %d of %d outputs differ from the reference", M, N, K, bad, M * N);
    return bad ? HX_ST_FAIL : HX_ST_PASS;
}

static uint8_t *fake_lo, *fake_hi; /* the model's "VTCM" */
static int model_in_vtcm(const void *p, size_t n) {
    const uint8_t *q = (const uint8_t *)p;
    return q >= fake_lo && q + n <= fake_hi;
}
static void model_clean(const void *p, size_t n, int inv) { (void)p, (void)n, (void)inv; }
/* The engine model sees each descriptor as of its last release (dma_plan.h):
 * submitted as dma_hexagon.c submits, then executed along what it saw. */
static hx_dma_model model;
static int model_execute(hexagon_udma_descriptor_type1_t *x, int n, void *ctx) {
    (void)ctx;
    hx_dma_submit(x, n, &hx_dma_model_hw, &model);
    return hx_dma_model_run(&model);
}

static int st_dma_model(char *d, size_t n) {
    static uint8_t src[3 * 4096], dst[4096];
    static hexagon_udma_descriptor_type1_t pool[8] __attribute__((aligned(32)));
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 7 + 3);
    fake_lo = dst, fake_hi = dst + sizeof dst;
    const hx_dma_env env = {model_in_vtcm, model_clean, 0};
    hx_dma_src_clean cs = {0, 0};
    hx_dma_stats st = {0};
    /* 4 KiB as 32 rows of 128 bytes, then three windows through the same rows */
    hx_copy_desc one = {src, dst, 32, 128, 128, 128, NULL};
    hx_copy_desc w[3];
    for (int i = 0; i < 3; i++) w[i] = (hx_copy_desc){src + (size_t)i * 4096, dst, 32, 128, 128, 128, NULL};
    w[0].next = &w[1], w[1].next = &w[2];
    hx_dma_model_init(&model, pool, 8);
    int ok = hx_dma_issue(&one, pool, 8, &env, &cs, &st, model_execute, NULL) == 0 && !memcmp(dst, src, 4096);
    uint64_t ordered0 = st.ordered;
    /* right after the first chain, through the same pool: nothing stale */
    ok = ok && hx_dma_issue(&w[0], pool, 8, &env, &cs, &st, model_execute, NULL) == 0 &&
         !memcmp(dst, src + 2 * 4096, 4096) && st.ordered > ordered0;
    snprintf(d, n,
             "4 KiB copy, then 3 overlapping windows (%llu ORDERed descriptors) back to back through one pool, "
             "under the software model (each descriptor released, then dmstart/dmlink)%s%s",
             (unsigned long long)st.ordered, ok ? "" : ": WRONG result or no ORDER; ", ok ? "" : model.why);
    return ok ? HX_ST_PASS : HX_ST_FAIL;
}

const hx_st_step hx_st_backend_steps[] = {
    {"hvx_vrmpy", hx_st_hvx_gemm},
    {"dma_model", st_dma_model},
    {NULL, NULL},
};
