/* POSIX/Linux implementation of platform.h: clocks, sleeps and CPU time
 * (CLOCK_MONOTONIC, the thread's and the process's CPU clocks).  The rest of
 * the POSIX platform: platform_posix.c (memory, files, the resources
 * record), platform_posix_thread.c, platform_posix_machine.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/prctl.h>
#include <time.h>
#include "platform.h"

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
void hx_sleep_ns(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}
void hx_set_timer_slack_ns(unsigned long ns) { prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0); }
int64_t hx_process_cpu_ns(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return -1;
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}
/* Nothing calibrated (platform.h): clock_gettime reads ns. */
double hx_clock_calibration_start(void) { return 0.0; }
double hx_clock_calibrate(void) { return 0.0; }
