/* The end record's steal_share (kernels/common/record.c) against a stubbed
 * platform: hx_steal_ns and hx_now_ns return the readings a case plants, one
 * at hx_record_before and one at hx_record_after.  Prints one JSON line per
 * case (the meta and end fields the two helpers write) for
 * tests/runner/test_steal_record.py:
 *   quarter     0.5 s of steal over 1 s on 2 cores: 0.25
 *   none        the same reading twice: 0
 *   unreadable  hx_steal_ns says -1: null
 *   backwards   the second reading below the first: null
 *
 *   cc -std=gnu11 -Ikernels/common tests/runner/steal_record.c \
 *      kernels/common/record.c kernels/common/json.c -lm */
#include <stdio.h>
#include "json.h"
#include "platform.h"
#include "record.h"

static int64_t steal[2];
static uint64_t now[2];
static int reads_steal, reads_now, cores;

int64_t hx_steal_ns(void) { return steal[reads_steal++ % 2]; }
uint64_t hx_now_ns(void) { return now[reads_now++ % 2]; }
int hx_online_cores(void) { return cores; }
double hx_load_average_1min(void) { return -1.0; }
double hx_busy_cores(unsigned ms) {
    (void)ms;
    return -1.0;
}

static void one_case(const char *name, int64_t s0, int64_t s1, uint64_t t0, uint64_t t1, int n) {
    steal[0] = s0, steal[1] = s1, now[0] = t0, now[1] = t1, cores = n;
    reads_steal = reads_now = 0;
    hx_json j;
    hx_json_begin(&j, stdout);
    hx_json_str(&j, "case", name);
    hx_record_before(&j);
    hx_record_after(&j);
    hx_json_end(&j);
}

int main(void) {
    one_case("quarter", 1000000000, 1500000000, 5000000000u, 6000000000u, 2);
    one_case("none", 7000000000, 7000000000, 5000000000u, 6000000000u, 2);
    one_case("unreadable", -1, -1, 5000000000u, 6000000000u, 2);
    one_case("backwards", 2000000000, 1000000000, 5000000000u, 6000000000u, 2);
    return 0;
}
