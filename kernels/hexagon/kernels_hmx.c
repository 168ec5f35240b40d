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
 * Set-up (prepare, on the set-up thread) lays the weights out with HexKL's
 * rm_to_wh_i8 (HVX code: the set-up thread takes an HVX context around it)
 * and, when every weight tile fits the HMX VTCM region beside the activation
 * tiles, copies them there once (weights resident): the timed run then does
 * no weight copy.  Otherwise each column tile's K strip is copied in per run
 * with HVX vector loads and stores on the mx thread (which holds an HVX
 * context), not a scalar memcpy (counted: weight_copy_bytes).  Prepare issues no HMX instruction and takes
 * no HMX lock.
 * Locks (HAP_compute_res.h: only the software thread that holds the HMX lock
 * may execute HMX instructions, and it unlocks from that thread; qurt_hvx.h:
 * HVX instructions need an HVX context locked by the issuing thread): run()
 * is called on the `mx` engine thread, which locked an HVX context when it
 * started (platform_qurt.c) and takes the HMX lock at its first run, after
 * HVX, as public HexKL probes do (HVX, then HMX, then the accumulator
 * set-up).  It keeps both across runs, as llama.cpp's HMX queue keeps HMX
 * across ops (ggml/src/ggml-hexagon/htp/hmx-queue.c), and gives HMX back on
 * the same thread: when the thread exits, or on the executor's suspend job
 * before a release on request (hx_engine_release_self).  A run on a thread
 * where another thread holds the HMX lock is an error, not an HMX fault.
 * run(): per 64-row block, the activation tiles go into the HMX VTCM region;
 * per column tile, the accumulator is cleared, kp/32 tile multiplies issued,
 * the accumulator read out and written into C.  The activation layout and
 * the int32 read-out are HexKL HVX code run by the mx thread (which holds an
 * HVX context), so M is not HMX-only: those calls are counted per run
 * (hvx_code_calls) so that M's contention with V for HVX is on record.  When m or n is not a tile multiple the read-out
 * goes to an mp x np staging buffer first and the valid m x n part is copied to C: the header does not say that
 * copy_32b_to_submatrix clips partial tiles, and writing whole tiles into C would run past its end.  Any HexKL error
 * ends the run (no silently wrong C).
 *
 * W_TILE: HexKL's header says rm_to_wh_i8 writes a 2048-element tile, its
 * example says 1024 bytes.  hx_hmx_weight_tile_footprint() measures it with
 * guard zones; prepare() stops the run when it exceeds W_TILE (tiles would
 * overlap) instead of computing a wrong C.
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
#include <hexagon_types.h>
#include <hexkl_micro.h>
#include <qurt.h>
#include "../common/platform.h"
#include "kernels_hexagon.h"
#include "vtcm_qurt.h"

#define HDR       128
#define ACT_TILE  HEXKL_HMX_ACTIVATION_ALIGNMENT /* 2048 bytes: 64 x 32 u8 */
#define W_TILE    1024u                          /* 32 x 32 i8 */
#define ACC_BYTES (64u * 32u * 4u)
enum { HX_PREP_HMX = 1, HX_PREP_HVX = 2 };

typedef struct {
    uint32_t mode, m, n, k, mp, np, kp;
    uint32_t w_resident; /* every weight tile already in the HMX region */
    int32_t *stage;      /* mp x np read-out staging when m or n is not a tile multiple */
} prep_hdr;

static hx_hmx_stats stats;
const hx_hmx_stats *hx_hmx_stats_get(void) { return &stats; }

/* VTCM <- DDR with 128-byte HVX loads and stores: both ends are 128-byte
 * aligned (weight tiles in the HMX region, HEXKL_HMX_WEIGHTS_ALIGNMENT; the
 * prepared strips sit at 2 KiB-aligned offsets) and n is a multiple of
 * W_TILE.  Runs on the mx thread, which holds an HVX context. */
static void hvx_copy(uint8_t *dst, const uint8_t *src, size_t n) {
    HVX_Vector *d = (HVX_Vector *)dst;
    const HVX_Vector *q = (const HVX_Vector *)src;
    for (size_t i = 0; i < n / sizeof(HVX_Vector); i++) d[i] = q[i];
}

static inline uint32_t rup(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }
static inline uint8_t *al(const void *p, uintptr_t a) { return (uint8_t *)(((uintptr_t)p + a - 1) & ~(a - 1)); }

/* VTCM offsets inside the HMX region for kt k-tiles. */
typedef struct {
    uint32_t act, w, res, cfg, end;
} vlayout;
/* wtiles: weight tiles held at once (kt: one column strip; all: resident). */
static vlayout layout_w(uint32_t kt, uint32_t wtiles) {
    vlayout v;
    v.act = 0;
    v.w = rup(v.act + kt * ACT_TILE, HEXKL_HMX_WEIGHTS_ALIGNMENT);
    v.res = rup(v.w + wtiles * W_TILE, ACT_TILE);
    v.cfg = rup(v.res + ACC_BYTES, HEXKL_HMX_CONFIG_ALIGNMENT);
    v.end = v.cfg + hexkl_micro_hmx_config_size();
    return v;
}
static vlayout layout_for(uint32_t kt) { return layout_w(kt, kt); }

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

/* Bytes rm_to_wh_i8 writes for one 32x32 tile, measured between guard
 * zones filled with two patterns (a written byte equals at most one); -1 if
 * it wrote before its offset, -2 on a HexKL error or no HVX context. */
long hx_hmx_weight_tile_footprint(void) {
    enum { GUARD = 4096, AREA = 3 * 4096 };
    static uint8_t buf[AREA] __attribute__((aligned(2048)));
    static int8_t w[32 * 32];
    for (int i = 0; i < 32 * 32; i++) w[i] = (int8_t)(i * 37 + 11);
    int lrc = 0;
    if (hx_hvx_lock_within(HX_HVX_LOCK_TIMEOUT_US, &lrc) != 0) return -2;
    long extent = 0;
    const uint8_t fills[2] = {0xA5, 0x5A};
    int rc = AEE_SUCCESS, before = 0;
    for (int f = 0; f < 2 && rc == AEE_SUCCESS; f++) {
        memset(buf, fills[f], sizeof buf);
        rc = hexkl_micro_hmx_rm_to_wh_i8(buf, GUARD, w, 0, 0, 32);
        for (int i = 0; i < GUARD; i++) before |= buf[i] != fills[f];
        for (long i = AREA - 1; i >= GUARD; i--)
            if (buf[i] != fills[f]) {
                if (i - GUARD + 1 > extent) extent = i - GUARD + 1;
                break;
            }
    }
    qurt_hvx_unlock();
    return rc != AEE_SUCCESS ? -2 : before ? -1 : extent;
}

static int check_tile_footprint(void) {
    static long fp;
    if (!fp) fp = hx_hmx_weight_tile_footprint();
    if (fp < 0 || fp > (long)W_TILE) {
        hx_device_fatal("M: HexKL's rm_to_wh_i8 %s (W_TILE is %u bytes): weight tiles would overlap; fix W_TILE in "
                        "kernels/hexagon/kernels_hmx.c (hxrun --selftest, step hexkl_footprint)",
                        fp == -1   ? "wrote before its tile"
                        : fp == -2 ? "failed or got no HVX context in the footprint probe"
                                   : "writes more than one tile",
                        W_TILE);
        return -1;
    }
    stats.tile_footprint = (uint32_t)fp;
    return 0;
}

/* Set-up: the weight tiles into the HMX region once, when they all fit. */
static void place_weights(prep_hdr *h, const uint8_t *wt) {
    uint32_t ktn = h->kp / 32, tiles = ktn * (h->np / 32);
    size_t region = 0;
    uint8_t *vt = hx_vtcm_hmx_region(&region);
    h->w_resident = vt && layout_w(ktn, tiles).end <= region;
    if (h->w_resident) memcpy(vt + layout_w(ktn, tiles).w, wt, (size_t)tiles * W_TILE);
    stats.weights_resident = h->w_resident;
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
        if (!HX_ALLOW_FALLBACK) {
            hx_device_fatal("M: k=%d needs %u bytes of HMX tile space but the HMX VTCM region has %zu "
                            "(raise HX_HMX_REGION_BYTES, lower k, or build with HX_ALLOW_FALLBACK=1 to run M on HVX)",
                            k, layout_for(rup((uint32_t)k, 32) / 32).end, region);
            h->mode = 0; /* no layout: a run refuses it */
            return;
        }
        h->mode = HX_PREP_HVX;
        stats.prepared_hmx = 0;
        hx_kernels_hvx.gemm_u8i8_prepare(A, B, m, n, k, body);
        return;
    }
    h->mode = HX_PREP_HMX;
    stats.prepared_hmx = 1;
    if (check_tile_footprint() != 0) {
        h->mode = 0;
        return;
    }
    if (h->mp != (uint32_t)m || h->np != (uint32_t)n) {
        h->stage = (int32_t *)malloc((size_t)h->mp * h->np * sizeof(int32_t));
        if (!h->stage) {
            hx_device_fatal("M: out of memory for the %ux%u HMX read-out staging buffer", h->mp, h->np);
            h->mode = 0;
            return;
        }
        stats.padded_output = 1;
    }
    uint8_t *apad = al(body, ACT_TILE);
    memset(apad, 0, (size_t)h->mp * h->kp);
    for (int i = 0; i < m; i++) memcpy(apad + (size_t)i * h->kp, A + (size_t)i * k, (size_t)k);
    /* Weight tiles from a zero-padded row-major copy of B. */
    int8_t *bpad = (int8_t *)calloc((size_t)h->kp * h->np, 1);
    if (!bpad) {
        hx_device_fatal("M: out of memory for the %ux%u padded weight copy", h->kp, h->np);
        h->mode = 0;
        return;
    }
    for (int r = 0; r < k; r++) memcpy(bpad + (size_t)r * h->np, B + (size_t)r * n, (size_t)n);
    uint8_t *wt = apad + (size_t)h->mp * h->kp;
    uint32_t ktn = h->kp / 32;
    /* HexKL's layout transform is HVX code, and this is the host thread:
     * take a context for the call.  Prepare runs at set-up, before any
     * engine thread holds one, so this cannot wait on the engines. */
    int lrc = 0;
    if (hx_hvx_lock_within(HX_HVX_LOCK_TIMEOUT_US, &lrc) != 0) {
        hx_device_fatal("M: no HVX context for the HMX weight layout within %u ms (qurt_hvx_try_lock rc %d)",
                        HX_HVX_LOCK_TIMEOUT_US / 1000, lrc);
        free(bpad);
        h->mode = 0;
        return;
    }
    int rc = AEE_SUCCESS;
    for (uint32_t nt = 0; rc == AEE_SUCCESS && nt < h->np / 32; nt++)
        for (uint32_t kt = 0; rc == AEE_SUCCESS && kt < ktn; kt++)
            rc = hexkl_micro_hmx_rm_to_wh_i8(wt, (nt * ktn + kt) * W_TILE, bpad, kt, nt, h->np);
    qurt_hvx_unlock();
    free(bpad);
    if (rc != AEE_SUCCESS) {
        hx_device_fatal("M: hexkl_micro_hmx_rm_to_wh_i8 failed (0x%x)", (unsigned)rc);
        h->mode = 0;
        return;
    }
    place_weights(h, wt);
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
    if (hx_failure()) return; /* the run has failed already (reported): issue nothing more */
    if (h->mode != HX_PREP_HMX || !vt) {
        hx_device_fatal("M: HMX run without a prepared HMX layout or HMX VTCM region");
        return;
    }
    /* This thread's HMX lock: taken at its first run (the verification round,
     * before any timed trial), then already held. */
    int lrc = hx_hmx_lock();
    if (lrc != 0) {
        hx_device_fatal(lrc == -2 ? "M: the HMX lock is held by another thread; HMX instructions may run only on the "
                                    "thread that holds it (HAP_compute_res.h): M must run on the mx engine thread"
                                  : "M: HAP_compute_res_hmx_lock failed on the mx engine thread");
        return;
    }
    int32_t *out = h->stage ? h->stage : C;
    uint32_t orows = h->stage ? h->mp : (uint32_t)m, ocols = h->stage ? h->np : (uint32_t)n;
    const uint8_t *apad = al(body, ACT_TILE);
    const uint8_t *wt = apad + (size_t)h->mp * h->kp;
    uint32_t ktn = h->kp / 32;
    vlayout v = h->w_resident ? layout_w(ktn, ktn * (h->np / 32)) : layout_for(ktn);
    uint64_t hvx_calls = 0; /* HexKL calls that run HVX code on this thread */
    int rc = hexkl_micro_hmx_setup_acc_read_int32(vt, v.cfg);
    for (uint32_t rb = 0; rc == AEE_SUCCESS && rb < h->mp / 64; rb++) {
        for (uint32_t kt = 0; rc == AEE_SUCCESS && kt < ktn; kt++, hvx_calls++)
            rc = hexkl_micro_hmx_copy_submatrix_to_8b_activation(vt, v.act + kt * ACT_TILE, apad, rb, kt, h->mp, h->kp);
        for (uint32_t nt = 0; rc == AEE_SUCCESS && nt < h->np / 32; nt++) {
            uint32_t w0 = v.w + (h->w_resident ? nt * ktn * W_TILE : 0);
            if (!h->w_resident) {
                hvx_copy(vt + v.w, wt + (size_t)nt * ktn * W_TILE, (size_t)ktn * W_TILE);
                stats.weight_copy_bytes += (uint64_t)ktn * W_TILE;
            }
            hexkl_micro_hmx_acc_clear_int32();
            for (uint32_t kt = 0; rc == AEE_SUCCESS && kt < ktn; kt++)
                rc = hexkl_micro_hmx_mm_u8i8(vt, v.act + kt * ACT_TILE, w0 + kt * W_TILE);
            if (rc == AEE_SUCCESS) rc = hexkl_micro_hmx_acc_read_int32(vt, v.cfg, v.res);
            if (rc == AEE_SUCCESS) rc = hexkl_micro_hmx_copy_32b_to_submatrix(vt, v.res, out, rb, nt, orows, ocols);
            hvx_calls += 2;
        }
    }
    stats.hvx_code_calls += hvx_calls;
    if (rc != AEE_SUCCESS) {
        hx_device_fatal("M: a HexKL HMX call failed (0x%x)", (unsigned)rc);
        return;
    }
    if (h->stage)
        for (int i = 0; i < m; i++)
            memcpy(C + (size_t)i * n, h->stage + (size_t)i * h->np, (size_t)n * sizeof(int32_t));
    stats.runs_hmx++;
}
