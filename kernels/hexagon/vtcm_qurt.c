/* VTCM and HMX through HAP_compute_res (see vtcm_qurt.h).
 *
 * STATUS: written against the documented Hexagon SDK API, compile-checked
 * with the open toolchain (make sdk-check), not yet run on a simulator or
 * phone. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <HAP_compute_res.h>
#include <HAP_perf.h>
#include <qurt.h>
#include "../common/platform.h"
#include "vtcm_qurt.h"

#ifndef HX_VTCM_TIMEOUT_US
#define HX_VTCM_TIMEOUT_US 1000000u
#endif
/* The acquire's timeout is unsigned int in the SDK's header; our stand-in
 * declaration once said unsigned long long.  Checked against whichever header
 * this compiles with, so the first real SDK build confirms sdk_decls. */
_Static_assert(__builtin_types_compatible_p(__typeof__(HAP_compute_res_acquire(NULL, 0u)), unsigned int) &&
                   __builtin_types_compatible_p(__typeof__(&HAP_compute_res_acquire),
                                                unsigned int (*)(compute_res_attr_t *, unsigned int)),
               "HAP_compute_res_acquire(compute_res_attr_t *, unsigned int timeout_us) expected");

static struct {
    unsigned int ctx; /* compute-resource context, 0 = none */
    uint8_t *base;
    size_t acquired, defined;
    size_t arena_bytes, hmx_bytes;
    int arena_taken;
    int hmx_locked;
    qurt_thread_t hmx_owner; /* the thread that took the HMX lock */
    int power;               /* power votes made by hx_scratch_alloc */
} g;
static unsigned release_requests, hmx_left_locked;

static int failf(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The resource manager asks lower-priority holders to give VTCM/HMX back
 * within 5 ms, from its own thread, and the callback must not block.  A
 * trial cannot give VTCM back while engines use it, so the callback only
 * records the request (hx_release_ask); the runner sees it at the next trial
 * boundary, calls hx_release_resources and ends the run (platform.h).  The
 * trial during which it came is marked: a contender may be in its timings. */
static int release_cb(unsigned int ctx, void *client) {
    (void)ctx, (void)client;
    __atomic_add_fetch(&release_requests, 1u, __ATOMIC_RELAXED);
    hx_release_ask();
    return 0;
}

/* What was held when it was given back on request (the end record says so). */
static struct {
    uint8_t *base;
    size_t bytes, arena, hmx;
    uint64_t at_ns;
} given_back;

/* At a trial boundary: no engine touches VTCM or HMX now, and no trial
 * follows.  The power votes stay until teardown (they hold no shared unit). */
void hx_release_resources(void) {
    if (!g.ctx) return;
    hx_release_helper_run(); /* HMX unlocked by its locking engine thread first */
    given_back.base = g.base, given_back.bytes = g.acquired;
    given_back.arena = g.arena_bytes, given_back.hmx = g.hmx_bytes;
    hx_vtcm_release();
    given_back.at_ns = hx_now_ns();
}

uint64_t hx_vtcm_given_back(uint8_t **base, size_t *bytes, size_t *arena, size_t *hmx) {
    if (base) *base = given_back.base;
    if (bytes) *bytes = given_back.bytes;
    if (arena) *arena = given_back.arena;
    if (hmx) *hmx = given_back.hmx;
    return given_back.at_ns;
}

int hx_vtcm_init(size_t arena_bytes, size_t hmx_bytes, char *err, size_t errlen) {
    if (g.ctx) return 0;
    unsigned int total = 0;
    int rc = HAP_compute_res_query_VTCM(0, &total, NULL, NULL, NULL);
    if (rc != 0 || total == 0)
        return failf(err, errlen, "VTCM: HAP_compute_res_query_VTCM failed (rc %d, %u bytes): this DSP offers no VTCM",
                     rc, total);
    g.defined = total;
    /* HMX tiles want 2 KiB alignment inside the region: round the arena. */
    size_t arena = (arena_bytes + 4095) & ~(size_t)4095;
    size_t want = arena + hmx_bytes;
    if (want > total)
        return failf(err, errlen,
                     "VTCM: the scratch arena (%zu bytes) plus the HMX tile region (%zu bytes) need %zu bytes, "
                     "but this cDSP has %u bytes of VTCM: pass --scratch-bytes %zu or less",
                     arena, hmx_bytes, want, total, total > hmx_bytes ? (size_t)total - hmx_bytes : (size_t)0);
    compute_res_attr_t attr;
    if ((rc = HAP_compute_res_attr_init(&attr)) != 0)
        return failf(err, errlen, "VTCM: HAP_compute_res_attr_init failed (rc %d)", rc);
    HAP_compute_res_attr_set_serialize(&attr, 0);
    /* The whole VTCM as one page.  The page-size argument must be a size the
     * hardware has (4 KiB .. 16 MiB powers of four); asking for all of it as a
     * single page is what llama.cpp's HTP backend does and keeps the region
     * contiguous, so arena and HMX region are plain offsets. */
    if ((rc = HAP_compute_res_attr_set_vtcm_param_v2(&attr, total, total, total)) != 0)
        return failf(err, errlen, "VTCM: HAP_compute_res_attr_set_vtcm_param_v2(%u) failed (rc %d)", total, rc);
    if (hmx_bytes && (rc = HAP_compute_res_attr_set_hmx_param(&attr, 1)) != 0)
        return failf(err, errlen, "HMX: HAP_compute_res_attr_set_hmx_param failed (rc %d): no HMX on this DSP?", rc);
    if ((rc = HAP_compute_res_attr_set_release_callback(&attr, release_cb, NULL)) != 0)
        return failf(err, errlen, "VTCM: HAP_compute_res_attr_set_release_callback failed (rc %d)", rc);
    g.ctx = HAP_compute_res_acquire(&attr, HX_VTCM_TIMEOUT_US);
    if (!g.ctx)
        return failf(err, errlen,
                     "VTCM%s: HAP_compute_res_acquire(%u bytes%s) failed within %u us: another client (a QNN/HTP "
                     "session, the camera) holds VTCM%s, or this PD may not use it",
                     hmx_bytes ? "/HMX" : "", total, hmx_bytes ? " + HMX" : "", HX_VTCM_TIMEOUT_US,
                     hmx_bytes ? " or HMX" : "");
    void *p = NULL;
    unsigned int got = 0;
    rc = HAP_compute_res_attr_get_vtcm_ptr_v2(&attr, &p, &got);
    if (rc != 0 || !p || got < want) {
        HAP_compute_res_release(g.ctx);
        g.ctx = 0;
        return failf(err, errlen, "VTCM: HAP_compute_res_attr_get_vtcm_ptr_v2 gave %u of the %zu bytes needed (rc %d)",
                     got, want, rc);
    }
    g.base = (uint8_t *)p;
    g.acquired = got;
    g.arena_bytes = arena;
    g.hmx_bytes = hmx_bytes;
    return 0;
}

void hx_vtcm_release(void) {
    /* Only the locking thread may unlock (HAP_compute_res.h).  Engines give
     * HMX back on their own thread before this (hx_engine_release_self, at
     * thread exit or on the executor's suspend job); a lock still held by
     * another thread here is a bug: it is counted for the resources record
     * and left to the context's release, never unlocked from here. */
    if (g.hmx_locked && hx_hmx_unlock() != 0) hmx_left_locked++;
    if (g.ctx) HAP_compute_res_release(g.ctx);
    g.ctx = 0, g.base = NULL, g.acquired = 0, g.arena_bytes = 0, g.hmx_bytes = 0, g.arena_taken = 0;
}

uint8_t *hx_vtcm_arena(size_t *bytes) {
    if (bytes) *bytes = g.ctx ? g.arena_bytes : 0;
    return g.ctx ? g.base : NULL;
}

uint8_t *hx_vtcm_hmx_region(size_t *bytes) {
    if (bytes) *bytes = g.ctx ? g.hmx_bytes : 0;
    return g.ctx && g.hmx_bytes ? g.base + g.arena_bytes : NULL;
}

size_t hx_vtcm_defined_bytes(void) { return g.defined; }
size_t hx_vtcm_acquired_bytes(void) { return g.acquired; }
unsigned hx_vtcm_release_requests(void) { return __atomic_load_n(&release_requests, __ATOMIC_RELAXED); }

/* HAP_compute_res.h (hmx_lock/hmx_unlock): only the software thread that
 * holds the HMX lock may execute HMX instructions, and it must unlock from
 * that same thread.  The owner is kept so that a lock taken on one thread is
 * never used or given back from another: llama.cpp's HTP backend takes it
 * inside its HMX worker thread on the first job and gives it back there on a
 * suspend signal (ggml/src/ggml-hexagon/htp/hmx-queue.c, hmx_lock /
 * hmx_unlock / HMX_QUEUE_SUSPEND); this runner does the same on its `mx`
 * engine thread (kernels_hmx.c, hx_engine_release_self). */
int hx_hmx_lock(void) {
    if (!g.ctx || !g.hmx_bytes) return -1;
    qurt_thread_t self = qurt_thread_get_id();
    if (g.hmx_locked) return g.hmx_owner == self ? 0 : -2;
    if (HAP_compute_res_hmx_lock(g.ctx) != 0) return -1;
    g.hmx_locked = 1, g.hmx_owner = self;
    return 0;
}

int hx_hmx_held_here(void) { return g.hmx_locked && g.hmx_owner == qurt_thread_get_id(); }

int hx_hmx_unlock(void) {
    if (!g.hmx_locked) return 0;
    if (g.hmx_owner != qurt_thread_get_id()) return -1;
    if (g.ctx) HAP_compute_res_hmx_unlock(g.ctx);
    g.hmx_locked = 0, g.hmx_owner = 0;
    return 0;
}

unsigned hx_hmx_left_locked(void) { return hmx_left_locked; }

/* platform.h: what this engine thread holds of the on-chip units, given back
 * from this thread (the HMX lock, if it is this thread's). */
void hx_engine_release_self(void) {
    if (hx_hmx_held_here()) hx_hmx_unlock();
}

int hx_hvx_lock_within(unsigned timeout_us, int *rc) {
    uint64_t t0 = HAP_perf_get_time_us();
    for (;;) {
        int r = qurt_hvx_try_lock(QURT_HVX_MODE_128B);
        if (r == QURT_EOK) return 0;
        if (rc) *rc = r;
        if (HAP_perf_get_time_us() - t0 >= timeout_us) return -1;
        qurt_timer_sleep(1000); /* 1 ms: let the holder run */
    }
}

static unsigned ddr_fallbacks;
static void *ddr_arena; /* the arena, when it fell back to DDR */
unsigned hx_vtcm_ddr_fallbacks(void) { return ddr_fallbacks; }

/* platform.h's scratch hook: the executor's arena.  This is the device's
 * start-up point (first device-specific call, before M is prepared and
 * before any engine thread exists), so power and VTCM are set up here. */
void *hx_scratch_alloc(size_t bytes, int *on_chip) {
    char err[400];
    if (on_chip) *on_chip = 0;
    if (!g.power) {
        if (hx_power_vote(HX_HMX_BUILD, err, sizeof err) != 0) {
            fprintf(stderr, "hxrun: error: %s\n", err);
            return NULL;
        }
        g.power = 1;
    }
    if (g.arena_taken) {
        fprintf(stderr, "hxrun: error: VTCM: a second scratch arena was requested; the device has one\n");
        return NULL;
    }
    if (hx_vtcm_init(bytes, HX_HMX_BUILD ? HX_HMX_REGION_BYTES : 0, err, sizeof err) != 0) {
        if (!HX_ALLOW_FALLBACK || HX_HMX_BUILD) {
            /* With HexKL the HMX region lives in VTCM: no VTCM, no HMX. */
            fprintf(stderr, "hxrun: error: %s%s\n", err,
                    HX_HMX_BUILD ? "" : " (a DDR arena instead needs a build with HX_ALLOW_FALLBACK=1)");
            return NULL;
        }
        ddr_fallbacks++;
        fprintf(stderr, "hxrun: warning: %s; scratch arena in DDR (HX_ALLOW_FALLBACK=1)\n", err);
        return ddr_arena = hx_alloc(bytes, 2048);
    }
    g.arena_taken = 1;
    if (on_chip) *on_chip = 1;
    return g.base;
}

void hx_scratch_free(void *p) {
    /* The arena is the executor's last user of VTCM and of the votes
     * (teardown): release both with it. */
    int given = p && p == (void *)given_back.base; /* already released on request */
    int arena = p && ((g.ctx && p == (void *)g.base) || p == ddr_arena || given);
    if (p && g.ctx && p == (void *)g.base) hx_vtcm_release();
    else if (!given) hx_free(p);
    if (p == ddr_arena) ddr_arena = NULL;
    if (arena && g.power) {
        hx_power_release();
        g.power = 0;
    }
}
