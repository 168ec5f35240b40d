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

int main(void) {
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

    if (failures) return 1;
    printf("clock_align: all checks passed\n");
    return 0;
}
