/* POSIX/Linux implementation of platform.h: pthreads, CLOCK_MONOTONIC and
 * futexes.  Used on the host and for hexagon-linux-musl under QEMU. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "json.h"
#include "platform.h"

#ifndef HX_PLATFORM_NAME
#define HX_PLATFORM_NAME "host"
#endif

uint64_t hx_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t hx_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int hx_thread_cpu_available(void) { return 1; }

uint64_t hx_clock_resolution_ns(void) {
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *hx_clock_source(void) { return "clock_gettime(CLOCK_MONOTONIC)"; }
const char *hx_platform_name(void) { return HX_PLATFORM_NAME; }

struct hx_thread {
    pthread_t tid;
    hx_thread_fn fn;
    void *arg;
    int core;
    int pin_rc;       /* errno of the thread's own pinning, 0 on success */
    uint32_t started; /* set once pin_rc is valid */
    char name[16];
};

/* The thread pins itself before it runs anything and reports the result, so
 * that a core the process may not use fails hx_thread_start with a message
 * instead of leaving the engine floating.  A floating thread inherits the
 * creator's mask: the host pins itself only after the engines exist. */
static void *trampoline(void *p) {
    hx_thread *t = (hx_thread *)p;
    int rc = t->core >= 0 && hx_pin_self(t->core) != 0 ? errno : 0;
    t->pin_rc = rc;
    __atomic_store_n(&t->started, 1u, __ATOMIC_RELEASE);
    if (rc == 0) t->fn(t->arg);
    return NULL;
}

hx_thread *hx_thread_start(hx_thread_fn fn, void *arg, const char *name, int core, char *err, size_t errlen) {
    hx_thread *t = (hx_thread *)calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory creating thread %s", name);
        return NULL;
    }
    t->fn = fn;
    t->arg = arg;
    t->core = core;
    snprintf(t->name, sizeof t->name, "%s", name);
    int rc = pthread_create(&t->tid, NULL, trampoline, t);
    if (rc != 0) {
        snprintf(err, errlen, "pthread_create(%s): %s", name, strerror(rc));
        free(t);
        return NULL;
    }
    pthread_setname_np(t->tid, t->name);
    while (!__atomic_load_n(&t->started, __ATOMIC_ACQUIRE)) hx_yield();
    if (t->pin_rc != 0) {
        snprintf(err, errlen, "cannot pin thread %s to core %d: %s", name, core, strerror(t->pin_rc));
        pthread_join(t->tid, NULL);
        free(t);
        return NULL;
    }
    return t;
}

void hx_engine_release_self(void) {} /* no on-chip units on POSIX (platform.h) */

void hx_thread_join(hx_thread *t) {
    if (!t) return;
    pthread_join(t->tid, NULL);
    free(t);
}

int hx_pin_self(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -1;
}

void hx_word_wait(uint32_t *addr, uint32_t expected) {
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void hx_word_wait_timeout(uint32_t *addr, uint32_t expected, uint64_t timeout_ns) {
    struct timespec ts, *tp = NULL;
    if (timeout_ns != UINT64_MAX) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000u), ts.tv_nsec = (long)(timeout_ns % 1000000000u);
        tp = &ts;
    }
    /* FUTEX_WAIT's timeout is relative */
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, tp, NULL, 0);
}

void hx_sleep_ns(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

void hx_set_timer_slack_ns(unsigned long ns) { prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0); }

int hx_is_directory(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int hx_make_dir(const char *path) { return mkdir(path, 0777); }

void hx_word_wake_all(uint32_t *addr) { syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0); }

void hx_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void hx_yield(void) { sched_yield(); }

int hx_current_cpu(void) { return sched_getcpu(); }

int hx_online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
int hx_max_ready_threads(void) { return 0; } /* the kernel time-slices (platform.h) */
const char *hx_cores_key(void) { return "online_cores"; }
const char *hx_cores_words(void) { return "online cores"; }

void hx_cpu_model(char *buf, size_t len) {
#ifdef HX_CPU_MODEL
    /* Emulated targets: /proc/cpuinfo would describe the emulating host. */
    snprintf(buf, len, "%s", HX_CPU_MODEL);
    return;
#endif
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "Hardware", 8) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t') c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(buf, len, "%s", c);
                break;
            }
        }
    }
    fclose(f);
}

double hx_load_average_1min(void) {
    double one = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return -1.0;
    if (fscanf(f, "%lf", &one) != 1) one = -1.0;
    fclose(f);
    return one;
}

/* Sums of the aggregate "cpu" line of /proc/stat: all jiffies and idle ones. */
static int read_cpu_jiffies(unsigned long long *total, unsigned long long *idle) {
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]);
    fclose(f);
    if (n < 4) return -1;
    *total = 0;
    for (int i = 0; i < 8; i++) *total += v[i];
    *idle = v[3] + v[4]; /* idle + iowait */
    return 0;
}

double hx_busy_cores(unsigned ms) {
    unsigned long long t0, i0, t1, i1;
    if (read_cpu_jiffies(&t0, &i0)) return -1.0;
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    if (read_cpu_jiffies(&t1, &i1) || t1 <= t0) return -1.0;
    double busy = 1.0 - (double)(i1 - i0) / (double)(t1 - t0);
    return busy * hx_online_cores();
}

/* Per-core CPU time of everything on the machine.  cgroup v1's root
 * cpuacct.usage_percpu is exact to the ns: the scheduler charges it from the
 * same update that advances each thread's own CPU clock (on every switch,
 * wake-up preemption check and tick), so it lags a running thread by at most
 * one tick, the same lag as that thread's own clock.  /proc/stat is the
 * fallback: in USER_HZ jiffies (10 ms with USER_HZ 100) and sampled at the
 * scheduler tick, far too coarse for trials of a few ms, which is why it
 * comes second.  Read by the host thread only. */
#define CPUACCT_PERCPU "/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu"
enum { BUSY_UNKNOWN = 0, BUSY_CPUACCT, BUSY_PROC_STAT, BUSY_NONE };
static int busy_src = BUSY_UNKNOWN;
static int cpuacct_fd = -1;

static void busy_probe(void) {
    if (busy_src != BUSY_UNKNOWN) return;
    cpuacct_fd = open(CPUACCT_PERCPU, O_RDONLY | O_CLOEXEC);
    if (cpuacct_fd >= 0) {
        busy_src = BUSY_CPUACCT;
        return;
    }
    FILE *f = fopen("/proc/stat", "r");
    busy_src = f ? BUSY_PROC_STAT : BUSY_NONE;
    if (f) fclose(f);
}

static int selected(const int *cores, int ncores, int cpu) {
    for (int i = 0; i < ncores; i++)
        if (cores[i] == cpu) return 1;
    return 0;
}

/* One pread of the open file: the kernel regenerates it at offset 0, so the
 * open and close stay out of every sample. */
static int64_t cpuacct_busy(const int *cores, int ncores) {
    char buf[16384];
    ssize_t n = pread(cpuacct_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    int64_t sum = 0;
    char *p = buf, *end;
    for (int cpu = 0;; cpu++) {
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p) break;
        if (selected(cores, ncores, cpu)) sum += (int64_t)v;
        p = end;
    }
    return sum;
}

/* Busy jiffies (user + nice + system + irq + softirq + steal) of the cores. */
static int64_t proc_stat_busy(const int *cores, int ncores) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    char line[512];
    unsigned long long jiffies = 0;
    while (fgets(line, sizeof line, f)) {
        int cpu;
        unsigned long long v[8] = {0};
        if (strncmp(line, "cpu", 3) != 0) break;
        if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7]) < 8)
            continue; /* the aggregate "cpu " line */
        if (selected(cores, ncores, cpu)) jiffies += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    }
    fclose(f);
    return (int64_t)(jiffies * hx_cores_busy_resolution_ns());
}

int64_t hx_cores_busy_ns(const int *cores, int ncores) {
    busy_probe();
    if (ncores <= 0) return -1;
    if (busy_src == BUSY_CPUACCT) return cpuacct_busy(cores, ncores);
    if (busy_src == BUSY_PROC_STAT) return proc_stat_busy(cores, ncores);
    return -1;
}

const char *hx_cores_busy_source(void) {
    busy_probe();
    if (busy_src == BUSY_CPUACCT) return CPUACCT_PERCPU;
    if (busy_src == BUSY_PROC_STAT) return "/proc/stat";
    return "unavailable";
}

uint64_t hx_cores_busy_resolution_ns(void) {
    busy_probe();
    if (busy_src == BUSY_CPUACCT) return 1;
    if (busy_src != BUSY_PROC_STAT) return 0;
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? 1000000000ull / (uint64_t)hz : 0;
}

int64_t hx_process_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int64_t nivcsw(int who) {
    struct rusage ru;
    return getrusage(who, &ru) == 0 ? (int64_t)ru.ru_nivcsw : -1;
}
int64_t hx_thread_involuntary_switches(void) { return nivcsw(RUSAGE_THREAD); }
int64_t hx_process_involuntary_switches(void) { return nivcsw(RUSAGE_SELF); }

int hx_allowed_cores(int *cores, int max) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cores[n++] = c;
    return n;
}

void hx_cpu_governor(char *buf, size_t len) {
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "r");
    if (!f) return;
    if (fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = 0;
    fclose(f);
}

void *hx_alloc(size_t bytes, size_t align) {
    void *p = NULL;
    if (align < sizeof(void *)) align = sizeof(void *);
    if (posix_memalign(&p, align, bytes ? bytes : align) != 0) return NULL;
    return p;
}

void hx_free(void *p) { free(p); }

void *hx_scratch_alloc(size_t bytes, int *on_chip) {
    *on_chip = 0; /* a CPU has no software-managed on-chip memory: caches stand in */
    return hx_alloc(bytes, 2048);
}

void hx_scratch_free(void *p) { hx_free(p); }

/* Nothing calibrated (platform.h): clock_gettime reads ns. */
double hx_clock_calibration_start(void) { return 0.0; }
double hx_clock_calibrate(void) { return 0.0; }

/* Preemption (platform.h; the request itself: common/release.c): no
 * resource manager here, the runner's test hook asks.  Nothing on-chip to
 * give back. */
void hx_release_resources(void) {}

/* Linux (host, or Hexagon user mode under QEMU): no power votes, on-chip
 * memory, matrix engine, user DMA or reserved vector contexts to report. */
void hx_platform_resources(hx_json *j) {
    hx_json_obj(j, "resources");
    hx_json_str(j, "platform", "posix");
    hx_json_null(j, "power_votes");
    hx_json_null(j, "power_votes_refused");
    hx_json_null(j, "threads");
    hx_json_null(j, "vtcm");
    hx_json_null(j, "hmx");
    hx_json_null(j, "udma");
    hx_json_null(j, "hvx");
    /* none of its own; a stand-in's injected device failure (the loopback
     * skel) is reported as the cDSP reports one */
    if (hx_failure()) hx_json_str(j, "device_failure", hx_failure());
    else hx_json_null(j, "device_failure");
    hx_json_bool(j, "fallbacks_allowed", 0);
    hx_json_u64(j, "fallbacks", 0);
    hx_json_close(j, '}');
}
