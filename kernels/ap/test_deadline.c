/* Known answers for deadline.c (run by tests/runner/test_ap_deadline.py):
 *   fast   2000 calls armed and disarmed well inside their bound: exit 0;
 *   rearm  a call re-armed with a longer bound before the first expires
 *          outlives the first bound: exit 0;
 *   hang   a call that blocks past its bound: the hook runs, stderr names
 *          the call, the process exits HX_DEADLINE_EXIT. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "deadline.h"

static void nap(double s) {
    struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&t, &t)) {}
}

static void hook(const char *what, double seconds, void *ctx) {
    printf("hook: %s after %.3g s (%s)\n", what, seconds, (const char *)ctx);
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (hx_deadline_init(hook, "the end record would be written here")) return 3;
    if (!strcmp(mode, "fast")) {
        for (int i = 0; i < 2000; i++) {
            hx_deadline_arm("CONTROL CHECKSUM", 5.0);
            hx_deadline_disarm();
        }
        printf("armed %lu\n", hx_deadline_armed_count());
        return hx_deadline_armed_count() == 2000 ? 0 : 2;
    }
    if (!strcmp(mode, "rearm")) {
        hx_deadline_arm("SETUP", 0.2);
        nap(0.05);
        hx_deadline_arm("START", 3.0); /* replaces SETUP's bound */
        nap(0.6);
        hx_deadline_disarm();
        nap(0.3); /* nothing armed: nothing expires */
        printf("survived\n");
        return 0;
    }
    if (!strcmp(mode, "hang")) {
        hx_deadline_arm("hxfuse CONTROL PING", 0.3);
        nap(30); /* the DSP never answers */
        printf("not stopped\n");
        return 0;
    }
    return 2;
}
