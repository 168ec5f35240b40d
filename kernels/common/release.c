/* Preemption requests (platform.h, "Preemption"): the one part of it that is
 * the same on every platform.  The request is recorded callback-safely (an
 * atomic store of its time, first request wins) and polled by the runner at
 * trial boundaries; what "releasing" means is the platform's
 * (hx_release_resources: VTCM and HMX on the cDSP, nothing on POSIX). */
#include "platform.h"

static uint64_t release_asked_at; /* hx_now_ns of the first request, 0: none */

void hx_release_ask(void) {
    uint64_t now = hx_now_ns(), none = 0;
    __atomic_compare_exchange_n(&release_asked_at, &none, now ? now : 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

int hx_release_asked(uint64_t *at_ns) {
    uint64_t t = __atomic_load_n(&release_asked_at, __ATOMIC_ACQUIRE);
    if (at_ns) *at_ns = t;
    return t != 0;
}

static void (*helper_fn)(void *);
static void *helper_ctx;

void hx_release_helper_set(void (*fn)(void *ctx), void *ctx) { helper_fn = fn, helper_ctx = ctx; }

void hx_release_helper_run(void) {
    if (helper_fn) helper_fn(helper_ctx);
}
