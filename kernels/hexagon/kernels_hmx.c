/* M on the HMX matrix engine through Qualcomm HexKL's micro API.
 *
 * STATUS: written against the documented HexKL micro API (hexkl_micro.h)
 * and Hexagon SDK, compile-checked against declarations of that API with
 * the open toolchain (make sdk-check), not yet run on a simulator or phone.
 * Links only with the SDK's hexagon-clang 19+ and HexKL's library.
 *
 * u8 x i8 -> i32, exact like every integer backend.  HMX multiplies a 64x32
 * u8 activation tile by a 32x32 i8 weight tile into a 64x32 int32
 * accumulator (hexkl_micro_hmx_mm_u8i8).
 *
 * Prepared layout (prepare(), before timing), after a 128-byte header:
 *   A_pad  mp x kp u8, row-major, zero-padded (mp = 64-multiple,
 *          kp = 32-multiple): the zero-padded source that
 *          hexkl_micro_hmx_copy_submatrix_to_8b_activation requires.
 *   W      for each column tile nt, for each k tile kt: the 1024-byte HMX
 *          weight-layout tile made by hexkl_micro_hmx_rm_to_wh_i8, so one
 *          column tile's K strip is contiguous and moves in one copy.
 * run(): per 64-row block, the activation tiles go into the HMX VTCM region;
 * per column tile, its K strip of weight tiles is copied in, the accumulator
 * cleared, kp/32 tile multiplies issued, the accumulator read out and
 * written into C.  When m or n is not a tile multiple the read-out goes to
 * an mp x np staging buffer first and the valid m x n part is copied to C:
 * the header does not say that copy_32b_to_submatrix clips partial tiles,
 * and writing whole tiles into C would run past its end.  The HMX lock is
 * held for the call; any HexKL error ends the run (no silently wrong C).
 *
 * Shapes whose tiles do not fit the HMX VTCM region are an error, unless the
 * build allows fallbacks (HX_ALLOW_FALLBACK=1): then they are prepared in
 * the HVX layout (header mode HX_PREP_HVX), run on HVX, and every run is
 * counted per engine in the resources record (hx_hmx_stats_get).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <AEEStdErr.h>
#include <hexkl_micro.h>
#include <qurt.h>
#include "kernels_hexagon.h"
#include "vtcm_qurt.h"

#define HDR       128
#define ACT_TILE  HEXKL_HMX_ACTIVATION_ALIGNMENT /* 2048 bytes: 64 x 32 u8 */
#define W_TILE    1024u                          /* 32 x 32 i8 */
#define ACC_BYTES (64u * 32u * 4u)
enum { HX_PREP_HMX = 1, HX_PREP_HVX = 2 };

typedef struct {
    uint32_t mode, m, n, k, mp, np, kp;
    int32_t *stage; /* mp x np read-out staging when m or n is not a tile multiple */
} prep_hdr;

static hx_hmx_stats stats;
const hx_hmx_stats *hx_hmx_stats_get(void) { return &stats; }

static inline uint32_t rup(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }
static inline uint8_t *al(const void *p, uintptr_t a) { return (uint8_t *)(((uintptr_t)p + a - 1) & ~(a - 1)); }

/* VTCM offsets inside the HMX region for kt k-tiles. */
typedef struct {
    uint32_t act, w, res, cfg, end;
} vlayout;
static vlayout layout_for(uint32_t kt) {
    vlayout v;
    v.act = 0;
    v.w = rup(v.act + kt * ACT_TILE, HEXKL_HMX_WEIGHTS_ALIGNMENT);
    v.res = rup(v.w + kt * W_TILE, ACT_TILE);
    v.cfg = rup(v.res + ACC_BYTES, HEXKL_HMX_CONFIG_ALIGNMENT);
    v.end = v.cfg + hexkl_micro_hmx_config_size();
    return v;
}

static int fits_hmx(int k) {
    size_t region = 0;
    if (!hx_vtcm_hmx_region(&region)) return 0;
    return layout_for(rup((uint32_t)k, 32) / 32).end <= region;
}

static size_t hmx_body(uint32_t m, uint32_t n, uint32_t k) {
    uint32_t mp = rup(m, 64), np = rup(n, 32), kp = rup(k, 32);
    return ACT_TILE + (size_t)mp * kp + (size_t)(np / 32) * (kp / 32) * W_TILE;
}

size_t hx_hmx_u8i8_prep_bytes(int m, int n, int k) {
    size_t a = hmx_body(m, n, k), b = hx_kernels_hvx.gemm_u8i8_prep_bytes(m, n, k);
    return HDR + (a > b ? a : b);
}

void hx_hmx_u8i8_prepare(const uint8_t *A, const int8_t *B, int m, int n, int k, void *prep) {
    prep_hdr *h = (prep_hdr *)prep;
    uint8_t *body = (uint8_t *)prep + HDR;
    h->m = m, h->n = n, h->k = k;
    h->mp = rup(m, 64), h->np = rup(n, 32), h->kp = rup(k, 32);
    h->stage = NULL;
    if (!fits_hmx(k)) {
        size_t region = 0;
        hx_vtcm_hmx_region(&region);
        if (!HX_ALLOW_FALLBACK)
            hx_device_fatal("M: k=%d needs %u bytes of HMX tile space but the HMX VTCM region has %zu "
                            "(raise HX_HMX_REGION_BYTES, lower k, or build with HX_ALLOW_FALLBACK=1 to run M on HVX)",
                            k, layout_for(rup((uint32_t)k, 32) / 32).end, region);
        h->mode = HX_PREP_HVX;
        stats.prepared_hmx = 0;
        hx_kernels_hvx.gemm_u8i8_prepare(A, B, m, n, k, body);
        return;
    }
    h->mode = HX_PREP_HMX;
    stats.prepared_hmx = 1;
    if (h->mp != (uint32_t)m || h->np != (uint32_t)n) {
        h->stage = (int32_t *)malloc((size_t)h->mp * h->np * sizeof(int32_t));
        if (!h->stage) hx_device_fatal("M: out of memory for the %ux%u HMX read-out staging buffer", h->mp, h->np);
        stats.padded_output = 1;
    }
    uint8_t *apad = al(body, ACT_TILE);
    memset(apad, 0, (size_t)h->mp * h->kp);
    for (int i = 0; i < m; i++) memcpy(apad + (size_t)i * h->kp, A + (size_t)i * k, (size_t)k);
    /* Weight tiles from a zero-padded row-major copy of B. */
    int8_t *bpad = (int8_t *)calloc((size_t)h->kp * h->np, 1);
    if (!bpad) hx_device_fatal("M: out of memory for the %ux%u padded weight copy", h->kp, h->np);
    for (int r = 0; r < k; r++) memcpy(bpad + (size_t)r * h->np, B + (size_t)r * n, (size_t)n);
    uint8_t *wt = apad + (size_t)h->mp * h->kp;
    uint32_t ktn = h->kp / 32;
    /* HexKL's layout transform is HVX code, and this is the host thread:
     * take a context for the call.  Prepare runs at set-up, before any
     * engine thread holds one, so this cannot wait on the engines. */
    int lrc = qurt_hvx_lock(QURT_HVX_MODE_128B);
    if (lrc != QURT_EOK) hx_device_fatal("M: qurt_hvx_lock for the HMX weight layout failed (rc %d)", lrc);
    int rc = AEE_SUCCESS;
    for (uint32_t nt = 0; rc == AEE_SUCCESS && nt < h->np / 32; nt++)
        for (uint32_t kt = 0; rc == AEE_SUCCESS && kt < ktn; kt++)
            rc = hexkl_micro_hmx_rm_to_wh_i8(wt, (nt * ktn + kt) * W_TILE, bpad, kt, nt, h->np);
    qurt_hvx_unlock();
    free(bpad);
    if (rc != AEE_SUCCESS) hx_device_fatal("M: hexkl_micro_hmx_rm_to_wh_i8 failed (0x%x)", (unsigned)rc);
}

void hx_hmx_u8i8_run(const void *prep, int32_t *C, int m, int n, int k) {
    const prep_hdr *h = (const prep_hdr *)prep;
    const uint8_t *body = (const uint8_t *)prep + HDR;
    if (h->mode == HX_PREP_HVX) {
        stats.runs_hvx++;
        hx_kernels_hvx.gemm_u8i8_run(body, C, m, n, k);
        return;
    }
    size_t region = 0;
    uint8_t *vt = hx_vtcm_hmx_region(&region);
    if (h->mode != HX_PREP_HMX || !vt) hx_device_fatal("M: HMX run without a prepared HMX layout or HMX VTCM region");
    int32_t *out = h->stage ? h->stage : C;
    uint32_t orows = h->stage ? h->mp : (uint32_t)m, ocols = h->stage ? h->np : (uint32_t)n;
    const uint8_t *apad = al(body, ACT_TILE);
    const uint8_t *wt = apad + (size_t)h->mp * h->kp;
    uint32_t ktn = h->kp / 32;
    vlayout v = layout_for(ktn);
    if (hx_hmx_lock() != 0) hx_device_fatal("M: HAP_compute_res_hmx_lock failed");
    int rc = hexkl_micro_hmx_setup_acc_read_int32(vt, v.cfg);
    for (uint32_t rb = 0; rc == AEE_SUCCESS && rb < h->mp / 64; rb++) {
        for (uint32_t kt = 0; rc == AEE_SUCCESS && kt < ktn; kt++)
            rc = hexkl_micro_hmx_copy_submatrix_to_8b_activation(vt, v.act + kt * ACT_TILE, apad, rb, kt, h->mp, h->kp);
        for (uint32_t nt = 0; rc == AEE_SUCCESS && nt < h->np / 32; nt++) {
            memcpy(vt + v.w, wt + (size_t)nt * ktn * W_TILE, (size_t)ktn * W_TILE);
            hexkl_micro_hmx_acc_clear_int32();
            for (uint32_t kt = 0; rc == AEE_SUCCESS && kt < ktn; kt++)
                rc = hexkl_micro_hmx_mm_u8i8(vt, v.act + kt * ACT_TILE, v.w + kt * W_TILE);
            if (rc == AEE_SUCCESS) rc = hexkl_micro_hmx_acc_read_int32(vt, v.cfg, v.res);
            if (rc == AEE_SUCCESS) rc = hexkl_micro_hmx_copy_32b_to_submatrix(vt, v.res, out, rb, nt, orows, ocols);
        }
    }
    hx_hmx_unlock();
    if (rc != AEE_SUCCESS) hx_device_fatal("M: a HexKL HMX call failed (0x%x)", (unsigned)rc);
    if (h->stage)
        for (int i = 0; i < m; i++)
            memcpy(C + (size_t)i * n, h->stage + (size_t)i * h->np, (size_t)n * sizeof(int32_t));
    stats.runs_hmx++;
}
