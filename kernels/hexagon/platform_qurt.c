/* platform.h on the Hexagon cDSP: QuRT threads and futexes, HAP timers.
 *
 * STATUS: written against the documented Hexagon SDK API (qurt.h,
 * HAP_perf.h), not yet run on hardware.  Builds only with the Hexagon SDK;
 * the POSIX layer (../src/platform_posix.c) is the one tested here, under
 * qemu-hexagon.
 *
 * Mapping:
 *   hx_now_ns            HAP_perf_get_qtimer_count() (19.2 MHz QTimer, ~52 ns
 *                        per tick) scaled to ns; resolution reported as one tick.
 *   hx_thread_cpu_ns     qurt_profile_get_thread_pcycles() (this software
 *                        thread's processor cycles; profiling enabled at the
 *                        first call) divided by the core clock measured once
 *                        against the QTimer.
 *   hx_thread_start      qurt_thread_create with a heap stack; engine threads
 *                        whose names start with "vec" or "mx" lock a 128-byte
 *                        HVX context for their lifetime (the HVX worker quota
 *                        is the number of such threads, --v-workers + 1).
 *   hx_pin_self          QuRT schedules software threads on hardware threads
 *                        itself; there is no affinity for user PDs: returns -1
 *                        (the executor records the engine as floating).
 *   hx_word_wait/wake    qurt_futex_wait / qurt_futex_wake.
 *   hx_alloc             memalign (DDR); the scratch arena uses VTCM through
 *                        hx_scratch_alloc (vtcm_qurt.c).
 */
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <HAP_perf.h>
#include <qurt.h>
#include "../src/platform.h"

#ifndef HX_QTIMER_HZ
#define HX_QTIMER_HZ 19200000ull
#endif
#ifndef HX_QURT_STACK_BYTES
#define HX_QURT_STACK_BYTES (64 * 1024)
#endif

uint64_t hx_now_ns(void) {
    uint64_t t = HAP_perf_get_qtimer_count();
    /* 1e9 / 19.2e6 = 625 / 12; split to keep the product in 64 bits. */
    return (t / HX_QTIMER_HZ) * 1000000000ull + (t % HX_QTIMER_HZ) * 1000000000ull / HX_QTIMER_HZ;
}

uint64_t hx_clock_resolution_ns(void) { return (1000000000ull + HX_QTIMER_HZ - 1) / HX_QTIMER_HZ; }
const char *hx_clock_source(void) { return "HAP_perf_get_qtimer_count (19.2 MHz QTimer)"; }
const char *hx_platform_name(void) {
#ifdef HX_PLATFORM_NAME
    return HX_PLATFORM_NAME;
#else
    return "hexagon";
#endif
}

/* Core clock in cycles per microsecond, measured once (pcycles vs QTimer). */
static uint64_t pcycles_per_us;
static void calibrate_pcycles(void) {
    if (pcycles_per_us) return;
    uint64_t q0 = HAP_perf_get_qtimer_count(), p0 = HAP_perf_get_pcycles();
    while (HAP_perf_get_qtimer_count() - q0 < HX_QTIMER_HZ / 500) { /* 2 ms busy */ }
    uint64_t q1 = HAP_perf_get_qtimer_count(), p1 = HAP_perf_get_pcycles();
    uint64_t us = HAP_perf_qtimer_count_to_us(q1 - q0);
    pcycles_per_us = us ? (p1 - p0) / us : 1000;
    if (!pcycles_per_us) pcycles_per_us = 1;
}

uint64_t hx_thread_cpu_ns(void) {
    static int enabled;
    if (!enabled) {
        qurt_profile_enable(1);
        enabled = 1;
        calibrate_pcycles();
    }
    uint64_t pc = qurt_profile_get_thread_pcycles();
    return pc * 1000ull / pcycles_per_us;
}

struct hx_thread {
    qurt_thread_t tid;
    hx_thread_fn fn;
    void *arg;
    void *stack;
    int hvx;
    char name[QURT_THREAD_ATTR_NAME_MAXLEN];
};

static void trampoline(void *p) {
    hx_thread *t = (hx_thread *)p;
    int locked = t->hvx && qurt_hvx_lock(QURT_HVX_MODE_128B) == QURT_EOK;
    t->fn(t->arg);
    if (locked) qurt_hvx_unlock();
    qurt_thread_exit(QURT_EOK);
}

hx_thread *hx_thread_start(hx_thread_fn fn, void *arg, const char *name, int core,
                           char *err, size_t errlen) {
    (void)core; /* no user-PD affinity on QuRT, see hx_pin_self */
    hx_thread *t = (hx_thread *)calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory creating thread %s", name);
        return NULL;
    }
    t->fn = fn;
    t->arg = arg;
    t->hvx = !strncmp(name, "vec", 3) || !strncmp(name, "mx", 2);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->stack = memalign(128, HX_QURT_STACK_BYTES);
    if (!t->stack) {
        snprintf(err, errlen, "out of memory for the stack of thread %s", name);
        free(t);
        return NULL;
    }
    qurt_thread_attr_t attr;
    qurt_thread_attr_init(&attr);
    qurt_thread_attr_set_name(&attr, t->name);
    qurt_thread_attr_set_stack_addr(&attr, t->stack);
    qurt_thread_attr_set_stack_size(&attr, HX_QURT_STACK_BYTES);
    /* Same priority as the creator: engines compete fairly with the host. */
    qurt_thread_attr_set_priority(&attr, (unsigned short)qurt_thread_get_priority(qurt_thread_get_id()));
    int rc = qurt_thread_create(&t->tid, &attr, trampoline, t);
    if (rc != QURT_EOK) {
        snprintf(err, errlen, "qurt_thread_create(%s) failed: %d", name, rc);
        free(t->stack);
        free(t);
        return NULL;
    }
    return t;
}

void hx_thread_join(hx_thread *t) {
    if (!t) return;
    int status = 0;
    qurt_thread_join(t->tid, &status);
    free(t->stack);
    free(t);
}

int hx_pin_self(int core) {
    (void)core;
    return -1;
}

/* Not exposed to user PDs (and QuRT migrates software threads between
 * hardware threads freely): the records say null.  Untested on hardware. */
int hx_current_cpu(void) { return -1; }

void hx_word_wait(uint32_t *addr, uint32_t expected) { qurt_futex_wait(addr, (int)expected); }
void hx_word_wake_all(uint32_t *addr) { qurt_futex_wake(addr, INT_MAX); }

void hx_cpu_relax(void) { __asm__ __volatile__("pause(#1)" ::: "memory"); }
/* QuRT has no sched_yield for user threads; a longer pause lets the other
 * hardware threads of the core issue. */
void hx_yield(void) { __asm__ __volatile__("pause(#255)" ::: "memory"); }

int hx_online_cores(void) {
    qurt_sysenv_max_hthreads_t h;
    if (qurt_sysenv_get_max_hw_threads(&h) != QURT_EOK || h.max_hthreads == 0) return 1;
    return (int)h.max_hthreads;
}

/* No load average or cpufreq governor on the cDSP: the DCVS vote the run
 * makes is what fixes the clock (see README). */
double hx_load_average_1min(void) { return -1.0; }
double hx_busy_cores(unsigned ms) { (void)ms; return -1.0; }
void hx_cpu_governor(char *buf, size_t len) { snprintf(buf, len, "unknown (cDSP: DCVS)"); }

void hx_cpu_model(char *buf, size_t len) {
    int units = qurt_hvx_get_units();
    snprintf(buf, len, "Hexagon v%d cDSP, HVX128 contexts %d, %d hardware threads",
             __HEXAGON_ARCH__, (units >> 8) & 0xFF, hx_online_cores());
}

void *hx_alloc(size_t bytes, size_t align) {
    if (align < sizeof(void *)) align = sizeof(void *);
    return memalign(align, bytes ? bytes : align);
}

void hx_free(void *p) { free(p); }
