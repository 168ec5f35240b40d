#include "clock_align.h"
#include <stdio.h>
#include <time.h>
#include "json.h"

int hx_clock_fit_samples(const hx_ping *p, int n, hx_clock_fit *out) {
    int best = -1;
    uint64_t best_rtt = UINT64_MAX;
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    for (int i = 0; i < n; i++) {
        if (p[i].ap_recv < p[i].ap_send) continue; /* a clock that went back: not a round trip */
        uint64_t rtt = p[i].ap_recv - p[i].ap_send;
        /* strict: the first of equal round trips is kept (deterministic) */
        if (rtt < best_rtt) best_rtt = rtt, best = i;
        /* the DSP read its clock between the AP's two readings: its offset
         * lies in [dsp - ap_recv, dsp - ap_send] (two's complement) */
        int64_t l = (int64_t)(p[i].dsp - p[i].ap_recv), h = (int64_t)(p[i].dsp - p[i].ap_send);
        if (l > lo) lo = l;
        if (h < hi) hi = h;
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
    out->lo_ns = lo, out->hi_ns = hi;
    out->method = HX_CLOCK_PING;
    out->ping_offset_ns = out->offset_ns;
    out->ping_uncertainty_ns = out->uncertainty_ns;
    return 0;
}

static int zero_fits(const hx_clock_fit *f) { return f->lo_ns <= 0 && 0 <= f->hi_ns; }

void hx_clock_choose(hx_clock_fit *f, int ap_counter) {
    f->ping_offset_ns = f->offset_ns;
    f->ping_uncertainty_ns = f->uncertainty_ns;
    if (ap_counter && zero_fits(f)) {
        f->method = HX_CLOCK_SHARED_COUNTER;
        f->offset_ns = 0;
        f->uncertainty_ns = 0;
    } else {
        f->method = HX_CLOCK_PING;
    }
}

static uint64_t mag(int64_t d) { return d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d; }

/* A fit that took offset 0 for the shared counter, in a run that turned out
 * not to share one: 0 is still inside [lo, hi], so it is within the larger
 * of |lo| and |hi| of the true offset (whatever it is, it is in [lo, hi]). */
static uint64_t downgraded_u(const hx_clock_fit *f) {
    uint64_t a = mag(f->lo_ns), b = mag(f->hi_ns);
    return a > b ? a : b;
}

void hx_clock_assess(const hx_clock_fit *s, const hx_clock_fit *e, uint64_t bound_ns, hx_clock_verdict *v) {
    int shared = s->method == HX_CLOCK_SHARED_COUNTER && e->method == HX_CLOCK_SHARED_COUNTER;
    v->method = shared ? HX_CLOCK_SHARED_COUNTER : HX_CLOCK_PING;
    v->offset_start_ns = s->offset_ns;
    v->offset_end_ns = e->offset_ns;
    v->u_start_ns = s->method == HX_CLOCK_SHARED_COUNTER && !shared ? downgraded_u(s) : s->uncertainty_ns;
    v->u_end_ns = e->method == HX_CLOCK_SHARED_COUNTER && !shared ? downgraded_u(e) : e->uncertainty_ns;
    v->drift_ns = mag(e->offset_ns - s->offset_ns);
    uint64_t noise = v->u_start_ns + v->u_end_ns;
    v->unexplained_ns = v->drift_ns > noise ? v->drift_ns - noise : 0;
    uint64_t moved = v->drift_ns + v->u_end_ns;
    v->error_bound_ns = moved > v->u_start_ns ? moved : v->u_start_ns;
    v->drift_ppm = hx_clock_drift_ppm(s, e);
    v->aligned = v->unexplained_ns <= bound_ns;
}

double hx_clock_drift_ppm(const hx_clock_fit *start, const hx_clock_fit *end) {
    int64_t dt = (int64_t)(end->ap_mid - start->ap_mid);
    if (dt == 0) return 0.0;
    return (double)(end->offset_ns - start->offset_ns) * 1e6 / (double)dt;
}

int hx_clock_aligned(const hx_clock_fit *start, const hx_clock_fit *end, uint64_t bound_ns) {
    hx_clock_verdict v;
    hx_clock_assess(start, end, bound_ns, &v);
    return v.aligned;
}

uint64_t hx_clock_map(const hx_clock_fit *fit, uint64_t ap_epoch, uint64_t dsp_time) {
    if (dsp_time == 0) return 0;
    /* ap = dsp - offset; unsigned wrap-around does the signed arithmetic */
    uint64_t ap = dsp_time - (uint64_t)fit->offset_ns;
    if ((int64_t)(ap - ap_epoch) <= 0) return 1;
    return ap - ap_epoch;
}

uint64_t hx_clock_ticks_to_ns(uint64_t t, uint64_t hz) {
    /* platform_qurt.c's hx_now_ns, split to keep the product in 64 bits */
    return (t / hz) * 1000000000ull + (t % hz) * 1000000000ull / hz;
}

/* --- the AP's clock ------------------------------------------------------ */

#if defined(__aarch64__)
/* The generic timer's frequency as firmware programmed it (CNTFRQ_EL0),
 * read once.  0 means no usable counter (qemu's user mode reads 0 and
 * counts at another rate): then CLOCK_MONOTONIC_RAW, which the NTP slewing
 * of CLOCK_MONOTONIC does not touch, and the ping-pong. */
static uint64_t ap_hz(void) {
    static uint64_t hz = UINT64_MAX;
    if (hz == UINT64_MAX) {
        uint64_t f;
        __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
        hz = f;
    }
    return hz;
}

uint64_t hx_clock_ap_now(void) {
    uint64_t hz = ap_hz();
    if (!hz) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    uint64_t t;
    /* the isb keeps the count from being read early (speculatively),
     * before the instructions that precede it */
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(t)::"memory");
    return hx_clock_ticks_to_ns(t, hz);
}

const char *hx_clock_ap_source(void) {
    static char text[128];
    if (!text[0]) {
        if (ap_hz())
            snprintf(text, sizeof text, "cntvct_el0 (ARM generic timer, %llu Hz)", (unsigned long long)ap_hz());
        else snprintf(text, sizeof text, "CLOCK_MONOTONIC_RAW (cntfrq_el0 reads 0: no usable generic timer)");
    }
    return text;
}

static uint64_t getres_ns(clockid_t id) {
    struct timespec ts;
    if (clock_getres(id, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One count, rounded up (19.2 MHz: 53 ns). */
uint64_t hx_clock_ap_resolution_ns(void) {
    uint64_t hz = ap_hz();
    return hz ? (1000000000ull + hz - 1) / hz : getres_ns(CLOCK_MONOTONIC_RAW);
}

/* Another frequency cannot be the QTimer the DSP scales at 19.2 MHz. */
int hx_clock_ap_counter(void) { return ap_hz() == HX_CLOCK_QTIMER_HZ; }
#else
uint64_t hx_clock_ap_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *hx_clock_ap_source(void) {
    return "CLOCK_MONOTONIC (not aarch64: no generic timer; the loopback stand-in's DSP reads the same clock)";
}

uint64_t hx_clock_ap_resolution_ns(void) {
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int hx_clock_ap_counter(void) { return 1; }
#endif

int hx_clock_measure(hx_clock_fit *fit, int n, hx_clock_ping_fn ping, void *ctx, char *err, size_t errlen) {
    hx_ping p[HX_CLOCK_MAX_PINGS];
    if (n < 1 || n > HX_CLOCK_MAX_PINGS) {
        snprintf(err, errlen, "clock alignment: %d pings asked, 1 to %d possible", n, HX_CLOCK_MAX_PINGS);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        p[i].ap_send = hx_clock_ap_now();
        if (ping(ctx, &p[i].dsp, err, errlen)) return -1;
        p[i].ap_recv = hx_clock_ap_now();
    }
    if (hx_clock_fit_samples(p, n, fit)) {
        snprintf(err, errlen, "clock alignment: no usable ping sample of %d", n);
        return -1;
    }
    hx_clock_choose(fit, hx_clock_ap_counter());
    return 0;
}

static const char *method_name(int m) { return m == HX_CLOCK_SHARED_COUNTER ? "shared-counter" : "ping"; }

void hx_clock_refusal(const hx_clock_verdict *v, uint64_t bound_ns, char *err, size_t errlen) {
    snprintf(err, errlen,
             "clock_unaligned: the DSP clock's offset moved from %lld ns at the start to %lld ns at the end "
             "(%.3f ppm), %llu ns more than the two fits' uncertainty (%llu + %llu ns), beyond the bound of %llu ns "
             "(--clock-bound-ns): every mapped device time may be off by up to %llu ns",
             (long long)v->offset_start_ns, (long long)v->offset_end_ns, v->drift_ppm,
             (unsigned long long)v->unexplained_ns, (unsigned long long)v->u_start_ns, (unsigned long long)v->u_end_ns,
             (unsigned long long)bound_ns, (unsigned long long)v->error_bound_ns);
}

void hx_clock_write_start(hx_json *j, const hx_clock_fit *s, uint64_t bound_ns) {
    hx_json_str(j, "method", method_name(s->method));
    hx_json_str(j, "ap_clock", hx_clock_ap_source());
    hx_json_i64(j, "offset_ns", s->offset_ns);
    hx_json_u64(j, "rtt_ns", s->rtt_ns);
    hx_json_u64(j, "uncertainty_ns", s->uncertainty_ns);
    hx_json_i64(j, "samples", s->samples);
    hx_json_u64(j, "bound_ns", bound_ns);
    /* what the pings saw, whichever method maps */
    hx_json_obj(j, "ping");
    hx_json_i64(j, "offset_ns", s->ping_offset_ns);
    hx_json_u64(j, "uncertainty_ns", s->ping_uncertainty_ns);
    hx_json_i64(j, "consistent_lo_ns", s->lo_ns);
    hx_json_i64(j, "consistent_hi_ns", s->hi_ns);
    hx_json_close(j, '}');
}

void hx_clock_write_end(hx_json *j, const hx_clock_fit *s, const hx_clock_fit *e, uint64_t bound_ns) {
    hx_clock_verdict v;
    hx_clock_assess(s, e, bound_ns, &v);
    hx_json_str(j, "method", method_name(v.method));
    hx_json_i64(j, "offset_start_ns", v.offset_start_ns);
    hx_json_i64(j, "offset_end_ns", v.offset_end_ns);
    hx_json_f64(j, "drift_ppm", v.drift_ppm);
    hx_json_u64(j, "uncertainty_start_ns", v.u_start_ns);
    hx_json_u64(j, "uncertainty_end_ns", v.u_end_ns);
    hx_json_u64(j, "unexplained_drift_ns", v.unexplained_ns);
    hx_json_u64(j, "error_bound_ns", v.error_bound_ns);
    hx_json_u64(j, "bound_ns", bound_ns);
    hx_json_bool(j, "aligned", v.aligned);
    hx_json_obj(j, "ping_end");
    hx_json_i64(j, "offset_ns", e->ping_offset_ns);
    hx_json_u64(j, "uncertainty_ns", e->ping_uncertainty_ns);
    hx_json_i64(j, "consistent_lo_ns", e->lo_ns);
    hx_json_i64(j, "consistent_hi_ns", e->hi_ns);
    hx_json_close(j, '}');
}
