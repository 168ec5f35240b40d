/* Aligning the DSP's clock with the AP's.
 *
 * The DSP stamps its records with the QTimer (platform_qurt.c: hx_now_ns is
 * HAP_perf_get_qtimer_count scaled to ns at 19.2 MHz).  On a Snapdragon the
 * AP's ARM generic timer (cntvct_el0) reads the same global counter:
 * Qualcomm's own Android sensors HAL reads "the current QTimer count value"
 * on the AP with `mrs cntvct_el0` and maps the sensor DSP's QTimer stamps
 * through it (qshTimeUtil / sensors_timeutil, qtimerGetTicks).  So on an
 * aarch64 AP the driver's clock IS that counter, scaled with the DSP's own
 * formula (hx_clock_ap_now), and two methods remain:
 *
 *   shared-counter  every ping's DSP reading lies between the AP's readings
 *                   before and after it (offset 0 is consistent with every
 *                   sample), at the start and at the end: the two sides read
 *                   one counter, device times need no offset and cannot
 *                   drift (offset 0, uncertainty 0).  A nonzero offset
 *                   smaller than the round trip would pass the check too:
 *                   what the pings verified is recorded ([lo, hi]).
 *   ping            otherwise (another counter, a virtual offset, another
 *                   frequency, an AP that is not aarch64): the ping-pong.
 *
 * A ping is {ap_send, dsp, ap_recv}: the AP's clock before the call, the
 * DSP's clock while it ran, the AP's clock after it returned.  If the call's
 * two legs took equally long, dsp was read at the AP's (ap_send+ap_recv)/2;
 * they need not, so the offset is known only to within rtt/2.  The sample
 * with the smallest round trip bounds it most tightly: that one is kept.
 *
 * Records are written during the run, so every DSP time is mapped with the
 * START fit.  A second fit at the end measures how far the offset moved.
 * Every mapped time is then within
 *
 *     error_bound = max(u_start, |offset_end - offset_start| + u_end)
 *
 * of the truth (the true offset moves from within u_start of the start's
 * estimate to within u_end of the end's): half the minimum round trip plus
 * the drift over the run.  That bound is recorded.  The run is refused
 * (clock_unaligned) only for a drift the fits resolve: when the offset moved
 * by more than both fits' uncertainties plus --clock-bound-ns, so that noise
 * in a ping's legs is never taken for drift. */
#ifndef HX_AP_CLOCK_ALIGN_H
#define HX_AP_CLOCK_ALIGN_H
#include <stddef.h>
#include <stdint.h>

/* The drift the fits must resolve before a run is refused, ns. */
#define HX_CLOCK_BOUND_DEFAULT_NS 5000
/* The counter the DSP scales its QTimer with (platform_qurt.c). */
#define HX_CLOCK_QTIMER_HZ        19200000ull
#define HX_CLOCK_MAX_PINGS        64

enum { HX_CLOCK_PING = 0, HX_CLOCK_SHARED_COUNTER = 1 };

typedef struct hx_ping {
    uint64_t ap_send, dsp, ap_recv;
} hx_ping;

typedef struct hx_clock_fit {
    int64_t offset_ns;       /* dsp - ap at ap_mid: what the mapping uses */
    uint64_t rtt_ns;         /* of the kept sample */
    uint64_t uncertainty_ns; /* rtt / 2, rounded up (a bound); 0 for the shared counter */
    uint64_t ap_mid;         /* (ap_send + ap_recv) / 2 of the kept sample */
    int samples;             /* how many were offered (usable ones: ap_recv >= ap_send) */
    /* Every constant offset consistent with all usable samples:
     * [max(dsp - ap_recv), min(dsp - ap_send)]; empty (lo > hi) when no
     * constant offset fits them all. */
    int64_t lo_ns, hi_ns;
    int method;                   /* HX_CLOCK_*; hx_clock_choose sets it */
    int64_t ping_offset_ns;       /* the ping-pong's own estimate, kept when the counter is used */
    uint64_t ping_uncertainty_ns; /* and its rtt / 2 */
} hx_clock_fit;

/* Fits n samples (the ping method); returns 0, or -1 when none is usable
 * (n == 0 or every ap_recv < ap_send). */
int hx_clock_fit_samples(const hx_ping *p, int n, hx_clock_fit *out);

/* The method for a fit: the shared counter when the AP's clock is a counter
 * the DSP may share (ap_counter) and offset 0 lies in [lo, hi]; then the fit
 * maps with offset 0 and uncertainty 0 (the ping estimate is kept aside). */
void hx_clock_choose(hx_clock_fit *f, int ap_counter);

/* The run's alignment from its two fits. */
typedef struct hx_clock_verdict {
    int method; /* shared only when both fits found it */
    int64_t offset_start_ns, offset_end_ns;
    uint64_t u_start_ns, u_end_ns; /* as the run's method sees them */
    uint64_t drift_ns;             /* |offset_end - offset_start| */
    uint64_t unexplained_ns;       /* the drift beyond u_start + u_end: what the fits resolve */
    uint64_t error_bound_ns;       /* max(u_start, drift + u_end): every mapped time is within this */
    double drift_ppm;
    int aligned; /* unexplained <= the bound */
} hx_clock_verdict;
void hx_clock_assess(const hx_clock_fit *start, const hx_clock_fit *end, uint64_t bound_ns, hx_clock_verdict *v);

/* Drift between two fits, ppm of AP time (0 when the mids coincide). */
double hx_clock_drift_ppm(const hx_clock_fit *start, const hx_clock_fit *end);

/* 1 when the alignment holds (hx_clock_assess's `aligned`). */
int hx_clock_aligned(const hx_clock_fit *start, const hx_clock_fit *end, uint64_t bound_ns);

/* A DSP time mapped onto the AP's clock with the start fit, as ns since
 * ap_epoch (an hx_clock_ap_now value).  0 stays 0 ("never stamped"); a time
 * that maps before the epoch clamps to 1, so it never reads as 0. */
uint64_t hx_clock_map(const hx_clock_fit *fit, uint64_t ap_epoch, uint64_t dsp_time);

/* Counter ticks to ns exactly as the DSP scales its QTimer (platform_qurt.c
 * hx_now_ns), so that one counter gives one number on both sides. */
uint64_t hx_clock_ticks_to_ns(uint64_t ticks, uint64_t hz);

/* --- the AP's clock (I/O) ------------------------------------------------ */

/* The AP's clock for every time the AP driver records: on aarch64 the
 * generic timer's virtual count (cntvct_el0) scaled like the QTimer; else
 * CLOCK_MONOTONIC (the loopback stand-in's "DSP" reads the same clock, so
 * it, too, is one clock shared by both sides). */
uint64_t hx_clock_ap_now(void);
/* What hx_clock_ap_now reads, in words (for the metadata), and its tick. */
const char *hx_clock_ap_source(void);
uint64_t hx_clock_ap_resolution_ns(void);
/* 1 when hx_clock_ap_now may be the DSP's counter (then the pings decide). */
int hx_clock_ap_counter(void);

/* One ping: the DSP's clock while the call ran, in *dsp. */
typedef int (*hx_clock_ping_fn)(void *ctx, uint64_t *dsp, char *err, size_t errlen);
/* n (<= HX_CLOCK_MAX_PINGS) pings, the fit and its method. */
int hx_clock_measure(hx_clock_fit *fit, int n, hx_clock_ping_fn ping, void *ctx, char *err, size_t errlen);

/* The refusal's text (clock_unaligned). */
void hx_clock_refusal(const hx_clock_verdict *v, uint64_t bound_ns, char *err, size_t errlen);

/* Metadata: the start fit (meta.transport.clock_alignment's keys) and the
 * end's verdict (the end record's clock_alignment_end keys). */
struct hx_json;
void hx_clock_write_start(struct hx_json *j, const hx_clock_fit *start, uint64_t bound_ns);
void hx_clock_write_end(struct hx_json *j, const hx_clock_fit *start, const hx_clock_fit *end, uint64_t bound_ns);
#endif
