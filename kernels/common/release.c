/* Preemption requests (platform.h, "Preemption"): the one part of it that is
 * the same on every platform.  The request is recorded callback-safely (an
 * atomic store of its time, first request wins) and polled by the runner at
 * trial boundaries; what "releasing" means is the platform's
 * (hx_release_resources: VTCM and HMX on the cDSP, nothing on POSIX). */
#include <string.h>
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

static char failure_msg[512];
static uint32_t failure_state; /* 0 none, 1 being written, 2 set */

void hx_failure_set(const char *msg) {
    uint32_t none = 0;
    if (!__atomic_compare_exchange_n(&failure_state, &none, 1u, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
    size_t n = strlen(msg);
    if (n >= sizeof failure_msg) n = sizeof failure_msg - 1;
    memcpy(failure_msg, msg, n);
    failure_msg[n] = 0;
    __atomic_store_n(&failure_state, 2u, __ATOMIC_RELEASE);
}

const char *hx_failure(void) { return __atomic_load_n(&failure_state, __ATOMIC_ACQUIRE) == 2 ? failure_msg : NULL; }
