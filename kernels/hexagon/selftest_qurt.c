/* The self-test's platform part on the cDSP (QuRT + HAP): the steps of the
 * first-day ladder that need the real DSP (see ../hxrun/selftest.h).
 *
 * STATUS: untested on hardware.  Written against the documented Hexagon SDK
 * API, compile-checked for v73 with the open toolchain (make sdk-check); the
 * ladder runner itself (selftest.c) is run on the host and under
 * qemu-hexagon.  Every step reports its return codes so that a failure on a
 * phone says what the DSP answered.
 *
 * VTCM acquired by vtcm_full stays held (with the power votes) for the DMA
 * and HMX steps after it, as in a run. */
#define FARF_ALWAYS 1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <HAP_compute_res.h>
#include <HAP_farf.h>
#include <HAP_perf.h>
#include <qurt.h>
#include "../common/engine.h"
#include "../common/platform.h"
#include "../hxrun/selftest.h"
#include "dma_plan.h"
#include "kernels_hexagon.h"
#include "vtcm_qurt.h"

void hx_st_sleep_ms(unsigned ms) { qurt_timer_sleep((qurt_timer_duration_t)ms * 1000u); }

/* FARF ALWAYS reaches logcat (adsprpc) even when stdout goes nowhere. */
void hx_st_log(const char *line) {
    FARF(ALWAYS, "%s", line);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static int st_hvx_units(char *d, size_t n) {
    int u = qurt_hvx_get_units(), u128 = (u >> 8) & 0xFF;
    snprintf(d, n, "qurt_hvx_get_units 0x%x: %d contexts of 128 bytes", (unsigned)u, u128);
    return u128 > 0 ? HX_ST_PASS : HX_ST_FAIL;
}

static int st_vtcm_query(char *d, size_t n) {
    unsigned int total = 0, avail = 0;
    compute_res_vtcm_page_t tl, al;
    memset(&tl, 0, sizeof tl), memset(&al, 0, sizeof al);
    int rc = HAP_compute_res_query_VTCM(0, &total, &tl, &avail, &al);
    int k = snprintf(d, n, "rc %d: %u bytes total, %u available now; pages", rc, total, avail);
    for (unsigned i = 0; i < tl.page_list_len && i < 8 && k > 0 && (size_t)k < n; i++)
        k += snprintf(d + k, n - (size_t)k, " %ux%u", tl.page_list[i].num_pages, tl.page_list[i].page_size);
    if (rc == 0 && avail < total && k > 0 && (size_t)k < n)
        snprintf(d + k, n - (size_t)k, "; another client (camera, QNN) holds VTCM now");
    return rc == 0 && total > 0 ? HX_ST_PASS : HX_ST_FAIL;
}

static int st_caps(char *d, size_t n) {
    compute_res_attr_t a;
    int r1 = HAP_compute_res_attr_init(&a), r2 = HAP_compute_res_attr_set_vtcm_param_v2(&a, 65536, 65536, 65536);
    int r3 = HX_HMX_BUILD ? HAP_compute_res_attr_set_hmx_param(&a, 1) : 0;
    snprintf(d, n, "attr_init rc %d, vtcm_param_v2 rc %d, hmx_param rc %d%s", r1, r2, r3,
             HX_HMX_BUILD ? "" : " (HVX-only build: HMX not asked)");
    return r1 == 0 && r2 == 0 && r3 == 0 ? HX_ST_PASS : HX_ST_FAIL;
}

/* Core clock against the QTimer, twice 50 ms apart: a second value well
 * below the first means the clock moved (thermal throttling, DCVS). */
static uint64_t measure_pcycles_per_us(void) {
    uint64_t q0 = HAP_perf_get_qtimer_count(), p0 = HAP_perf_get_pcycles(), q1 = q0, p1 = p0;
    while (q1 - q0 < 19200000u / 500 && p1 - p0 < 200000000ull) /* 2 ms, bounded */
        q1 = HAP_perf_get_qtimer_count(), p1 = HAP_perf_get_pcycles();
    uint64_t us = HAP_perf_qtimer_count_to_us(q1 - q0);
    return us ? (p1 - p0) / us : 0;
}

static int st_pcycles(char *d, size_t n) {
    uint64_t a = measure_pcycles_per_us();
    hx_st_sleep_ms(50);
    uint64_t b = measure_pcycles_per_us();
    snprintf(d, n, "%llu then %llu processor cycles per us (QTimer 19.2 MHz)", (unsigned long long)a,
             (unsigned long long)b);
    return a > 0 && b > 0 ? HX_ST_PASS : HX_ST_FAIL;
}

static int st_power(char *d, size_t n) {
    char err[300] = "";
    int rc = hx_power_vote(HX_HMX_BUILD, err, sizeof err);
    const char *const *v;
    int nv = hx_power_votes(&v), k = snprintf(d, n, "%s", rc ? err : "votes:");
    for (int i = 0; i < nv && k > 0 && (size_t)k < n; i++) k += snprintf(d + k, n - (size_t)k, " %s", v[i]);
    return rc == 0 ? HX_ST_PASS : HX_ST_FAIL;
}

static size_t pattern(uint8_t *p, size_t bytes) {
    uint32_t *w = (uint32_t *)p;
    size_t nw = bytes / 4, bad = 0;
    for (size_t i = 0; i < nw; i++) w[i] = (uint32_t)i * 2654435761u;
    for (size_t i = 0; i < nw; i++) bad += w[i] != (uint32_t)i * 2654435761u;
    return bad;
}

static int st_vtcm_64k(char *d, size_t n) {
    compute_res_attr_t a;
    HAP_compute_res_attr_init(&a);
    HAP_compute_res_attr_set_vtcm_param_v2(&a, 65536, 65536, 65536);
    unsigned int ctx = HAP_compute_res_acquire(&a, 100000u);
    if (!ctx) {
        snprintf(d, n, "HAP_compute_res_acquire(64 KiB) failed within 100 ms: VTCM held by another client?");
        return HX_ST_FAIL;
    }
    void *p = NULL;
    unsigned int got = 0;
    int rc = HAP_compute_res_attr_get_vtcm_ptr_v2(&a, &p, &got);
    size_t bad = rc == 0 && p ? pattern((uint8_t *)p, got < 65536 ? got : 65536) : 1;
    HAP_compute_res_release(ctx);
    snprintf(d, n, "got %u bytes at %p (rc %d), pattern test: %zu bad words", got, p, rc, bad);
    return rc == 0 && got >= 65536 && !bad ? HX_ST_PASS : HX_ST_FAIL;
}

static int st_vtcm_full(char *d, size_t n) {
    unsigned int total = 0;
    HAP_compute_res_query_VTCM(0, &total, NULL, NULL, NULL);
    size_t hmx = HX_HMX_BUILD ? HX_HMX_REGION_BYTES : 0, arena = total > hmx ? total - hmx : 0;
    char err[400] = "";
    if (hx_vtcm_init(arena & ~(size_t)4095, hmx, err, sizeof err) != 0) {
        snprintf(d, n, "%s", err);
        return HX_ST_FAIL;
    }
    size_t a = 0;
    uint8_t *base = hx_vtcm_arena(&a);
    size_t bad = pattern(base, hx_vtcm_acquired_bytes());
    snprintf(d, n, "%zu of %u bytes acquired as one page (arena %zu, HMX region %zu), pattern test: %zu bad words",
             hx_vtcm_acquired_bytes(), total, a, hmx, bad);
    return bad ? HX_ST_FAIL : HX_ST_PASS;
}

/* One thread per 128-byte context, each try-locks and holds until all tried:
 * fewer than all means another process holds HVX (the start-up hang case). */
static uint32_t hvx_arrived, hvx_go;
static int hvx_got;
static void hvx_holder(void *arg) {
    (void)arg;
    int locked = qurt_hvx_try_lock(QURT_HVX_MODE_128B) == QURT_EOK;
    __atomic_add_fetch(&hvx_got, locked, __ATOMIC_ACQ_REL);
    __atomic_add_fetch(&hvx_arrived, 1u, __ATOMIC_ACQ_REL);
    hx_word_wake_all(&hvx_arrived);
    while (!__atomic_load_n(&hvx_go, __ATOMIC_ACQUIRE)) hx_word_wait(&hvx_go, 0);
    if (locked) qurt_hvx_unlock();
}

static int st_hvx_locks(char *d, size_t n) {
    enum { MAXU = 16 };
    int units = (qurt_hvx_get_units() >> 8) & 0xFF, started = 0;
    hx_thread *t[MAXU];
    char err[300] = "";
    hvx_arrived = hvx_go = 0, hvx_got = 0;
    for (int i = 0; i < units && i < MAXU; i++, started++)
        if (!(t[i] = hx_thread_start(hvx_holder, NULL, "st_hvx", -1, err, sizeof err))) break;
    uint32_t a;
    while ((a = __atomic_load_n(&hvx_arrived, __ATOMIC_ACQUIRE)) < (uint32_t)started) hx_word_wait(&hvx_arrived, a);
    __atomic_store_n(&hvx_go, 1u, __ATOMIC_RELEASE);
    hx_word_wake_all(&hvx_go);
    for (int i = 0; i < started; i++) hx_thread_join(t[i]);
    snprintf(d, n, "%d of %d contexts try-locked%s%s", hvx_got, units, err[0] ? "; " : "", err);
    return hvx_got == units && units > 0 ? HX_ST_PASS : HX_ST_FAIL;
}

static int st_vrmpy(char *d, size_t n) {
    int rc = 0;
    if (hx_hvx_lock_within(HX_HVX_LOCK_TIMEOUT_US, &rc) != 0) {
        snprintf(d, n, "no HVX context within %u ms (try-lock rc %d)", HX_HVX_LOCK_TIMEOUT_US / 1000, rc);
        return HX_ST_FAIL;
    }
    int r = hx_st_hvx_gemm(d, n);
    qurt_hvx_unlock();
    return r;
}

/* DMA on the engine: DDR source, VTCM destination (the arena of vtcm_full). */
static int dma_case(char *d, size_t n, int windows, int links, const char *what) {
    size_t a = 0;
    uint8_t *dst = hx_vtcm_arena(&a);
    if (!dst || a < 4096) {
        snprintf(d, n, "no VTCM arena (step vtcm_full failed)");
        return HX_ST_FAIL;
    }
    uint8_t *src = (uint8_t *)hx_alloc((size_t)windows * 4096, 128);
    hx_copy_desc c[24];
    if (!src || windows * links > 24) return HX_ST_FAIL;
    for (size_t i = 0; i < (size_t)windows * 4096; i++) src[i] = (uint8_t)(i * 13 + 7);
    int rows = 32 / links, k = 0;
    for (int w = 0; w < windows; w++)
        for (int l = 0; l < links; l++, k++) {
            c[k] = (hx_copy_desc){src + (size_t)w * 4096 + (size_t)l * rows * 128,
                                  dst + (size_t)l * rows * 128,
                                  (uint32_t)rows,
                                  128,
                                  128,
                                  128,
                                  NULL};
            if (k) c[k - 1].next = &c[k];
        }
    const hx_dma_stats *s = hx_dma_stats_get();
    uint64_t ord0 = s->ordered;
    memset(dst, 0xA5, 4096);
    int rc = hx_dma_copy2d(&c[0]);
    int ok = rc == 0 && !memcmp(dst, src + (size_t)(windows - 1) * 4096, 4096);
    snprintf(d, n, "%s: hx_dma_copy2d rc %d (dmwait status and every dstate checked), %s, %llu ORDERed", what, rc,
             ok ? "copy exact" : "copy WRONG", (unsigned long long)(s->ordered - ord0));
    hx_free(src);
    return ok && (windows == 1 || s->ordered > ord0) ? HX_ST_PASS : HX_ST_FAIL;
}
static int st_dma_4k(char *d, size_t n) { return dma_case(d, n, 1, 1, "4 KiB DDR->VTCM, one descriptor"); }
static int st_dma_chain(char *d, size_t n) { return dma_case(d, n, 1, 8, "4 KiB as a chain of 8"); }
static int st_dma_order(char *d, size_t n) { return dma_case(d, n, 3, 4, "3 windows through the same rows"); }

/* Two chains back to back through the one descriptor pool: a descriptor the
 * engine read before its stores reached it would be the first chain's (a
 * stale pool: a silent wrong copy, an early stop or a fault).  The first
 * chain's destination is poisoned after it; the second must leave it so and
 * copy exactly its own rows. */
static int st_dma_back_to_back(char *d, size_t n) {
    size_t a = 0;
    uint8_t *vt = hx_vtcm_arena(&a);
    if (!vt || a < 2 * 8192) {
        snprintf(d, n, "no VTCM arena of 16 KiB (step vtcm_full failed)");
        return HX_ST_FAIL;
    }
    uint8_t *src = (uint8_t *)hx_alloc(2 * 8192, 128), *da = vt, *db = vt + 8192;
    if (!src) return HX_ST_FAIL;
    for (size_t i = 0; i < 2 * 8192; i++) src[i] = (uint8_t)(i * 29 + 5);
    hx_copy_desc c1[8], c2[3];
    for (int i = 0; i < 8; i++)
        c1[i] = (hx_copy_desc){src + i * 1024, da + i * 1024, 8, 128, 128, 128, i + 1 < 8 ? &c1[i + 1] : NULL};
    for (int i = 0; i < 3; i++)
        c2[i] = (hx_copy_desc){src + 8192 + i * 1024, db + i * 1024, 8, 128, 128, 128, i + 1 < 3 ? &c2[i + 1] : NULL};
    hx_dma_prepare_sources(c1, 8);
    hx_dma_prepare_sources(c2, 3);
    memset(vt, 0xA5, 2 * 8192);
    int r1 = hx_dma_copy2d(&c1[0]);
    int ok1 = r1 == 0 && !memcmp(da, src, 8192);
    memset(da, 0xEE, 8192);
    int r2 = hx_dma_copy2d(&c2[0]);
    int ok2 = r2 == 0 && !memcmp(db, src + 8192, 3 * 1024);
    size_t stale = 0;
    for (size_t i = 0; i < 8192; i++) stale += da[i] != 0xEE;
    hx_free(src);
    snprintf(d, n,
             "chain of 8 then chain of 3 through one pool: rc %d, %d; first copy %s, second copy %s, %zu bytes of "
             "the first chain's destination rewritten by the second (stale descriptors)",
             r1, r2, ok1 ? "exact" : "WRONG", ok2 ? "exact" : "WRONG", stale);
    return ok1 && ok2 && !stale ? HX_ST_PASS : HX_ST_FAIL;
}

#if HX_HMX_BUILD
/* One HMX tile as the runner issues M: prepared on this (set-up) thread, run
 * on an `mx` engine thread, which holds an HVX context from its start and
 * takes the HMX lock at its first run (kernels_hmx.c); it gives HMX, then
 * HVX, back on that thread when the engine stops.  On QuRT an HVX packet from
 * a thread without a context, or an HMX instruction from a thread that does
 * not hold the HMX lock, faults and ends the PD: a ladder that ran the tile
 * on its own thread would not test the path the measurement takes. */
typedef struct {
    hx_job job;
    const void *prep;
    int32_t *C;
    int held_hmx; /* the engine held the HMX lock after its run */
    hx_event done;
} hmx_tile_job;

static void hmx_tile_run(hx_job *job, hx_engine *e) {
    (void)e;
    hmx_tile_job *j = (hmx_tile_job *)job;
    hx_hmx_u8i8_run(j->prep, j->C, 64, 32, 32);
    j->held_hmx = hx_hmx_held_here();
    hx_event_signal(&j->done);
}

static int st_hmx_tile(char *d, size_t n) {
    enum { M = 64, N = 32, K = 32 };
    static uint8_t A[M * K];
    static int8_t B[K * N];
    static int32_t C[M * N], R[M * N];
    for (int i = 0; i < M * K; i++) A[i] = (uint8_t)(i * 7 + 1);
    for (int i = 0; i < K * N; i++) B[i] = (int8_t)(i * 5 - 60);
    memset(C, 0, sizeof C);
    void *ph = hx_alloc(hx_hmx_u8i8_prep_bytes(M, N, K), 2048),
         *pr = hx_alloc(hx_kernels_ref.gemm_u8i8_prep_bytes(M, N, K), 64);
    hx_hmx_u8i8_prepare(A, B, M, N, K, ph);
    static const hx_wait_policy wait = {HX_WAIT_SPIN_BLOCK, 50000};
    static hx_engine mx;
    char err[300] = "";
    if (hx_engine_start(&mx, "mx", -1, &wait, err, sizeof err) != 0) {
        snprintf(d, n, "cannot start the mx engine thread: %s", err);
        hx_free(ph), hx_free(pr);
        return HX_ST_FAIL;
    }
    static hmx_tile_job j;
    j.job.run = hmx_tile_run, j.prep = ph, j.C = C, j.held_hmx = 0;
    hx_event_reset(&j.done);
    hx_engine_push(&mx, &j.job);
    hx_event_wait(&j.done, &wait);
    int host_holds = hx_hmx_held_here();
    hx_engine_stop(&mx); /* the engine gives HMX, then HVX, back on its thread */
    hx_kernels_ref.gemm_u8i8_prepare(A, B, M, N, K, pr);
    hx_kernels_ref.gemm_u8i8_run(pr, R, M, N, K);
    int bad = 0;
    for (int i = 0; i < M * N; i++) bad += C[i] != R[i];
    hx_free(ph), hx_free(pr);
    snprintf(d, n,
             "one 64x32x32 HMX tile (HexKL) run on an mx engine thread: %d of %d outputs differ from the reference; "
             "HMX lock held by the engine after its run: %s, by the ladder thread: %s",
             bad, M * N, j.held_hmx ? "yes" : "NO", host_holds ? "YES (wrong thread)" : "no");
    return bad || !j.held_hmx || host_holds ? HX_ST_FAIL : HX_ST_PASS;
}

static int st_footprint(char *d, size_t n) {
    long fp = hx_hmx_weight_tile_footprint();
    snprintf(d, n, "rm_to_wh_i8 writes %ld bytes per 32x32 tile (runner's W_TILE 1024; -1 wrote before, -2 error)", fp);
    return fp > 0 && fp <= 1024 ? HX_ST_PASS : HX_ST_FAIL;
}
#endif

const hx_st_step hx_st_platform_steps[] = {
    {"hvx_units", st_hvx_units},
    {"vtcm_query", st_vtcm_query},
    {"compute_res_caps", st_caps},
    {"pcycles_per_us", st_pcycles},
    {"power_votes", st_power},
    {"vtcm_64k", st_vtcm_64k},
    {"vtcm_full", st_vtcm_full},
    {"hvx_locks", st_hvx_locks},
    {"hvx_vrmpy", st_vrmpy},
    {"dma_4k", st_dma_4k},
    {"dma_chain", st_dma_chain},
    {"dma_order", st_dma_order},
    {"dma_back_to_back", st_dma_back_to_back},
#if HX_HMX_BUILD
    {"hmx_tile", st_hmx_tile},
    {"hexkl_footprint", st_footprint},
#endif
    {NULL, NULL},
};
