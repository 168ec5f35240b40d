/* POSIX/Linux implementation of platform.h: the machine as the run sees it
 * (online cores, CPU model, load, how busy the cores are, the frequency
 * governor), read from sysconf, /proc and /sys.  The rest of the POSIX
 * platform: platform_posix.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "platform.h"

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
/* The first eight numbers of /proc/stat's aggregate "cpu" line (user nice
 * system idle iowait irq softirq steal) into v; how many were read, -1 where
 * the file is unreadable. */
static int read_cpu_line(unsigned long long v[8]) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]);
    fclose(f);
    return n;
}
/* Sums of the aggregate "cpu" line: all jiffies and idle ones. */
static int read_cpu_jiffies(unsigned long long *total, unsigned long long *idle) {
    unsigned long long v[8] = {0};
    if (read_cpu_line(v) < 4) return -1;
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
int64_t hx_steal_ns(void) {
    unsigned long long v[8] = {0};
    int n = read_cpu_line(v);
    long hz = sysconf(_SC_CLK_TCK);
    if (n < 8 || hz <= 0) return -1; /* no steal field: kernels before 2.6.11 */
    return (int64_t)(v[7] * (1000000000ull / (unsigned long long)hz));
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
void hx_cpu_governor(char *buf, size_t len) {
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "r");
    if (!f) return;
    if (fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = 0;
    fclose(f);
}
