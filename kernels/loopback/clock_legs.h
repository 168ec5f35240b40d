/* STAND-IN test hook: the two legs of a FastRPC call, made as long as a
 * test asks, so that the AP's clock alignment meets what a phone gives it.
 *
 * On a phone a remote_handle64_invoke crosses to the DSP and back through
 * the kernel driver; the two crossings need not take equally long, and each
 * varies from call to call.  The AP's ping-pong alignment (ap/clock_align.h)
 * assumes nothing about them: its offset estimate is off by half their
 * difference, which its uncertainty (half the round trip) must cover.  In
 * this process both crossings are a function call, so a test could never
 * see that error; this hook puts it back:
 *
 *   HX_LOOPBACK_CLOCK_LEGS=OUT_NS,BACK_NS[,JITTER_NS]
 *
 * busy-waits OUT_NS (+ up to JITTER_NS) before the skel runs and BACK_NS
 * (+ up to JITTER_NS) after it returns, on every invoke.  The jitter is a
 * fixed pseudo-random sequence (the same run gives the same legs).  The
 * waits are busy so that the legs are what was asked even on a loaded
 * machine (a sleep overshoots by the scheduler's slack).  The DSP clock's
 * offset and drift are the skel's own test hook (--test-dsp-clock-*); this
 * one only shapes the legs.  Read once, at the first invoke. */
#ifndef HX_LOOPBACK_CLOCK_LEGS_H
#define HX_LOOPBACK_CLOCK_LEGS_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct {
    int loaded;
    uint64_t out_ns, back_ns, jitter_ns, seed;
} hx_lb_legs;

static uint64_t hx_lb_legs_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Called under the stand-in's global lock (the first time only it parses). */
static void hx_lb_legs_load(void) {
    if (hx_lb_legs.loaded) return;
    hx_lb_legs.loaded = 1;
    hx_lb_legs.seed = 0x9E3779B97F4A7C15ull;
    const char *e = getenv("HX_LOOPBACK_CLOCK_LEGS");
    if (!e || !*e) return;
    unsigned long long o = 0, b = 0, j = 0;
    int n = sscanf(e, "%llu,%llu,%llu", &o, &b, &j);
    if (n < 2 || o > 1000000000ull || b > 1000000000ull || j > 1000000000ull) {
        fprintf(stderr,
                "cdsprpc loopback (stand-in): HX_LOOPBACK_CLOCK_LEGS=%s: expected OUT_NS,BACK_NS[,JITTER_NS] "
                "(each at most 1e9)\n",
                e);
        exit(2);
    }
    hx_lb_legs.out_ns = o, hx_lb_legs.back_ns = b, hx_lb_legs.jitter_ns = j;
}

/* The next jitter, under the stand-in's global lock. */
static uint64_t hx_lb_legs_jitter(void) {
    if (!hx_lb_legs.jitter_ns) return 0;
    hx_lb_legs.seed = hx_lb_legs.seed * 6364136223846793005ull + 1442695040888963407ull;
    return (hx_lb_legs.seed >> 33) % hx_lb_legs.jitter_ns;
}

static void hx_lb_legs_wait(uint64_t ns) {
    if (!ns) return;
    uint64_t end = hx_lb_legs_now() + ns;
    while (hx_lb_legs_now() < end) {}
}
#endif
