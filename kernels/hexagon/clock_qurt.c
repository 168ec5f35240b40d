/* The cDSP's core clock against the QTimer (platform.h, hx_clock_calibrate).
 *
 * STATUS: written against the documented Hexagon SDK API (HAP_perf.h,
 * qurt_cycles.h), compile-checked with the open toolchain (make sdk-check)
 * and run on the host against a stub HAP_perf (test_clock_drift.c); not yet
 * run on a simulator or phone.
 *
 * Thread CPU times are pcycles divided by the core clock measured at
 * start-up.  The DCVS vote fixes the clock at the maximum corner, but thermal
 * throttling can still lower it during a run, and a single calibration would
 * not notice: the runner measures again at the end and the end record flags
 * a drift beyond HX_CLOCK_DRIFT_TOL (common/record.c). */
#include <stdio.h>
#include <HAP_perf.h>
#include <qurt.h>
#include "../common/platform.h"
#include "kernels_hexagon.h"

#ifndef HX_QTIMER_HZ
#define HX_QTIMER_HZ 19200000ull
#endif

/* Busy for about 2 ms of QTimer, bounded by 2e8 core cycles: a QTimer that
 * does not advance (a simulator without its cosim) is an error, not a hang.
 * The global pcycle counter counts whatever thread runs, so preemption
 * during the loop does not bias the ratio. */
int hx_qurt_measure_clock(uint64_t *pcycles_per_us, int *thread_advances, char *err, size_t errlen) {
    uint64_t t0 = qurt_profile_get_thread_pcycles();
    uint64_t q0 = HAP_perf_get_qtimer_count(), p0 = HAP_perf_get_pcycles(), q1, p1;
    do {
        q1 = HAP_perf_get_qtimer_count(), p1 = HAP_perf_get_pcycles();
    } while (q1 - q0 < HX_QTIMER_HZ / 500 && p1 - p0 < 200000000ull);
    if (thread_advances) *thread_advances = qurt_profile_get_thread_pcycles() != t0;
    uint64_t us = HAP_perf_qtimer_count_to_us(q1 - q0);
    if (us < 1000) {
        snprintf(err, errlen,
                 "clock: the QTimer advanced %llu us while the core ran %llu cycles: no usable QTimer "
                 "(on hexagon-sim pass the qtimer cosim, see kernels/hexagon/sim.sh)",
                 (unsigned long long)us, (unsigned long long)(p1 - p0));
        return -1;
    }
    *pcycles_per_us = (p1 - p0) / us;
    if (!*pcycles_per_us) *pcycles_per_us = 1;
    return 0;
}

static double start_value; /* the start-up calibration, cycles per us */

void hx_qurt_clock_started(uint64_t pcycles_per_us) { start_value = (double)pcycles_per_us; }

double hx_clock_calibration_start(void) { return start_value; }

double hx_clock_calibrate(void) {
    char err[200];
    uint64_t v = 0;
    return hx_qurt_measure_clock(&v, NULL, err, sizeof err) == 0 ? (double)v : 0.0;
}
