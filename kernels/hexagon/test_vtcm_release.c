/* vtcm_qurt.c's answer to a release request, against a stub SDK.
 *
 * Built for the host with the SDK declarations (sdk_decls/) and the stub
 * HAP_compute_res / HAP_perf / QuRT functions below, which keep a fake VTCM,
 * a clock the test advances, and the release callback vtcm_qurt.c registers.
 * The test fires that callback in the middle of trial FIRE_AT, as the
 * resource manager would, and does at each trial boundary what the runner's
 * protocol does (hxrun/protocol.c, release_at_boundary).  Known answer: the
 * callback returns at once without releasing; the trials before FIRE_AT see
 * no request; at FIRE_AT's boundary the context is released exactly once,
 * HMX (HexKL builds) unlocked first, 600 us after the request (within the 5 ms the SDK
 * asks); the teardown's hx_scratch_free then neither releases again nor
 * frees the VTCM pointer, and drops the power votes once.
 *
 *   cc -std=gnu11 -DHX_WITH_HEXKL=1 -Ikernels/hexagon/sdk_decls \
 *      kernels/hexagon/test_vtcm_release.c kernels/hexagon/vtcm_qurt.c
 * prints "ok" and exits 0, or names the first broken expectation and exits 1.
 * (tests/hexagon/test_vtcm_release.py builds and runs it.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <HAP_compute_res.h>
#include <HAP_perf.h>
#include <qurt.h>
#include "../common/platform.h"
#include "vtcm_qurt.h"

#define VTCM_BYTES (4u << 20)
#define CTX_ID     7u
#define FIRE_AT    3
#define NTRIALS    8

static _Alignas(4096) unsigned char vtcm[VTCM_BYTES];
static struct {
    uint64_t now_us;
    int (*cb)(unsigned int, void *);
    void *cb_client;
    int acquired, releases, hmx_locked, hmx_unlocks, unlock_before_release;
    uint64_t fired_us, released_us;
    int power_votes, power_releases, frees_of_vtcm;
} stub;

/* ---- the stub SDK ---- */
int HAP_compute_res_query_VTCM(unsigned int app, unsigned int *total, compute_res_vtcm_page_t *tl, unsigned int *avail,
                               compute_res_vtcm_page_t *al) {
    (void)app, (void)tl, (void)al;
    if (total) *total = VTCM_BYTES;
    if (avail) *avail = VTCM_BYTES;
    return 0;
}
int HAP_compute_res_attr_init(compute_res_attr_t *attr) {
    memset(attr, 0, sizeof *attr);
    return 0;
}
int HAP_compute_res_attr_set_serialize(compute_res_attr_t *attr, unsigned char b) {
    (void)attr, (void)b;
    return 0;
}
int HAP_compute_res_attr_set_vtcm_param_v2(compute_res_attr_t *attr, unsigned int size, unsigned int page,
                                           unsigned int min) {
    (void)page, (void)min;
    attr->attributes[0] = size;
    return 0;
}
int HAP_compute_res_attr_set_hmx_param(compute_res_attr_t *attr, unsigned char b) {
    attr->attributes[1] = b;
    return 0;
}
int HAP_compute_res_attr_set_release_callback(compute_res_attr_t *attr, int (*cb)(unsigned int, void *), void *client) {
    (void)attr;
    stub.cb = cb, stub.cb_client = client;
    return 0;
}
unsigned int HAP_compute_res_acquire(compute_res_attr_t *attr, unsigned int timeout_us) {
    (void)attr, (void)timeout_us;
    stub.acquired = 1;
    return CTX_ID;
}
int HAP_compute_res_attr_get_vtcm_ptr_v2(compute_res_attr_t *attr, void **p, unsigned int *size) {
    *p = vtcm, *size = (unsigned int)attr->attributes[0];
    return 0;
}
int HAP_compute_res_release(unsigned int ctx) {
    if (ctx != CTX_ID) return -1;
    stub.releases++, stub.released_us = stub.now_us;
    stub.unlock_before_release = !stub.hmx_locked;
    return 0;
}
int HAP_compute_res_hmx_lock(unsigned int ctx) {
    stub.hmx_locked = ctx == CTX_ID;
    return stub.hmx_locked ? 0 : -1;
}
int HAP_compute_res_hmx_unlock(unsigned int ctx) {
    (void)ctx;
    stub.hmx_locked = 0, stub.hmx_unlocks++;
    return 0;
}
uint64_t HAP_perf_get_time_us(void) { return stub.now_us; }
qurt_thread_t qurt_thread_get_id(void) { return 1; } /* one thread here: the lock's owner */
int qurt_hvx_try_lock(qurt_hvx_mode_t mode) {
    (void)mode;
    return QURT_EOK;
}
int qurt_timer_sleep(qurt_timer_duration_t us) {
    stub.now_us += us;
    return 0;
}
/* ---- what vtcm_qurt.c takes from the rest of the device build ---- */
uint64_t hx_now_ns(void) { return stub.now_us * 1000u; }
int hx_power_vote(int hmx, char *err, size_t errlen) {
    (void)hmx, (void)err, (void)errlen;
    stub.power_votes++;
    return 0;
}
void hx_power_release(void) { stub.power_releases++; }
void *hx_alloc(size_t bytes, size_t align) {
    (void)align;
    return malloc(bytes);
}
void hx_free(void *p) {
    if (p == (void *)vtcm) stub.frees_of_vtcm++;
    else free(p);
}

/* ---- the test ---- */
static int failures;
static void expect(int ok, const char *what) {
    if (!ok) fprintf(stderr, "test_vtcm_release: FAIL: %s\n", what), failures++;
}

int main(void) {
    int on_chip = 0;
    void *arena = hx_scratch_alloc(1u << 20, &on_chip);
    expect(arena == (void *)vtcm && on_chip && stub.acquired, "the arena is the stub's VTCM");
    expect(stub.cb != NULL, "a release callback is registered with the acquire");
    /* HexKL builds hold HMX on the same context (HVX-only builds have none) */
    expect(HX_HMX_BUILD ? hx_hmx_lock() == 0 && stub.hmx_locked : hx_hmx_lock() != 0, "HMX lock as built");
    int preempted = -1;
    for (int t = 0; t < NTRIALS && preempted < 0; t++) {
        stub.now_us += 400; /* the trial's first part */
        if (t == FIRE_AT) {
            stub.fired_us = stub.now_us;
            expect(stub.cb(CTX_ID, stub.cb_client) == 0, "the callback returns 0");
            expect(stub.releases == 0, "the callback does not release while a trial runs");
        }
        stub.now_us += 600; /* the rest of the trial */
        uint64_t at = 0;
        if (hx_release_asked(&at)) { /* the trial boundary (protocol.c) */
            expect(at == stub.fired_us * 1000u, "the request's time is the callback's");
            hx_release_resources();
            preempted = t;
        }
    }
    expect(preempted == FIRE_AT, "exactly the trial the callback fired in is the last");
    expect(stub.releases == 1, "released once at that boundary");
    expect(stub.hmx_unlocks == HX_HMX_BUILD && stub.unlock_before_release, "HMX unlocked before the release");
    expect(stub.released_us - stub.fired_us == 600, "released 600 us after the request");
    expect(stub.released_us - stub.fired_us <= 5000, "within the 5 ms the SDK asks");
    expect(hx_vtcm_release_requests() == 1, "the request is counted");
    expect(hx_vtcm_arena(NULL) == NULL, "no arena after the release");
    uint8_t *base = NULL;
    size_t bytes = 0;
    expect(hx_vtcm_given_back(&base, &bytes, NULL, NULL) == stub.released_us * 1000u && base == vtcm &&
               bytes == VTCM_BYTES,
           "what was given back, and when, is kept for the end record");
    hx_scratch_free(arena); /* the executor's teardown */
    expect(stub.releases == 1, "the teardown does not release a second time");
    expect(stub.frees_of_vtcm == 0, "the teardown does not free the VTCM pointer");
    expect(stub.power_votes == 1 && stub.power_releases == 1, "the power votes are dropped once, at teardown");
    if (failures) return 1;
    printf("ok\n");
    return 0;
}
