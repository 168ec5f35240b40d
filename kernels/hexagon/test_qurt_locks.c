/* The device code's HVX and HMX locks, against the QuRT/HAP/HexKL stand-in
 * (standin_qurt.c), built for Hexagon and run under qemu-hexagon
 * (tests/hexagon/test_qurt_locks.py builds and runs it).
 *
 *   test_qurt_locks ladder     the ladder's hmx_tile step (selftest_qurt.c)
 *   test_qurt_locks runner     M as the runner issues it: prepared on the
 *                              set-up thread, run on an `mx` engine thread,
 *                              then a release on request at a trial boundary
 *   test_qurt_locks teardown   as runner, but the engine stops first (HMX
 *                              given back at thread exit), then the arena
 *   test_qurt_locks threads    (HX_STANDIN_HW_THREADS=5) more ready threads
 *                              than hardware threads refused before they
 *                              start, priorities, --wait spin refused
 *   test_qurt_locks nonresident  weights beyond the HMX region, copied in per
 *                              run by HVX on the mx thread, exact
 *   test_qurt_locks fatal      (HX_STANDIN_HEXKL_FAIL=1) a HexKL error on the
 *                              mx thread is reported, the process goes on
 *   test_qurt_locks power      (HX_STANDIN_REFUSE_POWER=<HMX request type>)
 *                              votes made and refused are recorded
 *   test_qurt_locks host_run   negative control: M run on the set-up thread,
 *                              which holds no HVX context (the stand-in must
 *                              refuse it: exit 70)
 * Each prints "ok" and exits 0, names the broken expectation and exits 1, or
 * is stopped by the stand-in (exit 70, "VIOLATION" and the rule). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qurt.h>
#include "../common/engine.h"
#include "../common/platform.h"
#include "../hxrun/selftest.h"
#include "kernels_hexagon.h"
#include "standin_qurt.h"
#include "vtcm_qurt.h"

static int failures;
static void expect(int ok, const char *what) {
    if (!ok) fprintf(stderr, "test_qurt_locks: FAIL: %s\n", what), failures++;
}

/* what the executor's release helper does (hxrun/exec.c) is tested through
 * hx_release_helper_set with the same job */
static int step(const char *name) {
    for (const hx_st_step *s = hx_st_platform_steps; s->name; s++)
        if (!strcmp(s->name, name)) {
            char d[600] = "";
            int r = s->fn(d, sizeof d);
            printf("%s %s: %s\n", r == HX_ST_PASS ? "PASS" : "FAIL", name, d);
            return r;
        }
    printf("FAIL %s: no such step\n", name);
    return HX_ST_FAIL;
}

enum { M = 128, N = 64, K = 96 };
static uint8_t A[M * K];
static int8_t B[K * N];
static int32_t C[M * N], R[M * N];

typedef struct {
    hx_job job;
    const void *prep;
    unsigned tid;
    hx_event done;
} run_job;

static void run_m(hx_job *job, hx_engine *e) {
    (void)e;
    run_job *j = (run_job *)job;
    hx_hmx_u8i8_run(j->prep, C, M, N, K);
    j->tid = qurt_thread_get_id();
    hx_event_signal(&j->done);
}

typedef struct {
    hx_job job;
    const void *prep;
    int32_t *C;
    int m, n, k;
    hx_event done;
} big_job;
static void run_big(hx_job *job, hx_engine *e) {
    (void)e;
    big_job *j = (big_job *)job;
    hx_hmx_u8i8_run(j->prep, j->C, j->m, j->n, j->k);
    hx_event_signal(&j->done);
}

typedef struct {
    hx_job job;
    hx_event done;
} self_job;
static void release_self(hx_job *job, hx_engine *e) {
    (void)e;
    hx_engine_release_self();
    hx_event_signal(&((self_job *)job)->done);
}
static hx_engine mx;
static const hx_wait_policy wait = {HX_WAIT_SPIN_BLOCK, 20000};
static void helper(void *ctx) {
    (void)ctx;
    static self_job j;
    j.job.run = release_self;
    hx_event_reset(&j.done);
    hx_engine_push(&mx, &j.job);
    hx_event_wait(&j.done, &wait);
}

static uint32_t idle_stop;
static void idle(void *arg) { /* an antagonist stand-in: sleeps until told */
    (void)arg;
    while (!__atomic_load_n(&idle_stop, __ATOMIC_ACQUIRE)) hx_st_sleep_ms(1);
}

static void *prepare(void) {
    for (int i = 0; i < M * K; i++) A[i] = (uint8_t)(i * 7 + 1);
    for (int i = 0; i < K * N; i++) B[i] = (int8_t)(i * 5 - 60);
    void *ph = hx_alloc(hx_hmx_u8i8_prep_bytes(M, N, K), 2048);
    hx_hmx_u8i8_prepare(A, B, M, N, K, ph); /* the set-up thread */
    void *pr = hx_alloc(hx_kernels_ref.gemm_u8i8_prep_bytes(M, N, K), 64);
    hx_kernels_ref.gemm_u8i8_prepare(A, B, M, N, K, pr);
    hx_kernels_ref.gemm_u8i8_run(pr, R, M, N, K);
    hx_free(pr);
    return ph;
}

static int runner(int stop_first) {
    int on_chip = 0;
    void *arena = hx_scratch_alloc(1u << 20, &on_chip);
    expect(arena && on_chip, "VTCM arena");
    void *ph = prepare();
    expect(standin_hmx_owner() == 0, "prepare takes no HMX lock");
    char err[300] = "";
    if (hx_engine_start(&mx, "mx", -1, &wait, err, sizeof err) != 0) {
        fprintf(stderr, "test_qurt_locks: %s\n", err);
        return 1;
    }
    static run_job j;
    for (int round = 0; round < 2; round++) { /* the lock is kept across runs */
        memset(C, 0, sizeof C);
        j.job.run = run_m, j.prep = ph;
        hx_event_reset(&j.done);
        hx_engine_push(&mx, &j.job);
        hx_event_wait(&j.done, &wait);
        expect(!memcmp(C, R, sizeof C), "M on the mx engine equals the reference");
        expect(standin_hmx_owner() == j.tid && j.tid != qurt_thread_get_id(), "HMX held by the mx engine thread");
    }
    if (stop_first) {
        hx_engine_stop(&mx); /* HMX, then HVX, given back at thread exit */
        expect(standin_hmx_owner() == 0 && standin_hmx_unlocks() == 1, "HMX unlocked by the engine as it exits");
        hx_scratch_free(arena);
    } else {
        hx_release_helper_set(helper, NULL);
        hx_release_ask();
        hx_release_resources(); /* a trial boundary on the host thread */
        expect(standin_hmx_owner() == 0 && standin_hmx_unlocks() == 1, "HMX unlocked on the mx thread first");
        expect(hx_hmx_left_locked() == 0, "no lock left held by another thread at the release");
        hx_release_helper_set(NULL, NULL);
        hx_engine_stop(&mx);
        hx_scratch_free(arena);
    }
    hx_free(ph);
    return 0;
}

static int mode_threads(void) {
    /* HX_STANDIN_HW_THREADS=5: host + vec, mx, dma + one antagonist fit;
     * a V worker more does not, and is refused before it starts */
    char err[400] = "";
    static hx_engine e[4];
    static const char *names[4] = {"vec", "mx", "dma", "vec1"};
    int started = 0;
    for (int i = 0; i < 3; i++) started += hx_engine_start(&e[i], names[i], -1, &wait, err, sizeof err) == 0;
    hx_thread *bw = hx_thread_start(idle, NULL, "bw0", -1, err, sizeof err);
    expect(started == 3 && bw != NULL, "host + 3 engines + 1 antagonist fit 5 hardware threads");
    err[0] = 0;
    expect(hx_engine_start(&e[3], names[3], -1, &wait, err, sizeof err) != 0 && strstr(err, "hardware threads"),
           "a sixth ready thread on 5 hardware threads is refused, naming them");
    printf("refused: %s\n", err);
    const standin_created *c;
    int nc = standin_threads(&c), host = qurt_thread_get_priority(qurt_thread_get_id());
    for (int i = 0; i < nc; i++) {
        if (!strcmp(c[i].name, "bw0")) expect(c[i].prio > host, "the antagonist below the host and engines");
        else expect(c[i].prio == host, "engines at the host's priority");
    }
    static const hx_wait_policy spin = {HX_WAIT_SPIN, 0};
    static hx_engine s1;
    err[0] = 0;
    expect(hx_engine_start(&s1, "vec9", -1, &spin, err, sizeof err) != 0 && strstr(err, "--wait spin"),
           "--wait spin refused where threads are not time-sliced");
    __atomic_store_n(&idle_stop, 1u, __ATOMIC_RELEASE);
    hx_thread_join(bw);
    for (int i = 0; i < 3; i++) hx_engine_stop(&e[i]);
    return 0;
}

static int mode_fatal(void) {
    /* HX_STANDIN_HEXKL_FAIL=1: a HexKL error on the mx engine thread is
     * reported (FARF, hx_failure) and the process goes on: no exit() from
     * a worker, the engine and the resources are given back normally */
    int on_chip = 0;
    void *arena = hx_scratch_alloc(1u << 20, &on_chip);
    void *ph = prepare();
    char err[300] = "";
    if (hx_engine_start(&mx, "mx", -1, &wait, err, sizeof err) != 0) return 1;
    static run_job j;
    for (int round = 0; round < 2; round++) {
        j.job.run = run_m, j.prep = ph;
        hx_event_reset(&j.done);
        hx_engine_push(&mx, &j.job);
        hx_event_wait(&j.done, &wait);
    }
    expect(hx_failure() && strstr(hx_failure(), "HexKL HMX call failed"), "the failure is recorded with its reason");
    expect(standin_mm_calls() == 1, "after the failure, later runs issue nothing");
    printf("failure: %s\n", hx_failure() ? hx_failure() : "(none)");
    hx_engine_stop(&mx);
    hx_scratch_free(arena);
    expect(standin_hmx_owner() == 0, "HMX given back after the failure");
    hx_free(ph);
    return 0;
}

static int mode_nonresident(void) {
    /* weights too large to stay in the HMX region: each column strip is
     * copied in per run by HVX on the mx thread (the stand-in checks it
     * holds a context only for HexKL's calls; the copy's result is
     * checked through C) */
    enum { BM = 64, BN = 1024, BK = 1024 };
    static uint8_t a[BM * BK];
    static int8_t b[BK * BN];
    static int32_t c[BM * BN], r[BM * BN];
    for (int i = 0; i < BM * BK; i++) a[i] = (uint8_t)(i * 13 + 5);
    for (int i = 0; i < BK * BN; i++) b[i] = (int8_t)(i * 7 - 3);
    int on_chip = 0;
    void *arena = hx_scratch_alloc(1u << 20, &on_chip);
    void *ph = hx_alloc(hx_hmx_u8i8_prep_bytes(BM, BN, BK), 2048);
    hx_hmx_u8i8_prepare(a, b, BM, BN, BK, ph);
    void *pr = hx_alloc(hx_kernels_ref.gemm_u8i8_prep_bytes(BM, BN, BK), 64);
    hx_kernels_ref.gemm_u8i8_prepare(a, b, BM, BN, BK, pr);
    hx_kernels_ref.gemm_u8i8_run(pr, r, BM, BN, BK);
    char err[300] = "";
    if (hx_engine_start(&mx, "mx", -1, &wait, err, sizeof err) != 0) return 1;
    static big_job bj;
    bj.job.run = run_big, bj.prep = ph, bj.C = c, bj.m = BM, bj.n = BN, bj.k = BK;
    hx_event_reset(&bj.done);
    hx_engine_push(&mx, &bj.job);
    hx_event_wait(&bj.done, &wait);
    const hx_hmx_stats *st = hx_hmx_stats_get();
    expect(!st->weights_resident, "the weights do not all fit: copied per run");
    expect(st->weight_copy_bytes == (uint64_t)BN * BK, "one copy of every weight tile per run");
    expect(!memcmp(c, r, sizeof c), "M with weights copied in by HVX equals the reference");
    hx_engine_stop(&mx);
    hx_scratch_free(arena);
    hx_free(ph), hx_free(pr);
    return 0;
}

static int mode_power(void) {
    /* HX_STANDIN_REFUSE_POWER names the HMX request type: the refusal is
     * recorded with its code, the granted votes too */
    char err[300] = "";
    int rc = hx_power_vote(1, err, sizeof err);
    const char *const *made, *const *ref;
    const int *codes;
    int nm = hx_power_votes(&made), nr = hx_power_refused(&ref, &codes);
    printf("vote rc %d: %s; made %d, refused %d%s%s\n", rc, err, nm, nr, nr ? ": " : "", nr ? ref[0] : "");
    expect(nm == 3 && !strcmp(made[2], "hvx=on"), "apptype, DCVS and HVX granted and recorded");
    expect(nr >= 1 && !strncmp(ref[0], "hmx", 3) && codes[0] != 0, "the HMX vote recorded as refused, with its code");
    char gov[64];
    hx_cpu_governor(gov, sizeof gov); /* the meta record's short form */
    printf("governor: %s\n", gov);
    expect(strstr(gov, "1 refused") != NULL, "the meta record's cpu_governor counts the refused vote");
    hx_power_release();
    return 0;
}

static int mode_host_run(void) {
    int on_chip = 0;
    hx_scratch_alloc(1u << 20, &on_chip);
    void *ph = prepare();
    hx_hmx_u8i8_run(ph, C, M, N, K); /* the stand-in stops this */
    expect(0, "the stand-in let M run on a thread with no HVX context");
    return 0;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "ladder")) {
        expect(step("vtcm_full") == HX_ST_PASS, "vtcm_full");
        expect(step("hmx_tile") == HX_ST_PASS, "hmx_tile through the mx engine");
        expect(standin_hmx_owner() == 0, "the ladder's mx engine gave HMX back when it stopped");
    } else if (!strcmp(what, "runner") || !strcmp(what, "teardown")) {
        if (runner(!strcmp(what, "teardown"))) return 1;
    } else if (!strcmp(what, "threads")) {
        if (mode_threads()) return 1;
    } else if (!strcmp(what, "fatal")) {
        if (mode_fatal()) return 1;
    } else if (!strcmp(what, "nonresident")) {
        if (mode_nonresident()) return 1;
    } else if (!strcmp(what, "power")) {
        if (mode_power()) return 1;
    } else if (!strcmp(what, "host_run")) {
        if (mode_host_run()) return 1;
    } else {
        fprintf(stderr, "usage: test_qurt_locks ladder|runner|teardown|threads|power|fatal|nonresident|host_run\n");
        return 2;
    }
    if (failures) return 1;
    printf("ok\n");
    return 0;
}
