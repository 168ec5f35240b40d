#include "clock_align.h"

int hx_clock_fit_samples(const hx_ping *p, int n, hx_clock_fit *out) {
    int best = -1;
    uint64_t best_rtt = UINT64_MAX;
    for (int i = 0; i < n; i++) {
        if (p[i].ap_recv < p[i].ap_send) continue; /* a clock that went back: not a round trip */
        uint64_t rtt = p[i].ap_recv - p[i].ap_send;
        /* strict: the first of equal round trips is kept (deterministic) */
        if (rtt < best_rtt) best_rtt = rtt, best = i;
    }
    if (best < 0) return -1;
    /* The mid without overflow: send + rtt/2 (the half ns of an odd rtt is
     * dropped, far below the uncertainty). */
    uint64_t mid = p[best].ap_send + best_rtt / 2;
    out->offset_ns = (int64_t)(p[best].dsp - mid);
    out->rtt_ns = best_rtt;
    out->uncertainty_ns = best_rtt / 2 + (best_rtt & 1);
    out->ap_mid = mid;
    out->samples = n;
    return 0;
}

double hx_clock_drift_ppm(const hx_clock_fit *start, const hx_clock_fit *end) {
    int64_t dt = (int64_t)(end->ap_mid - start->ap_mid);
    if (dt == 0) return 0.0;
    return (double)(end->offset_ns - start->offset_ns) * 1e6 / (double)dt;
}

int hx_clock_aligned(const hx_clock_fit *start, const hx_clock_fit *end, uint64_t bound_ns) {
    int64_t d = end->offset_ns - start->offset_ns;
    uint64_t mag = d < 0 ? (uint64_t)(-d) : (uint64_t)d;
    return mag <= bound_ns;
}

uint64_t hx_clock_map(const hx_clock_fit *fit, uint64_t ap_epoch, uint64_t dsp_time) {
    if (dsp_time == 0) return 0;
    /* ap = dsp - offset; unsigned wrap-around does the signed arithmetic */
    uint64_t ap = dsp_time - (uint64_t)fit->offset_ns;
    if ((int64_t)(ap - ap_epoch) <= 0) return 1;
    return ap - ap_epoch;
}
