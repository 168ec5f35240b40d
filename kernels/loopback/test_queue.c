/* The loopback stand-in's dspqueue semantics, both ends in this process:
 * FIFO order, one callback thread per queue (two queues' callbacks run at
 * once), a full ring, an oversize read, close stopping the callback, the
 * queue-full fault.  Prints one "ok <name>" line per check and exits 1 at
 * the first failure (tests/runner/test_ap_loopback_queue.py runs it).
 * Orderings only, no tight time bounds: the machine is shared. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "AEEStdErr.h"
#include "dspqueue.h"
#include "remote.h"
#include "test_check.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An AP end (no callback unless given) and its imported DSP end. */
static void pair(uint32_t size, dspqueue_callback_t ap_cb, dspqueue_callback_t dsp_cb, void *ctx, dspqueue_t *ap,
                 dspqueue_t *dsp) {
    uint64_t id = 0;
    RC(dspqueue_create(CDSP_DOMAIN_ID, 0, size, size, ap_cb, NULL, ctx, ap), AEE_SUCCESS);
    RC(dspqueue_export(*ap, &id), AEE_SUCCESS);
    CHECK(id != 0, "queue id 0");
    RC(dspqueue_import(id, dsp_cb, NULL, ctx, dsp), AEE_SUCCESS);
}

static int put(dspqueue_t q, uint32_t v) {
    return dspqueue_write_noblock(q, 0, 0, NULL, sizeof v, (const uint8_t *)&v);
}

static int get(dspqueue_t q, uint32_t *v) {
    uint32_t flags = 0, nb = 0, len = 0;
    int rc = dspqueue_read_noblock(q, &flags, 0, &nb, NULL, sizeof *v, &len, (uint8_t *)v);
    if (rc == AEE_SUCCESS) CHECK(len == sizeof *v, "read %u bytes", len);
    return rc;
}

static void test_fifo(void) {
    dspqueue_t ap, dsp;
    pair(4096, NULL, NULL, NULL, &ap, &dsp);
    uint32_t v;
    RC(get(dsp, &v), AEE_EWOULDBLOCK);
    for (uint32_t i = 0; i < 20; i++) RC(put(ap, i), AEE_SUCCESS);
    uint64_t n = 0;
    RC(dspqueue_get_stat(dsp, DSPQUEUE_STAT_READ_QUEUE_PACKETS, &n), AEE_SUCCESS);
    CHECK(n == 20, "DSP end sees %llu packets waiting", (unsigned long long)n);
    RC(dspqueue_get_stat(ap, DSPQUEUE_STAT_WRITE_QUEUE_PACKETS, &n), AEE_SUCCESS);
    CHECK(n == 20, "AP end sees %llu packets written", (unsigned long long)n);
    for (uint32_t i = 0; i < 20; i++) {
        RC(get(dsp, &v), AEE_SUCCESS);
        CHECK(v == i, "request %u read as %u", i, v);
    }
    /* the other direction: the DSP end writes, the AP end reads */
    for (uint32_t i = 100; i < 105; i++) RC(put(dsp, i), AEE_SUCCESS);
    RC(get(dsp, &v), AEE_EWOULDBLOCK); /* its own replies are not its input */
    for (uint32_t i = 100; i < 105; i++) {
        RC(get(ap, &v), AEE_SUCCESS);
        CHECK(v == i, "response %u read as %u", i, v);
    }
    /* blocking read of an empty queue: expires */
    uint32_t flags, nb, len;
    RC(dspqueue_read(ap, &flags, 0, &nb, NULL, sizeof v, &len, (uint8_t *)&v, 20000), AEE_EEXPIRED);
    struct dspqueue_buffer b = {0};
    RC(dspqueue_write_noblock(ap, 0, 1, &b, sizeof v, (const uint8_t *)&v), AEE_EUNSUPPORTED);
    RC(dspqueue_close(dsp), AEE_SUCCESS);
    RC(dspqueue_close(ap), AEE_SUCCESS);
    printf("ok fifo\n");
}

/* Two queues, one packet each: each DSP callback waits until both are
 * inside a callback.  Serialised callbacks (one thread for both queues)
 * would never meet: the first would time out. */
typedef struct meet {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int inside, met[2];
    uint64_t begin[2], end[2];
    pthread_t thread[2];
} meet;
static meet M = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0, 0}, {0, 0}, {0, 0}, {0, 0}};
static dspqueue_t meet_q[2];

static void meet_cb(dspqueue_t q, AEEResult err, void *ctx) {
    (void)err, (void)ctx;
    int i = q == meet_q[1];
    uint32_t v;
    while (get(q, &v) == AEE_SUCCESS) {
        M.begin[i] = now_ns();
        M.thread[i] = pthread_self();
        pthread_mutex_lock(&M.mu);
        M.inside++;
        pthread_cond_broadcast(&M.cv);
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 10;
        while (M.inside < 2)
            if (pthread_cond_timedwait(&M.cv, &M.mu, &dl) != 0) break;
        M.met[i] = M.inside >= 2;
        pthread_mutex_unlock(&M.mu);
        __atomic_store_n(&M.end[i], now_ns(), __ATOMIC_SEQ_CST);
    }
}

static void test_callbacks_overlap(void) {
    dspqueue_t ap[2];
    pair(4096, NULL, meet_cb, NULL, &ap[0], &meet_q[0]);
    pair(4096, NULL, meet_cb, NULL, &ap[1], &meet_q[1]);
    RC(put(ap[0], 1), AEE_SUCCESS);
    RC(put(ap[1], 2), AEE_SUCCESS);
    /* both callbacks done (or given up) before closing: a close drops what
     * its end has not yet been called for */
    for (int t = 0;
         t < 30000 && !(__atomic_load_n(&M.end[0], __ATOMIC_SEQ_CST) && __atomic_load_n(&M.end[1], __ATOMIC_SEQ_CST));
         t++)
        usleep(1000);
    for (int i = 0; i < 2; i++) RC(dspqueue_close(meet_q[i]), AEE_SUCCESS); /* joins each callback thread */
    CHECK(M.met[0] && M.met[1], "callbacks did not run at once (met %d %d)", M.met[0], M.met[1]);
    CHECK(!pthread_equal(M.thread[0], M.thread[1]), "both queues' callbacks ran on one thread");
    CHECK(!pthread_equal(M.thread[0], pthread_self()), "a callback ran on the writer's thread");
    /* the known answer in time: each began before the other ended */
    CHECK(M.begin[0] < M.end[1] && M.begin[1] < M.end[0], "callback intervals do not overlap");
    for (int i = 0; i < 2; i++) RC(dspqueue_close(ap[i]), AEE_SUCCESS);
    printf("ok callbacks_overlap\n");
}

static void test_full_ring(void) {
    dspqueue_t ap, dsp;
    /* a 4-byte message costs 16 bytes of ring (header + 8-byte rounding) */
    pair(64, NULL, NULL, NULL, &ap, &dsp);
    int n = 0;
    while (put(ap, (uint32_t)n) == AEE_SUCCESS) n++;
    CHECK(n == 4, "%d packets fit in 64 bytes, want 4", n);
    RC(put(ap, 99), AEE_EWOULDBLOCK);
    uint32_t v = 99;
    uint64_t t0 = now_ns();
    RC(dspqueue_write(ap, 0, 0, NULL, sizeof v, (const uint8_t *)&v, 30000), AEE_EEXPIRED);
    CHECK(now_ns() - t0 >= 30000000u, "blocking write expired before its timeout");
    RC(get(dsp, &v), AEE_SUCCESS);
    CHECK(v == 0, "first packet %u", v);
    RC(put(ap, 4), AEE_SUCCESS); /* room again */
    for (uint32_t i = 1; i <= 4; i++) {
        RC(get(dsp, &v), AEE_SUCCESS);
        CHECK(v == i, "packet %u read as %u", i, v);
    }
    RC(dspqueue_close(dsp), AEE_SUCCESS);
    RC(dspqueue_close(ap), AEE_SUCCESS);
    printf("ok full_ring\n");
}

static void test_oversize_read(void) {
    dspqueue_t ap, dsp;
    pair(4096, NULL, NULL, NULL, &ap, &dsp);
    uint8_t msg[32], got[64];
    for (int i = 0; i < 32; i++) msg[i] = (uint8_t)(i * 7);
    RC(dspqueue_write_noblock(ap, 0, 0, NULL, sizeof msg, msg), AEE_SUCCESS);
    uint32_t flags, nb, len = 0;
    RC(dspqueue_read_noblock(dsp, &flags, 0, &nb, NULL, 16, &len, got), AEE_EBADPARM);
    RC(dspqueue_read(dsp, &flags, 0, &nb, NULL, 16, &len, got, 1000), AEE_EBADPARM);
    RC(dspqueue_read_noblock(dsp, &flags, 0, &nb, NULL, sizeof got, &len, got), AEE_SUCCESS);
    CHECK(len == sizeof msg && memcmp(got, msg, sizeof msg) == 0, "the packet changed (len %u)", len);
    RC(dspqueue_read_noblock(dsp, &flags, 0, &nb, NULL, sizeof got, &len, got), AEE_EWOULDBLOCK);
    RC(dspqueue_close(dsp), AEE_SUCCESS);
    RC(dspqueue_close(ap), AEE_SUCCESS);
    printf("ok oversize_read\n");
}

/* A callback still running when its end closes: close waits for it, and no
 * callback runs after close returns. */
static int calls, in_progress_done;
static void slow_cb(dspqueue_t q, AEEResult err, void *ctx) {
    (void)err, (void)ctx;
    uint32_t v;
    while (get(q, &v) == AEE_SUCCESS) {
        __atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST);
        usleep(100000);
        __atomic_store_n(&in_progress_done, 1, __ATOMIC_SEQ_CST);
    }
}

static void test_close_stops_callback(void) {
    dspqueue_t ap, dsp;
    pair(4096, NULL, slow_cb, NULL, &ap, &dsp);
    RC(put(ap, 1), AEE_SUCCESS);
    while (__atomic_load_n(&calls, __ATOMIC_SEQ_CST) == 0) usleep(1000);
    RC(dspqueue_close(dsp), AEE_SUCCESS);
    CHECK(__atomic_load_n(&in_progress_done, __ATOMIC_SEQ_CST), "close returned while its callback still ran");
    RC(put(ap, 2), AEE_SUCCESS);
    usleep(200000);
    CHECK(__atomic_load_n(&calls, __ATOMIC_SEQ_CST) == 1, "a callback ran after close (%d calls)", calls);
    RC(dspqueue_close(ap), AEE_SUCCESS);
    RC(dspqueue_close(ap), AEE_EBADPARM); /* closed once */
    printf("ok close_stops_callback\n");
}

/* The AP end's own callback: responses wake it. */
static int ap_calls;
static void ap_cb(dspqueue_t q, AEEResult err, void *ctx) {
    (void)err, (void)ctx;
    uint32_t v;
    while (get(q, &v) == AEE_SUCCESS) __atomic_fetch_add(&ap_calls, (int)v, __ATOMIC_SEQ_CST);
}

static void test_ap_callback(void) {
    dspqueue_t ap, dsp;
    pair(4096, ap_cb, NULL, NULL, &ap, &dsp);
    RC(put(dsp, 5), AEE_SUCCESS);
    RC(put(dsp, 7), AEE_SUCCESS);
    for (int i = 0; i < 5000 && __atomic_load_n(&ap_calls, __ATOMIC_SEQ_CST) != 12; i++) usleep(1000);
    CHECK(__atomic_load_n(&ap_calls, __ATOMIC_SEQ_CST) == 12, "AP callback read %d", ap_calls);
    RC(dspqueue_close(dsp), AEE_SUCCESS);
    RC(dspqueue_close(ap), AEE_SUCCESS);
    printf("ok ap_callback\n");
}

/* HX_LOOPBACK_FAULT=queue-full: every AP-end write finds the ring full; the
 * DSP end's replies are not affected. */
static void test_queue_full_fault(void) {
    setenv("HX_LOOPBACK_FAULT", "queue-full", 1);
    dspqueue_t ap, dsp;
    pair(4096, NULL, NULL, NULL, &ap, &dsp);
    RC(put(ap, 1), AEE_EWOULDBLOCK);
    uint32_t v = 1;
    uint64_t t0 = now_ns();
    RC(dspqueue_write(ap, 0, 0, NULL, sizeof v, (const uint8_t *)&v, DSPQUEUE_TIMEOUT_NONE), AEE_EEXPIRED);
    CHECK(now_ns() - t0 >= 100000000u, "blocking write under queue-full gave up before 100 ms");
    RC(put(dsp, 3), AEE_SUCCESS);
    RC(get(ap, &v), AEE_SUCCESS);
    RC(dspqueue_close(dsp), AEE_SUCCESS);
    RC(dspqueue_close(ap), AEE_SUCCESS);
    unsetenv("HX_LOOPBACK_FAULT");
    printf("ok queue_full_fault\n");
}

/* The rule the real library enforces by deadlocking (dspqueue.h: no
 * blocking read on a queue with a packet callback; dspqueue_cpu.c holds the
 * queue's packet mutex around the callback and dspqueue_read takes it): the
 * stand-in ends the process naming the rule.  Run as its own process: the
 * pytest expects the abort and the message. */
static void blocking_read_cb(dspqueue_t q, AEEResult error, void *ctx) {
    (void)error, (void)ctx;
    uint32_t flags, nb, len, v;
    dspqueue_read(q, &flags, 0, &nb, NULL, sizeof v, &len, (uint8_t *)&v, 0);
}

static void test_read_in_callback(void) {
    dspqueue_t ap, dsp;
    pair(4096, blocking_read_cb, NULL, NULL, &ap, &dsp);
    RC(put(dsp, 5), AEE_SUCCESS);
    sleep(20); /* the stand-in aborts long before */
    printf("ok read_in_callback (not expected: the stand-in should have ended the process)\n");
}

/* The PD dies (the skel exits): the AP end's blocked read returns
 * AEE_EINTERRUPTED (0x2e), its error callback runs once with
 * AEE_ECONNRESET, a new write fails with AEE_ECONNRESET, and closing both
 * ends still returns. */
static int err_calls, err_code;
static void err_cb(dspqueue_t q, AEEResult error, void *ctx) {
    (void)q, (void)ctx;
    __atomic_store_n(&err_code, error, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&err_calls, 1, __ATOMIC_SEQ_CST);
}
void hx_loopback_pd_exit(int status);
static void *exit_later(void *arg) {
    (void)arg;
    usleep(50000);
    hx_loopback_pd_exit(3); /* as a skel thread calling exit(3) */
    return NULL;
}

static void test_pd_death(void) {
    dspqueue_t ap, dsp;
    uint64_t id = 0;
    RC(dspqueue_create(CDSP_DOMAIN_ID, 0, 4096, 4096, NULL, err_cb, NULL, &ap), AEE_SUCCESS);
    RC(dspqueue_export(ap, &id), AEE_SUCCESS);
    RC(dspqueue_import(id, NULL, NULL, NULL, &dsp), AEE_SUCCESS);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, exit_later, NULL) == 0, "thread");
    uint32_t flags, nb, len, v;
    RC(dspqueue_read(ap, &flags, 0, &nb, NULL, sizeof v, &len, (uint8_t *)&v, 10000000), AEE_EINTERRUPTED);
    pthread_join(t, NULL);
    for (int i = 0; i < 5000 && __atomic_load_n(&err_calls, __ATOMIC_SEQ_CST) == 0; i++) usleep(1000);
    CHECK(err_calls == 1 && err_code == AEE_ECONNRESET, "error callback %d times, code %d", err_calls, err_code);
    RC(put(ap, 1), AEE_ECONNRESET);
    uint64_t id2;
    dspqueue_t q2;
    RC(dspqueue_create(CDSP_DOMAIN_ID, 0, 4096, 4096, NULL, NULL, NULL, &q2), AEE_ECONNRESET);
    (void)id2;
    RC(dspqueue_close(dsp), AEE_SUCCESS);
    RC(dspqueue_close(ap), AEE_SUCCESS);
    printf("ok pd_death\n");
}

int main(int argc, char **argv) {
    /* one check by name (the pytest runs them one by one), or all */
    const char *only = argc > 1 ? argv[1] : NULL;
    struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"fifo", test_fifo},
        {"callbacks_overlap", test_callbacks_overlap},
        {"full_ring", test_full_ring},
        {"oversize_read", test_oversize_read},
        {"close_stops_callback", test_close_stops_callback},
        {"ap_callback", test_ap_callback},
        {"queue_full_fault", test_queue_full_fault},
        {"pd_death", test_pd_death},
        {"read_in_callback", test_read_in_callback},
    };
    int ran = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (only ? strcmp(only, tests[i].name) != 0 : !strcmp(tests[i].name, "read_in_callback")) continue;
        tests[i].fn();
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "no test named %s\n", only);
        return 2;
    }
    return 0;
}
