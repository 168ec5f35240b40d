/* The self-test's platform part on POSIX (host, and Linux user mode under
 * qemu-hexagon): sleep, log, and the affinity step. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <time.h>
#include "platform.h"
#include "selftest.h"

void hx_st_sleep_ms(unsigned ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

void hx_st_log(const char *line) {
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static volatile int seen_cpu = -2;
static void on_core0(void *arg) {
    (void)arg;
    seen_cpu = hx_current_cpu();
}

/* What --affinity relies on: a thread pinned to core 0 runs there. */
static int st_affinity(char *d, size_t n) {
    char err[300] = "";
    seen_cpu = -2;
    hx_thread *t = hx_thread_start(on_core0, NULL, "st_pinned", 0, err, sizeof err);
    if (!t) {
        snprintf(d, n, "cannot pin a thread to core 0: %s", err);
        return HX_ST_FAIL;
    }
    hx_thread_join(t);
    if (seen_cpu == -1) {
        snprintf(d, n, "pinned to core 0; this platform cannot tell the current core");
        return HX_ST_PASS;
    }
    snprintf(d, n, "a thread pinned to core 0 ran on core %d", seen_cpu);
    return seen_cpu == 0 ? HX_ST_PASS : HX_ST_FAIL;
}

const hx_st_step hx_st_platform_steps[] = {
    {"affinity", st_affinity},
    {NULL, NULL},
};
