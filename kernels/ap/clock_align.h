/* Aligning the DSP's clock with the AP's: pure arithmetic over ping-pong
 * samples (no I/O; exec_ap.c takes the samples).
 *
 * A ping is {ap_send, dsp, ap_recv}: the AP's clock before the call, the
 * DSP's clock while it ran, the AP's clock after it returned.  If the call's
 * two legs took equally long, dsp was read at the AP's (ap_send+ap_recv)/2;
 * they need not, so the offset is known only to within rtt/2.  The sample
 * with the smallest round trip bounds it most tightly: that one is kept.
 *
 * Records are written during the run, so every DSP time is mapped with the
 * START fit.  A second fit at the end measures how far the offset moved
 * (drift); when it moved by more than the bound, the mapped times of the
 * run may be off by as much, and the alignment is refused. */
#ifndef HX_AP_CLOCK_ALIGN_H
#define HX_AP_CLOCK_ALIGN_H
#include <stdint.h>

#define HX_CLOCK_BOUND_DEFAULT_NS 5000

typedef struct hx_ping {
    uint64_t ap_send, dsp, ap_recv;
} hx_ping;

typedef struct hx_clock_fit {
    int64_t offset_ns;       /* dsp - ap at ap_mid */
    uint64_t rtt_ns;         /* of the kept sample */
    uint64_t uncertainty_ns; /* rtt / 2, rounded up (a bound) */
    uint64_t ap_mid;         /* (ap_send + ap_recv) / 2 of the kept sample */
    int samples;             /* how many were offered (usable ones: ap_recv >= ap_send) */
} hx_clock_fit;

/* Fits n samples; returns 0, or -1 when none is usable (n == 0 or every
 * ap_recv < ap_send). */
int hx_clock_fit_samples(const hx_ping *p, int n, hx_clock_fit *out);

/* Drift between two fits, ppm of AP time (0 when the mids coincide). */
double hx_clock_drift_ppm(const hx_clock_fit *start, const hx_clock_fit *end);

/* 1 when |offset_end - offset_start| <= bound_ns (the alignment holds). */
int hx_clock_aligned(const hx_clock_fit *start, const hx_clock_fit *end, uint64_t bound_ns);

/* A DSP time mapped onto the AP's clock with the start fit, as ns since
 * ap_epoch (an AP hx_now_ns value).  0 stays 0 ("never stamped"); a time
 * that maps before the epoch clamps to 1, so it never reads as 0. */
uint64_t hx_clock_map(const hx_clock_fit *fit, uint64_t ap_epoch, uint64_t dsp_time);
#endif
