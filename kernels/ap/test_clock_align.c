/* Known answers for clock_align.c (run by tests/runner/test_clock_align.py).
 * Prints one line per failed check and exits 1 on any failure. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "clock_align.h"

static int failures;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* A DSP clock with offset `off` and drift `ppm` relative to t0, read at AP time t. */
static uint64_t dsp_at(uint64_t t, int64_t off, double ppm, uint64_t t0) {
    return (uint64_t)((int64_t)t + off + (int64_t)llround(ppm * (double)(int64_t)(t - t0) / 1e6));
}

static void fit_min_rtt(void) {
    /* Symmetric pings: the offset is exact, uncertainty rtt/2. */
    hx_ping p[4] = {
        {1000000, 0, 1000400}, /* rtt 400 */
        {2000000, 0, 2000100}, /* rtt 100: the kept one */
        {3000000, 0, 3000900}, /* rtt 900 */
        {4000000, 0, 4000101}, /* rtt 101 */
    };
    for (int i = 0; i < 4; i++) p[i].dsp = (p[i].ap_send + p[i].ap_recv) / 2 + 7777;
    /* The rtt-900 sample, if kept, would give a different offset: skew it. */
    p[2].dsp += 300;
    hx_clock_fit f;
    CHECK(hx_clock_fit_samples(p, 4, &f) == 0, "fit failed");
    CHECK(f.offset_ns == 7777, "offset %" PRId64 " != 7777", f.offset_ns);
    CHECK(f.rtt_ns == 100, "rtt %" PRIu64 " != 100", f.rtt_ns);
    CHECK(f.uncertainty_ns == 50, "uncertainty %" PRIu64 " != 50", f.uncertainty_ns);
    CHECK(f.ap_mid == 2000050, "mid %" PRIu64, f.ap_mid);
    CHECK(f.samples == 4, "samples %d", f.samples);

    /* Jittered, asymmetric samples: the minimum-rtt one decides, and its
     * error stays within its uncertainty. */
    hx_ping j[32];
    uint64_t s = 12345;
    for (int i = 0; i < 32; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t out_leg = 200 + (s >> 33) % 5000, back_leg = 200 + (s >> 45) % 5000;
        uint64_t send = 10000000 + (uint64_t)i * 100000;
        j[i] = (hx_ping){send, send + out_leg - 123456789, send + out_leg + back_leg};
    }
    j[17] = (hx_ping){j[17].ap_send, j[17].ap_send + 60 - 123456789, j[17].ap_send + 150}; /* rtt 150, asymmetric */
    CHECK(hx_clock_fit_samples(j, 32, &f) == 0, "jittered fit failed");
    CHECK(f.rtt_ns == 150, "jittered rtt %" PRIu64 " != 150", f.rtt_ns);
    CHECK(f.offset_ns == -123456789 - 15, "jittered offset %" PRId64 " != %d", f.offset_ns, -123456789 - 15);
    CHECK(f.uncertainty_ns == 75, "jittered uncertainty %" PRIu64, f.uncertainty_ns);
    CHECK(llabs(f.offset_ns + 123456789) <= (long long)f.uncertainty_ns, "true offset outside the uncertainty");

    /* Unusable samples. */
    hx_ping bad = {500, 0, 400};
    CHECK(hx_clock_fit_samples(&bad, 1, &f) == -1, "a backwards sample fitted");
    CHECK(hx_clock_fit_samples(p, 0, &f) == -1, "zero samples fitted");
}

static void drift(void) {
    /* Drift: 20 ppm over 1 s of AP time moves the offset by 20 us. */
    uint64_t t0 = 1000000000ull;
    hx_ping a = {t0, 0, t0 + 100}, b = {t0 + 1000000000ull, 0, t0 + 1000000100ull};
    a.dsp = dsp_at(t0 + 50, 5000, 20.0, t0 + 50);
    b.dsp = dsp_at(t0 + 1000000050ull, 5000, 20.0, t0 + 50);
    hx_clock_fit fs, fe;
    hx_clock_fit_samples(&a, 1, &fs);
    hx_clock_fit_samples(&b, 1, &fe);
    CHECK(fs.offset_ns == 5000, "start offset %" PRId64, fs.offset_ns);
    CHECK(fe.offset_ns == 25000, "end offset %" PRId64, fe.offset_ns);
    CHECK(fabs(hx_clock_drift_ppm(&fs, &fe) - 20.0) < 1e-9, "drift %.12f != 20", hx_clock_drift_ppm(&fs, &fe));
    CHECK(hx_clock_drift_ppm(&fs, &fs) == 0.0, "drift of one fit with itself");
    /* Negative drift. */
    b.dsp = dsp_at(t0 + 1000000050ull, 5000, -3.5, t0 + 50);
    hx_clock_fit_samples(&b, 1, &fe);
    CHECK(fabs(hx_clock_drift_ppm(&fs, &fe) + 3.5) < 1e-9, "drift %.12f != -3.5", hx_clock_drift_ppm(&fs, &fe));
}

static void bound_and_map(void) {
    /* Refusal at the bound: |end - start| == bound holds, bound + 1 does not. */
    hx_clock_fit x0 = {.offset_ns = 1000}, x1 = {.offset_ns = 6000}, x2 = {.offset_ns = 6001},
                 x3 = {.offset_ns = -4001};
    CHECK(hx_clock_aligned(&x0, &x1, 5000) == 1, "exactly at the bound refused");
    CHECK(hx_clock_aligned(&x0, &x2, 5000) == 0, "one past the bound accepted");
    CHECK(hx_clock_aligned(&x0, &x3, 5000) == 0, "one past the bound (negative) accepted");
    CHECK(hx_clock_aligned(&x0, &x0, 0) == 1, "no movement refused at bound 0");

    /* Mapping: ap = dsp - offset, since the epoch; 0 stays 0; before the epoch clamps to 1. */
    hx_clock_fit m = {.offset_ns = 7777};
    CHECK(hx_clock_map(&m, 1000000, 0) == 0, "0 did not stay 0");
    CHECK(hx_clock_map(&m, 1000000, 1000000 + 7777 + 42) == 42, "map %" PRIu64 " != 42",
          hx_clock_map(&m, 1000000, 1000000 + 7777 + 42));
    CHECK(hx_clock_map(&m, 1000000, 1000000 + 7777) == 1, "the epoch itself must not read as 0");
    CHECK(hx_clock_map(&m, 1000000, 500) == 1, "before the epoch: %" PRIu64, hx_clock_map(&m, 1000000, 500));
    hx_clock_fit neg = {.offset_ns = -123456789};
    CHECK(hx_clock_map(&neg, 200000000, 200000000 - 123456789 + 1000) == 1000, "negative-offset map %" PRIu64,
          hx_clock_map(&neg, 200000000, 200000000 - 123456789 + 1000));
}

static void interval_and_method(void) {
    hx_clock_fit f;
    /* The offsets every sample allows: [max(dsp - recv), min(dsp - send)]. */
    hx_ping c[3] = {{1000, 1030, 1100}, {2000, 2010, 2040}, {3000, 3090, 3100}};
    CHECK(hx_clock_fit_samples(c, 3, &f) == 0, "consistent fit failed");
    CHECK(f.lo_ns == -10 && f.hi_ns == 10, "consistent interval [%" PRId64 ", %" PRId64 "] != [-10, 10]", f.lo_ns,
          f.hi_ns);
    /* One reading of one counter: offset 0 fits, the shared counter maps
     * with 0 +- 0 whatever the min-rtt sample's asymmetry said (+-20 here). */
    hx_clock_choose(&f, 1);
    CHECK(f.method == HX_CLOCK_SHARED_COUNTER, "offset 0 fits every sample: not the shared counter");
    CHECK(f.offset_ns == 0 && f.uncertainty_ns == 0, "shared counter maps with %" PRId64 " +- %" PRIu64, f.offset_ns,
          f.uncertainty_ns);
    CHECK(f.ping_offset_ns == -10 && f.ping_uncertainty_ns == 20, "ping estimate kept: %" PRId64 " +- %" PRIu64,
          f.ping_offset_ns, f.ping_uncertainty_ns);
    /* An AP clock that cannot be the DSP's counter: the ping, whatever fits. */
    CHECK(hx_clock_fit_samples(c, 3, &f) == 0, "refit failed");
    hx_clock_choose(&f, 0);
    CHECK(f.method == HX_CLOCK_PING && f.offset_ns == -10 && f.uncertainty_ns == 20, "no counter: %d %" PRId64,
          f.method, f.offset_ns);
    /* An offset of 15 ns excludes 0: the ping. */
    for (int i = 0; i < 3; i++) c[i].dsp += 15;
    CHECK(hx_clock_fit_samples(c, 3, &f) == 0, "offset fit failed");
    hx_clock_choose(&f, 1);
    CHECK(f.method == HX_CLOCK_PING && f.lo_ns == 5 && f.hi_ns == 25, "offset 15: method %d [%" PRId64 ", %" PRId64 "]",
          f.method, f.lo_ns, f.hi_ns);
    /* No constant offset fits (the DSP clock jumped between samples). */
    c[1].dsp += 1000;
    CHECK(hx_clock_fit_samples(c, 3, &f) == 0 && f.lo_ns > f.hi_ns, "a jump left [%" PRId64 ", %" PRId64 "]", f.lo_ns,
          f.hi_ns);
}

static void verdict(void) {
    /* The verdict.  Ping, no drift, the end's estimate 30 ns from the
     * start's with 20 ns uncertainty each: noise, not drift (old code:
     * refused at bound 5). */
    hx_clock_fit s0 = {.offset_ns = 1000, .uncertainty_ns = 20, .method = HX_CLOCK_PING},
                 e0 = {.offset_ns = 1030, .uncertainty_ns = 20, .method = HX_CLOCK_PING};
    hx_clock_verdict v;
    hx_clock_assess(&s0, &e0, 5, &v);
    CHECK(v.method == HX_CLOCK_PING && v.drift_ns == 30 && v.unexplained_ns == 0 && v.aligned,
          "noise refused: drift %" PRIu64 " unexplained %" PRIu64, v.drift_ns, v.unexplained_ns);
    CHECK(v.error_bound_ns == 50, "error bound %" PRIu64 " != 30 + 20", v.error_bound_ns);
    /* A drift of 100 ns: 60 beyond the fits, refused at 59, held at 60. */
    e0.offset_ns = 900;
    hx_clock_assess(&s0, &e0, 59, &v);
    CHECK(v.drift_ns == 100 && v.unexplained_ns == 60 && !v.aligned && v.error_bound_ns == 120,
          "drift: %" PRIu64 " %" PRIu64 " %d %" PRIu64, v.drift_ns, v.unexplained_ns, v.aligned, v.error_bound_ns);
    CHECK(hx_clock_aligned(&s0, &e0, 60) == 1, "exactly at the bound refused");
    /* A start fit with a larger uncertainty than the end's movement. */
    s0.uncertainty_ns = 500;
    e0.offset_ns = 1000;
    hx_clock_assess(&s0, &e0, 0, &v);
    CHECK(v.error_bound_ns == 500 && v.aligned, "error bound %" PRIu64 " != u_start 500", v.error_bound_ns);
    /* The shared counter at both ends: exact. */
    hx_clock_fit sc = {.offset_ns = 0, .method = HX_CLOCK_SHARED_COUNTER, .lo_ns = -300, .hi_ns = 200};
    hx_clock_fit ec = {.offset_ns = 0, .method = HX_CLOCK_SHARED_COUNTER, .lo_ns = -100, .hi_ns = 50};
    hx_clock_assess(&sc, &ec, 0, &v);
    CHECK(v.method == HX_CLOCK_SHARED_COUNTER && v.error_bound_ns == 0 && v.aligned, "shared: %d %" PRIu64, v.method,
          v.error_bound_ns);
    /* Shared at the start, not at the end: the run is a ping run; the
     * start's 0 is within max(|lo|, |hi|) = 300 of the truth. */
    hx_clock_fit ep = {.offset_ns = 700, .uncertainty_ns = 40, .method = HX_CLOCK_PING, .lo_ns = 660, .hi_ns = 740};
    hx_clock_assess(&sc, &ep, 5000, &v);
    CHECK(v.method == HX_CLOCK_PING && v.u_start_ns == 300 && v.u_end_ns == 40, "downgrade: %d %" PRIu64 " %" PRIu64,
          v.method, v.u_start_ns, v.u_end_ns);
    CHECK(v.unexplained_ns == 360 && v.error_bound_ns == 740 && v.aligned, "downgrade: %" PRIu64 " %" PRIu64,
          v.unexplained_ns, v.error_bound_ns);
    hx_clock_assess(&sc, &ep, 359, &v);
    CHECK(!v.aligned, "a resolved drift of 360 ns held at bound 359");
}

static void ticks(void) {
    /* Counter ticks scale as the DSP scales its QTimer: one second of
     * 19.2 MHz ticks is 1e9 ns, one tick 52 ns (floored), large counts exact. */
    CHECK(hx_clock_ticks_to_ns(19200000ull, HX_CLOCK_QTIMER_HZ) == 1000000000ull, "1 s of ticks");
    CHECK(hx_clock_ticks_to_ns(1, HX_CLOCK_QTIMER_HZ) == 52, "one tick: %" PRIu64,
          hx_clock_ticks_to_ns(1, HX_CLOCK_QTIMER_HZ));
    CHECK(hx_clock_ticks_to_ns(19200000ull * 86400ull * 365ull + 12, HX_CLOCK_QTIMER_HZ) ==
              86400ull * 365ull * 1000000000ull + 625,
          "a year of ticks");
}

int main(void) {
    fit_min_rtt();
    drift();
    bound_and_map();
    interval_and_method();
    verdict();
    ticks();
    if (failures) return 1;
    printf("clock_align: all checks passed\n");
    return 0;
}
