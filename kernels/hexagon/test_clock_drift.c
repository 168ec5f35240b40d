/* clock_qurt.c and the end record's clock_drift against a stub clock.
 *
 * Built for the host with the SDK declarations (sdk_decls/), the runner's
 * JSON and record writers (common/json.c, common/record.c) and the stub
 * HAP_perf / QuRT profile counters below: a QTimer that advances 192 ticks
 * (10 us) per read and a core that runs `rate` cycles per us.  Each case
 * calibrates at "start-up", changes the rate as throttling would, calibrates
 * at the "end" and prints the end record's clock_drift, one JSON line per
 * case, for tests/hexagon/test_clock_drift.py to check:
 *   steady      1000 -> 1000 cycles/us: drift 0, not drifted
 *   small       1000 ->  990: -1%, within the 2% tolerance
 *   throttled   1000 ->  900: -10%, drifted
 *   boosted     1000 -> 1030: +3%, drifted
 *   stuck       the QTimer stops before the end: no end value, null
 *
 *   cc -std=gnu11 -Ikernels/hexagon/sdk_decls kernels/hexagon/test_clock_drift.c \
 *      kernels/hexagon/clock_qurt.c kernels/common/record.c kernels/common/json.c */
#include <stdio.h>
#include <string.h>
#include <HAP_perf.h>
#include <qurt.h>
#include "../common/json.h"
#include "../common/platform.h"
#include "../common/record.h"
#include "kernels_hexagon.h"

static struct {
    uint64_t qtimer, pcycles, rate;
    int stuck;
} clk;

uint64_t HAP_perf_get_qtimer_count(void) {
    if (!clk.stuck) clk.qtimer += 192, clk.pcycles += 10 * clk.rate;
    else clk.pcycles += 10 * clk.rate;
    return clk.qtimer;
}
uint64_t HAP_perf_get_pcycles(void) { return clk.pcycles; }
uint64_t HAP_perf_qtimer_count_to_us(uint64_t count) { return count * 10 / 192; }
unsigned long long qurt_profile_get_thread_pcycles(void) { return clk.pcycles; }
/* what record.c reads of the machine (not used by the drift record) */
double hx_load_average_1min(void) { return -1.0; }
double hx_busy_cores(unsigned ms) {
    (void)ms;
    return -1.0;
}
int64_t hx_steal_ns(void) { return -1; }
uint64_t hx_now_ns(void) { return clk.qtimer; }
int hx_online_cores(void) { return 1; }

static void one_case(const char *name, uint64_t start_rate, uint64_t end_rate, int stuck) {
    char err[200];
    uint64_t v = 0;
    clk.rate = start_rate, clk.stuck = 0;
    if (hx_qurt_measure_clock(&v, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "test_clock_drift: %s: start-up calibration failed: %s\n", name, err);
        return;
    }
    hx_qurt_clock_started(v);
    clk.rate = end_rate, clk.stuck = stuck;
    hx_json j;
    hx_json_begin(&j, stdout);
    hx_json_str(&j, "case", name);
    hx_json_f64(&j, "start", hx_clock_calibration_start());
    hx_record_clock_drift(&j, hx_clock_calibration_start(), hx_clock_calibrate());
    hx_json_end(&j);
}

int main(void) {
    one_case("steady", 1000, 1000, 0);
    one_case("small", 1000, 990, 0);
    one_case("throttled", 1000, 900, 0);
    one_case("boosted", 1000, 1030, 0);
    one_case("stuck", 1000, 1000, 1);
    return 0;
}
