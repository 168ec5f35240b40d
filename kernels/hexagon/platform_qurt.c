/* platform.h on the Hexagon cDSP: QuRT threads and futexes, HAP timers.
 *
 * STATUS: written against the documented Hexagon SDK API (qurt.h,
 * HAP_perf.h), compile-checked with the open toolchain (make sdk-check), not
 * yet run on a simulator or phone.  The POSIX layer (../common/platform_posix.c)
 * is the one run here, under qemu-hexagon.
 *
 * Mapping:
 *   hx_now_ns            HAP_perf_get_qtimer_count() (19.2 MHz QTimer, ~52 ns
 *                        per tick) scaled to ns; resolution reported as one tick.
 *   hx_thread_cpu_ns     qurt_profile_get_thread_pcycles() (this software
 *                        thread's processor cycles) divided by the core
 *                        clock, measured once against the QTimer when the
 *                        first thread starts (bounded: a QTimer that does not
 *                        advance is an error, not a hang).
 *   hx_thread_start      qurt_thread_create with a heap stack; engine threads
 *                        whose names start with "vec" or "mx" lock a 128-byte
 *                        HVX context for their lifetime (vec + mx + vec1..:
 *                        --v-workers + 1 holders).  More holders than the
 *                        cDSP has 128-byte contexts, or no context within
 *                        HX_HVX_LOCK_TIMEOUT_US (try-lock, retried), is an
 *                        error before any trial: a thread blocked in
 *                        qurt_hvx_lock would never serve its queue and the
 *                        starter would wait for it with no bound.  No other
 *                        thread runs HVX code (the host's HexKL weight
 *                        layout takes a context around the call, before any
 *                        engine exists; D's fallback copy is scalar).
 *   hx_pin_self          QuRT schedules software threads on hardware threads
 *                        itself; there is no affinity for user PDs: returns -1
 *                        (the executor records the engine as floating).
 *   hx_word_wait/wake    qurt_futex_wait / qurt_futex_wake.
 *   hx_alloc             memalign (DDR); the scratch arena uses VTCM through
 *                        hx_scratch_alloc (vtcm_qurt.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
/* memalign: <stdlib.h> in the SDK's libc (as llama.cpp uses it), <malloc.h>
 * elsewhere; take malloc.h only where it exists. */
#if defined(__has_include)
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif
#endif
#define FARF_ALWAYS 1 /* the calibration failure below: always in the DSP log */
#include <HAP_farf.h>
#include <HAP_perf.h>
#include <qurt.h>
#include "../common/json.h"
#include "../common/platform.h"
#include "kernels_hexagon.h"
#include "vtcm_qurt.h"

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

/* Core clock in cycles per microsecond, measured (clock_qurt.c) by the
 * first hx_thread_start, i.e. at set-up, not inside a timed task, and again
 * by the runner at the end of the run (platform.h, hx_clock_calibrate: the
 * end record flags a drift).  "Profiling shall be enabled first"
 * (qurt_cycles.h) before thread pcycles count. */
static uint64_t pcycles_per_us;
/* Whether this thread's pcycles advanced over the calibration loop: in an
 * unsigned PD they may read 0 throughout, and a 0 must not pass for "no CPU
 * time" (it would make every task look idle); the trials then write cpu_ns
 * as null.  Untested on hardware. */
static int thread_pcycles_advance = 1;
static int calibrate_pcycles(char *err, size_t errlen) {
    if (pcycles_per_us) return 0;
    qurt_profile_enable(1);
    if (hx_qurt_measure_clock(&pcycles_per_us, &thread_pcycles_advance, err, errlen) != 0) return -1;
    hx_qurt_clock_started(pcycles_per_us);
    return 0;
}

/* Set once the late calibration below failed: it is not tried again. */
static int pcycles_calibration_failed;

uint64_t hx_thread_cpu_ns(void) {
    if (!pcycles_per_us && !pcycles_calibration_failed) { /* only reached if no thread was started */
        char err[200];
        if (calibrate_pcycles(err, sizeof err) != 0) {
            /* Never exit() here: this is on the skel's run path, and exit()
             * in a FastRPC user PD ends the PD (the AP then sees a dead
             * session, not this reason).  Recorded instead (platform.h: the
             * run ends device_error with it, and FARF reaches the phone's
             * log); CPU times are written null from now on
             * (hx_thread_cpu_available). */
            FARF(ALWAYS, "hxrun: error: %s", err);
            fprintf(stderr, "hxrun: error: %s\n", err);
            hx_failure_set(err);
            thread_pcycles_advance = 0;
            pcycles_calibration_failed = 1;
        }
    }
    /* No core clock to divide by: the QTimer's ns, so that a busy-wait on
     * CPU time (the calibration tasks) still ends; never written as a CPU
     * time (null, above). */
    if (!pcycles_per_us) return hx_now_ns();
    uint64_t pc = qurt_profile_get_thread_pcycles();
    return pc * 1000ull / pcycles_per_us;
}

int hx_thread_cpu_available(void) { return thread_pcycles_advance; }

/* HVX contexts: 128-byte units on this cDSP, and the holders so far. */
static int hvx_units(void) { return (qurt_hvx_get_units() >> 8) & 0xFF; }
static int hvx_holders, hvx_lock_failures;

struct hx_thread {
    qurt_thread_t tid;
    hx_thread_fn fn;
    void *arg;
    void *stack;
    int hvx;
    int kind;            /* ready_kind: 1 engine, 2 antagonist, 0 other */
    uint32_t lock_state; /* 0 pending, 1 HVX held (or not wanted), 2 lock failed */
    int lock_rc;
    char name[QURT_THREAD_ATTR_NAME_MAXLEN];
};

static void trampoline(void *p) {
    hx_thread *t = (hx_thread *)p;
    int locked = 0;
    if (t->hvx) {
        /* bounded: a context held by another process must not hang start-up */
        locked = hx_hvx_lock_within(HX_HVX_LOCK_TIMEOUT_US, &t->lock_rc) == 0;
    }
    /* The starter waits for this: an engine without its context never runs. */
    __atomic_store_n(&t->lock_state, t->hvx && !locked ? 2u : 1u, __ATOMIC_RELEASE);
    qurt_futex_wake(&t->lock_state, INT_MAX);
    if (t->hvx && !locked) qurt_thread_exit(QURT_EOK);
    t->fn(t->arg);
    /* In the reverse order of taking them, on this thread: HMX (taken by the
     * `mx` engine at its first GEMM), then HVX (qurt_hvx.h: a context is
     * unlocked by the thread that locked it). */
    hx_engine_release_self();
    if (locked) qurt_hvx_unlock();
    qurt_thread_exit(QURT_EOK);
}

/* Threads that may be ready at once: the engines (vec, mx, dma, vecN: busy
 * for a whole trial, spinning in calibration) and the bandwidth antagonists
 * (bwN: they never block), plus the host.  The ladder's helper threads block
 * and are not counted.  platform.h, hx_max_ready_threads. */
static int ready_threads, ready_threads_peak;
static int ready_kind(const char *name) {
    return !strncmp(name, "vec", 3) || !strncmp(name, "mx", 2) || !strncmp(name, "dma", 3) ? 1
           : !strncmp(name, "bw", 2)                                                       ? 2
                                                                                           : 0;
}
int hx_max_ready_threads(void) { return hx_online_cores(); }

/* Priorities (qurt_thread.h: 1 is the highest, 255 the lowest): engines at
 * the creator's (the host's), clamped to 1..254 as llama.cpp's work and HMX
 * queues clamp (ggml/src/ggml-hexagon/htp/hmx-queue.c); antagonists one step
 * lower, so that an engine is never behind an antagonist for a hardware
 * thread (Apache TVM's hexagon_thread_manager.cc likewise gives all its
 * workers one priority and checks their count against the hardware). */
static int host_prio = -1, engine_prio = -1, antagonist_prio = -1;

hx_thread *hx_thread_start(hx_thread_fn fn, void *arg, const char *name, int core, char *err, size_t errlen) {
    (void)core; /* no user-PD affinity on QuRT, see hx_pin_self */
    if (calibrate_pcycles(err, errlen) != 0) return NULL;
    int kind = ready_kind(name);
    if (kind && ready_threads + 2 > hx_max_ready_threads()) {
        snprintf(err, errlen,
                 "threads: %s would be ready thread %d (the host, %d engine or antagonist thread(s) so far, and "
                 "this one) but this cDSP has %d hardware threads (qurt_sysenv_get_max_hw_threads) and QuRT does "
                 "not time-slice them: an engine could starve; lower --v-workers or --antagonists",
                 name, ready_threads + 2, ready_threads, hx_max_ready_threads());
        return NULL;
    }
    int wants_hvx = !strncmp(name, "vec", 3) || !strncmp(name, "mx", 2);
    if (wants_hvx && hvx_holders + 1 > hvx_units()) {
        snprintf(err, errlen,
                 "HVX: engine thread %s would be holder %d of a 128-byte HVX context, but this cDSP has %d "
                 "(vec, mx and one per extra V worker each hold one): lower --v-workers to %d",
                 name, hvx_holders + 1, hvx_units(), hvx_units() - 1);
        return NULL;
    }
    hx_thread *t = (hx_thread *)calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory creating thread %s", name);
        return NULL;
    }
    t->fn = fn;
    t->arg = arg;
    t->hvx = wants_hvx;
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
    /* Same priority as the creator: engines compete fairly with the host.
     * get_priority may return -1; attributes take 1..255 (clamped as
     * llama.cpp's work queue does). */
    int prio = qurt_thread_get_priority(qurt_thread_get_id());
    if (prio < 1) prio = 1;
    if (prio > 254) prio = 254;
    if (kind) host_prio = prio;
    if (kind == 2) prio = prio < 254 ? prio + 1 : 254; /* antagonists below the engines */
    qurt_thread_attr_set_priority(&attr, (unsigned short)prio);
    int rc = qurt_thread_create(&t->tid, &attr, trampoline, t);
    if (rc != QURT_EOK) {
        snprintf(err, errlen, "qurt_thread_create(%s) failed: %d", name, rc);
        free(t->stack);
        free(t);
        return NULL;
    }
    uint32_t st;
    while ((st = __atomic_load_n(&t->lock_state, __ATOMIC_ACQUIRE)) == 0) qurt_futex_wait(&t->lock_state, 0);
    if (st == 2) {
        snprintf(err, errlen,
                 "HVX: engine thread %s got no 128-byte HVX context within %u ms (qurt_hvx_try_lock rc %d): "
                 "another process (camera, a QNN/HTP session) holds them; run hxrun --selftest (step hvx_locks)",
                 name, HX_HVX_LOCK_TIMEOUT_US / 1000, t->lock_rc);
        hvx_lock_failures++;
        int status = 0;
        qurt_thread_join(t->tid, &status);
        free(t->stack);
        free(t);
        return NULL;
    }
    if (t->hvx) hvx_holders++;
    if (kind && ++ready_threads > ready_threads_peak) ready_threads_peak = ready_threads;
    if (kind == 1) engine_prio = prio;
    if (kind == 2) antagonist_prio = prio;
    t->kind = kind;
    return t;
}

void hx_thread_join(hx_thread *t) {
    if (!t) return;
    int status = 0;
    qurt_thread_join(t->tid, &status);
    if (t->hvx) hvx_holders--;
    if (t->kind) ready_threads--;
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
/* The user PD's POSIX layer has mkdir and stat (hxrun's .npy dumps). */
int hx_is_directory(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int hx_make_dir(const char *path) { return mkdir(path, 0777); }

void hx_yield(void) { __asm__ __volatile__("pause(#255)" ::: "memory"); }

/* Hardware threads, not cores: the records call them hw_threads. */
int hx_online_cores(void) {
    qurt_sysenv_max_hthreads_t h;
    if (qurt_sysenv_get_max_hw_threads(&h) != QURT_EOK || h.max_hthreads == 0) return 1;
    return (int)h.max_hthreads;
}
const char *hx_cores_key(void) { return "hw_threads"; }
const char *hx_cores_words(void) { return "hardware threads"; }

/* No load average or cpufreq governor on the cDSP: the DCVS vote the run
 * makes at start-up (power_qurt.c) is what fixes the clock. */
double hx_load_average_1min(void) { return -1.0; }
double hx_busy_cores(unsigned ms) {
    (void)ms;
    return -1.0;
}
/* The cDSP runs under no hypervisor that steals its hardware threads. */
int64_t hx_steal_ns(void) { return -1; }
/* Interference evidence: QuRT gives a user PD neither other processes' CPU
 * time nor context-switch counts, so every reader says "unavailable" (the
 * records write null), never 0. */
int64_t hx_cores_busy_ns(const int *cores, int ncores) {
    (void)cores, (void)ncores;
    return -1;
}
const char *hx_cores_busy_source(void) { return "unavailable"; }
uint64_t hx_cores_busy_resolution_ns(void) { return 0; }
int64_t hx_process_cpu_ns(void) { return -1; }
int64_t hx_thread_involuntary_switches(void) { return -1; }
int64_t hx_process_involuntary_switches(void) { return -1; }
int hx_allowed_cores(int *cores, int max) {
    (void)cores, (void)max;
    return -1;
}

/* The meta record's cpu_governor: the clock votes in short (each vote made
 * and refused, with codes, is in the end record's resources). */
void hx_cpu_governor(char *buf, size_t len) {
    const char *const *v, *const *r;
    const int *rc;
    int n = hx_power_votes(&v), nr = hx_power_refused(&r, &rc);
    const char *hmx = "no HMX vote";
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i], "hmx=on")) hmx = "HMX on";
        else if (!strcmp(v[i], "hmx_v2=on,clock=max")) hmx = "HMX clock max";
        else if (!strcmp(v[i], "hmx_v2=on")) hmx = "HMX clock NOT voted";
    if (n < 2) snprintf(buf, len, "cDSP: no DCVS vote (%d refused)", nr);
    else snprintf(buf, len, "DCVS off, core/bus max; %s; %d refused", hmx, nr);
}

void hx_cpu_model(char *buf, size_t len) {
    int units = qurt_hvx_get_units();
    snprintf(buf, len, "Hexagon v%d cDSP, HVX128 contexts %d, %d hardware threads", __HEXAGON_ARCH__,
             (units >> 8) & 0xFF, hx_online_cores());
}

void *hx_alloc(size_t bytes, size_t align) {
    if (align < sizeof(void *)) align = sizeof(void *);
    return memalign(align, bytes ? bytes : align);
}

void hx_free(void *p) { free(p); }

/* What the run really held and used (platform.h); see kernels/hexagon/README.md. */
void hx_platform_resources(hx_json *j) {
    const char *const *votes;
    int nv = hx_power_votes(&votes);
    hx_json_obj(j, "resources");
    hx_json_str(j, "platform", "qurt");
    hx_json_arr(j, "power_votes");
    for (int i = 0; i < nv; i++) hx_json_str(j, NULL, votes[i]);
    hx_json_close(j, ']');
    const char *const *refused;
    const int *rcs;
    int nr = hx_power_refused(&refused, &rcs);
    hx_json_arr(j, "power_votes_refused");
    for (int i = 0; i < nr; i++) {
        char code[16];
        snprintf(code, sizeof code, "0x%x", (unsigned)rcs[i]);
        hx_json_obj(j, NULL);
        hx_json_str(j, "vote", refused[i]);
        hx_json_str(j, "rc", code);
        hx_json_close(j, '}');
    }
    hx_json_close(j, ']');
    size_t arena = 0, hmx = 0, bytes = hx_vtcm_acquired_bytes();
    uint8_t *base = hx_vtcm_arena(&arena);
    hx_vtcm_hmx_region(&hmx);
    /* given back on request before the end: what was held, and when it went */
    uint64_t gone = base ? 0 : hx_vtcm_given_back(&base, &bytes, &arena, &hmx);
    if (base) {
        char b[32];
        snprintf(b, sizeof b, "0x%08lx", (unsigned long)(uintptr_t)base);
        hx_json_obj(j, "vtcm");
        hx_json_str(j, "base", b);
        hx_json_u64(j, "bytes", bytes);
        hx_json_u64(j, "defined_bytes", hx_vtcm_defined_bytes());
        hx_json_u64(j, "arena_bytes", arena);
        hx_json_u64(j, "hmx_region_bytes", hmx);
        hx_json_u64(j, "release_requests", hx_vtcm_release_requests());
        hx_json_bool(j, "released_on_request", gone != 0);
        hx_json_close(j, '}');
    } else {
        hx_json_null(j, "vtcm");
    }
    hx_kernels_device_resources(j);
    /* what the ready-thread check compared, and the priorities it created */
    hx_json_obj(j, "threads");
    hx_json_i64(j, "hw_threads", hx_max_ready_threads());
    hx_json_i64(j, "ready_threads_max", ready_threads_peak + 1);
    if (host_prio >= 0) hx_json_i64(j, "host_priority", host_prio);
    else hx_json_null(j, "host_priority");
    if (engine_prio >= 0) hx_json_i64(j, "engine_priority", engine_prio);
    else hx_json_null(j, "engine_priority");
    if (antagonist_prio >= 0) hx_json_i64(j, "antagonist_priority", antagonist_prio);
    else hx_json_null(j, "antagonist_priority");
    hx_json_close(j, '}');
    hx_json_obj(j, "hvx");
    hx_json_i64(j, "units_128b", hvx_units());
    hx_json_i64(j, "locks_held", hvx_holders);
    hx_json_i64(j, "lock_failures", hvx_lock_failures);
    hx_json_close(j, '}');
    if (hx_failure()) hx_json_str(j, "device_failure", hx_failure()); /* the reason of status device_error */
    else hx_json_null(j, "device_failure");
    hx_json_bool(j, "fallbacks_allowed", HX_ALLOW_FALLBACK);
    hx_json_u64(j, "fallbacks", hx_vtcm_ddr_fallbacks() + hx_kernels_device_fallbacks());
    hx_json_close(j, '}');
}
