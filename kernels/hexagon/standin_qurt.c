/* A stand-in for the QuRT, HAP and HexKL-micro functions the device code
 * calls, for tests only: built with the declarations in sdk_decls/ and run
 * under qemu-hexagon (POSIX threads underneath), never linked into hxrun.
 *
 * It keeps the contracts of the real libraries that the runner's correctness
 * depends on, and turns a breach into a loud failure (exit 70, "VIOLATION"
 * and the rule on stderr) where the cDSP would fault and end the PD:
 *   - HVX contexts (qurt_hvx.h, qurt_hvx_lock / qurt_hvx_unlock): a software
 *     thread may execute HVX instructions only while it holds a context it
 *     locked itself, and unlocks from that thread.  The HexKL calls that are
 *     HVX code (weight and activation layout, read-out) check it.
 *   - HMX (HAP_compute_res.h, HAP_compute_res_hmx_lock / _hmx_unlock): only
 *     the software thread that holds the HMX lock may execute HMX
 *     instructions, and it must unlock from the same thread; the context is
 *     released after HMX is unlocked.  The HexKL HMX calls (accumulator
 *     set-up, clear, multiply, read) check it, and so do unlock and release.
 *   - The order public HexKL users follow: HVX, then HMX (an HMX call from a
 *     thread with no HVX context is refused too).
 *   - Threads: qurt_thread_get_priority returns what the creator set (1 is
 *     the highest priority, 255 the lowest, qurt_thread.h);
 *     qurt_sysenv_get_max_hw_threads returns HX_STANDIN_HW_THREADS (default
 *     6, a v73 cDSP); qurt_hvx_get_units reports HX_STANDIN_HVX_UNITS
 *     128-byte contexts (default 4).
 *   - HX_STANDIN_HEXKL_FAIL=1 makes hexkl_micro_hmx_mm_u8i8 return an error.
 *   - HAP_power_set records each request; HX_STANDIN_REFUSE_POWER=N refuses
 *     requests of type N (HAP_power.h's request type) with AEE_EFAILED.
 * HexKL's tile layouts are private to the library; the stand-in uses its own
 * (row-major 64x32 u8 activation tiles, 32x32 i8 weight tiles, a 64x32 int32
 * accumulator) consistently, so that a GEMM through it has the exact answer
 * and kernels_hmx.c can be checked against the reference.
 *
 * Sources read for these contracts: the public SDK headers qurt_hvx.h,
 * qurt_thread.h and HAP_compute_res.h (see kernels/hexagon/sdk_decls/README.md
 * for where public copies were read), llama.cpp's
 * ggml/src/ggml-hexagon/htp/hmx-queue.c (HMX locked and unlocked by its
 * worker thread) and Apache TVM's src/runtime/hexagon/hexagon_thread_manager.cc
 * (each worker thread locks its own HVX context). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <AEEStdErr.h>
#include <HAP_compute_res.h>
#include <HAP_farf.h>
#include <HAP_perf.h>
#include <HAP_power.h>
#include <hexkl_micro.h>
#include <qurt.h>
#include "standin_qurt.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* ---- loud failures --------------------------------------------------- */
void standin_violation(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "qurt stand-in: VIOLATION: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    _exit(70);
}

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* ---- threads ----------------------------------------------------------- */
static __thread unsigned self_id;
static __thread int self_prio;
static __thread char self_name[QURT_THREAD_ATTR_NAME_MAXLEN];
static __thread int self_hvx; /* this thread holds an HVX context */
static unsigned next_id = 2;

qurt_thread_t qurt_thread_get_id(void) {
    if (!self_id) { /* the process's first thread */
        self_id = 1;
        self_prio = env_int("HX_STANDIN_MAIN_PRIO", 100);
        snprintf(self_name, sizeof self_name, "main");
    }
    return self_id;
}
int qurt_thread_get_priority(qurt_thread_t tid) { return tid == qurt_thread_get_id() ? self_prio : -1; }

void qurt_thread_attr_init(qurt_thread_attr_t *a) {
    memset(a, 0, sizeof *a);
    a->priority = 255; /* the header's default when none is set: the lowest */
}
void qurt_thread_attr_set_name(qurt_thread_attr_t *a, char *name) { snprintf(a->name, sizeof a->name, "%s", name); }
void qurt_thread_attr_set_stack_addr(qurt_thread_attr_t *a, void *p) { a->stack_addr = p; }
void qurt_thread_attr_set_stack_size(qurt_thread_attr_t *a, unsigned int n) { a->stack_size = n; }
void qurt_thread_attr_set_priority(qurt_thread_attr_t *a, unsigned short p) { a->priority = p; }

typedef struct {
    void (*fn)(void *);
    void *arg;
    unsigned id;
    int prio;
    char name[QURT_THREAD_ATTR_NAME_MAXLEN];
    pthread_t pt;
} standin_thread;

static standin_thread threads[64];
static standin_created created[64];
static int ncreated;

static void *thread_main(void *p) {
    standin_thread *t = (standin_thread *)p;
    self_id = t->id, self_prio = t->prio;
    snprintf(self_name, sizeof self_name, "%s", t->name);
    t->fn(t->arg);
    if (self_hvx)
        standin_violation("thread %s ended holding an HVX context (qurt_hvx.h: unlock before exit)", self_name);
    return NULL;
}

int qurt_thread_create(qurt_thread_t *tid, qurt_thread_attr_t *a, void (*fn)(void *), void *arg) {
    qurt_thread_get_id();
    if (a->priority < 1 || a->priority > 255) return 1;
    pthread_mutex_lock(&mu);
    if (ncreated >= 64) {
        pthread_mutex_unlock(&mu);
        return 1;
    }
    standin_thread *t = &threads[ncreated];
    t->fn = fn, t->arg = arg, t->id = next_id++, t->prio = a->priority;
    snprintf(t->name, sizeof t->name, "%s", a->name);
    created[ncreated] = (standin_created){t->id, a->priority, ""};
    snprintf(created[ncreated].name, sizeof created[ncreated].name, "%s", a->name);
    ncreated++;
    pthread_mutex_unlock(&mu);
    *tid = t->id;
    return pthread_create(&t->pt, NULL, thread_main, t) ? 1 : QURT_EOK;
}

int qurt_thread_join(unsigned int tid, int *status) {
    for (int i = 0; i < ncreated; i++)
        if (threads[i].id == tid) {
            pthread_join(threads[i].pt, NULL);
            if (status) *status = 0;
            return QURT_EOK;
        }
    return 1;
}

void qurt_thread_exit(int status) {
    (void)status;
    if (self_hvx) standin_violation("thread %s exited holding an HVX context (qurt_hvx.h)", self_name);
    pthread_exit(NULL);
}

int standin_threads(const standin_created **list) {
    *list = created;
    return ncreated;
}

/* Futexes: a wait returns when the word differs, after a wake, or after
 * 1 ms (spurious returns are allowed by qurt_futex.h's callers' loops). */
int qurt_futex_wait(void *lock, int val) {
    pthread_mutex_lock(&mu);
    if (__atomic_load_n((int *)lock, __ATOMIC_ACQUIRE) == val) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&cv, &mu, &ts);
    }
    pthread_mutex_unlock(&mu);
    return 0;
}
int qurt_futex_wake(void *lock, int n) {
    (void)lock, (void)n;
    pthread_mutex_lock(&mu);
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return 0;
}

int qurt_sysenv_get_max_hw_threads(qurt_sysenv_max_hthreads_t *h) {
    h->max_hthreads = (unsigned)env_int("HX_STANDIN_HW_THREADS", 6);
    return QURT_EOK;
}

/* ---- HVX --------------------------------------------------------------- */
static int hvx_in_use;

int qurt_hvx_get_units(void) { return env_int("HX_STANDIN_HVX_UNITS", 4) << 8; }

int qurt_hvx_try_lock(qurt_hvx_mode_t mode) {
    if (mode != QURT_HVX_MODE_128B) return 1;
    qurt_thread_get_id();
    if (self_hvx) return QURT_EOK; /* already this thread's */
    pthread_mutex_lock(&mu);
    int ok = hvx_in_use < (qurt_hvx_get_units() >> 8);
    if (ok) hvx_in_use++;
    pthread_mutex_unlock(&mu);
    if (!ok) return 1;
    self_hvx = 1;
    return QURT_EOK;
}
int qurt_hvx_lock(qurt_hvx_mode_t mode) {
    while (qurt_hvx_try_lock(mode) != QURT_EOK) usleep(100);
    return QURT_EOK;
}
int qurt_hvx_unlock(void) {
    qurt_thread_get_id();
    if (!self_hvx)
        standin_violation("qurt_hvx_unlock from thread %s, which holds no HVX context (qurt_hvx.h: the thread that "
                          "locked a context unlocks it)",
                          self_name);
    pthread_mutex_lock(&mu);
    hvx_in_use--;
    pthread_mutex_unlock(&mu);
    self_hvx = 0;
    return QURT_EOK;
}
int standin_hvx_held_here(void) { return self_hvx; }

static void need_hvx(const char *call) {
    qurt_thread_get_id();
    if (!self_hvx)
        standin_violation("%s on thread %s, which holds no HVX context: on the cDSP its first HVX packet "
                          "faults and the PD dies (qurt_hvx.h: lock a context with qurt_hvx_lock first)",
                          call, self_name);
}

/* ---- clocks, caches, sleep, log ---------------------------------------- */
static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
void qurt_profile_enable(int e) { (void)e; }
unsigned long long qurt_profile_get_thread_pcycles(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec; /* a 1 GHz core */
}
uint64_t HAP_perf_get_qtimer_count(void) { return mono_ns() * 192u / 10000u; /* 19.2 MHz */ }
uint64_t HAP_perf_qtimer_count_to_us(uint64_t c) { return c * 10u / 192u; }
uint64_t HAP_perf_get_pcycles(void) { return mono_ns(); }
uint64_t HAP_perf_get_time_us(void) { return mono_ns() / 1000u; }
int qurt_mem_cache_clean(qurt_addr_t a, qurt_size_t n, qurt_mem_cache_op_t op, qurt_mem_cache_type_t t) {
    (void)a, (void)n, (void)op, (void)t;
    return QURT_EOK;
}
int qurt_timer_sleep(qurt_timer_duration_t us) {
    usleep((useconds_t)us);
    return QURT_EOK;
}
void HAP_debug_v2(int level, const char *file, int line, const char *fmt, ...) {
    (void)level, (void)file, (void)line;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FARF: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* ---- power --------------------------------------------------------------- */
static int power_types[32], npower;
int HAP_power_set(void *ctx, HAP_power_request_t *r) {
    (void)ctx;
    if ((int)r->type == env_int("HX_STANDIN_REFUSE_POWER", -1)) return AEE_EFAILED;
    if (npower < 32) power_types[npower++] = (int)r->type;
    return AEE_SUCCESS;
}
int standin_power_requests(const int **types) {
    *types = power_types;
    return npower;
}

/* ---- compute resources: VTCM and HMX ------------------------------------- */
#define VTCM_BYTES (4u << 20)
static _Alignas(4096) uint8_t vtcm[VTCM_BYTES];
static unsigned ctx_held;
static qurt_thread_t hmx_owner; /* 0: unlocked */
static int hmx_unlocks_same_thread;

int HAP_compute_res_query_VTCM(unsigned int app, unsigned int *total, compute_res_vtcm_page_t *tl, unsigned int *avail,
                               compute_res_vtcm_page_t *al) {
    (void)app;
    if (total) *total = VTCM_BYTES;
    if (avail) *avail = ctx_held ? 0 : VTCM_BYTES;
    if (tl)
        memset(tl, 0, sizeof *tl), tl->page_list_len = 1,
                                   tl->page_list[0] = (compute_res_vtcm_page_def_t){VTCM_BYTES, 1};
    if (al) memset(al, 0, sizeof *al);
    return 0;
}
int HAP_compute_res_attr_init(compute_res_attr_t *a) {
    memset(a, 0, sizeof *a);
    return 0;
}
int HAP_compute_res_attr_set_serialize(compute_res_attr_t *a, unsigned char b) {
    (void)a, (void)b;
    return 0;
}
int HAP_compute_res_attr_set_vtcm_param_v2(compute_res_attr_t *a, unsigned int size, unsigned int page,
                                           unsigned int min) {
    (void)min;
    if (size > VTCM_BYTES || (page && page != VTCM_BYTES && page > size)) return AEE_EBADPARM;
    a->attributes[0] = size;
    return 0;
}
int HAP_compute_res_attr_set_hmx_param(compute_res_attr_t *a, unsigned char b) {
    a->attributes[1] = b;
    return 0;
}
int HAP_compute_res_attr_set_release_callback(compute_res_attr_t *a, int (*cb)(unsigned int, void *), void *c) {
    (void)a, (void)cb, (void)c;
    return 0;
}
unsigned int HAP_compute_res_acquire(compute_res_attr_t *a, unsigned int timeout_us) {
    (void)timeout_us;
    if (ctx_held) return 0;
    ctx_held = 1 + (unsigned)a->attributes[1]; /* 2: with HMX */
    return 7;
}
int HAP_compute_res_attr_get_vtcm_ptr_v2(compute_res_attr_t *a, void **p, unsigned int *size) {
    *p = vtcm, *size = (unsigned int)a->attributes[0];
    return 0;
}
int HAP_compute_res_release(unsigned int ctx) {
    if (ctx != 7 || !ctx_held) return AEE_EBADPARM;
    if (hmx_owner)
        standin_violation("HAP_compute_res_release with HMX still locked by thread %u (HAP_compute_res.h: unlock HMX "
                          "on the locking thread before releasing)",
                          hmx_owner);
    ctx_held = 0;
    return 0;
}
int HAP_compute_res_hmx_lock(unsigned int ctx) {
    qurt_thread_t self = qurt_thread_get_id();
    if (ctx != 7 || ctx_held != 2) return AEE_EBADPARM;
    if (hmx_owner == self) return 0;
    if (hmx_owner) return AEE_EBADSTATE;
    hmx_owner = self;
    return 0;
}
int HAP_compute_res_hmx_unlock(unsigned int ctx) {
    qurt_thread_t self = qurt_thread_get_id();
    if (ctx != 7) return AEE_EBADPARM;
    if (hmx_owner != self)
        standin_violation("HAP_compute_res_hmx_unlock on thread %s, but thread %u holds the HMX lock "
                          "(HAP_compute_res.h: unlock from the thread that locked it)",
                          self_name, hmx_owner);
    hmx_owner = 0;
    hmx_unlocks_same_thread++;
    return 0;
}
unsigned standin_hmx_owner(void) { return hmx_owner; }
int standin_hmx_unlocks(void) { return hmx_unlocks_same_thread; }

static void need_hmx(const char *call) {
    need_hvx(call);
    if (hmx_owner != qurt_thread_get_id())
        standin_violation("%s (HMX) on thread %s, but %s holds the HMX lock: on the cDSP only the thread holding "
                          "the lock may execute HMX instructions (HAP_compute_res.h, HAP_compute_res_hmx_lock)",
                          call, self_name, hmx_owner ? "another thread" : "no thread");
}

/* ---- HexKL micro ------------------------------------------------------- */
static int32_t acc[64 * 32];
static int mm_calls;
int standin_mm_calls(void) { return mm_calls; }

uint32_t hexkl_micro_hmx_config_size(void) { return 256; }
int hexkl_micro_hmx_setup_acc_read_int32(uint8_t *vtcm_base, uint32_t cfg) {
    need_hmx("hexkl_micro_hmx_setup_acc_read_int32");
    memset(vtcm_base + cfg, 0x11, 256);
    return AEE_SUCCESS;
}
void hexkl_micro_hmx_acc_clear_int32(void) {
    need_hmx("hexkl_micro_hmx_acc_clear_int32");
    memset(acc, 0, sizeof acc);
}
int hexkl_micro_hmx_acc_read_int32(uint8_t *vtcm_base, uint32_t cfg, uint32_t out) {
    need_hmx("hexkl_micro_hmx_acc_read_int32");
    if (vtcm_base[cfg] != 0x11) return AEE_EBADSTATE; /* no accumulator read set up */
    memcpy(vtcm_base + out, acc, sizeof acc);
    return AEE_SUCCESS;
}
int hexkl_micro_hmx_mm_u8i8(uint8_t *vtcm_base, uint32_t act, uint32_t w) {
    need_hmx("hexkl_micro_hmx_mm_u8i8");
    mm_calls++;
    if (env_int("HX_STANDIN_HEXKL_FAIL", 0)) return AEE_EFAILED; /* a planted HexKL error */
    if (vtcm_base < vtcm || vtcm_base + w + 1024 > vtcm + VTCM_BYTES || act % 2048 || w % 128)
        return AEE_EBADPARM; /* HMX reads its tiles from VTCM, aligned */
    const uint8_t *a = vtcm_base + act;
    const int8_t *b = (const int8_t *)(vtcm_base + w);
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 32; c++) {
            int32_t s = 0;
            for (int k = 0; k < 32; k++) s += (int32_t)a[r * 32 + k] * b[k * 32 + c];
            acc[r * 32 + c] += s;
        }
    return AEE_SUCCESS;
}
int hexkl_micro_hmx_rm_to_wh_i8(uint8_t *vtcm_base, uint32_t off, const int8_t *wt, uint32_t row_tile,
                                uint32_t col_tile, uint32_t wt_cols) {
    need_hvx("hexkl_micro_hmx_rm_to_wh_i8");
    int8_t *d = (int8_t *)(vtcm_base + off);
    for (uint32_t r = 0; r < 32; r++)
        for (uint32_t c = 0; c < 32; c++) d[r * 32 + c] = wt[(row_tile * 32 + r) * wt_cols + col_tile * 32 + c];
    return AEE_SUCCESS;
}
int hexkl_micro_hmx_copy_submatrix_to_8b_activation(uint8_t *vtcm_base, uint32_t off, const uint8_t *in,
                                                    uint32_t tile_row, uint32_t tile_col, uint32_t rows,
                                                    uint32_t cols) {
    need_hvx("hexkl_micro_hmx_copy_submatrix_to_8b_activation");
    uint8_t *d = vtcm_base + off;
    for (uint32_t r = 0; r < 64; r++)
        for (uint32_t c = 0; c < 32; c++) {
            uint32_t R = tile_row * 64 + r, C = tile_col * 32 + c;
            d[r * 32 + c] = R < rows && C < cols ? in[(size_t)R * cols + C] : 0;
        }
    return AEE_SUCCESS;
}
int hexkl_micro_hmx_copy_32b_to_submatrix(uint8_t *vtcm_base, uint32_t in, int32_t *out, uint32_t tile_row,
                                          uint32_t tile_col, uint32_t rows, uint32_t cols) {
    need_hvx("hexkl_micro_hmx_copy_32b_to_submatrix");
    const int32_t *s = (const int32_t *)(vtcm_base + in);
    for (uint32_t r = 0; r < 64; r++)
        for (uint32_t c = 0; c < 32; c++) {
            uint32_t R = tile_row * 64 + r, C = tile_col * 32 + c;
            if (R < rows && C < cols) out[(size_t)R * cols + C] = s[r * 32 + c];
        }
    return AEE_SUCCESS;
}
