#include "event.h"
#include "platform.h"

void hx_event_reset(hx_event *e) {
    __atomic_store_n(&e->state, 0u, __ATOMIC_RELAXED);
    __atomic_store_n(&e->waiters, 0u, __ATOMIC_RELAXED);
}

int hx_event_is_set(const hx_event *e) { return __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != 0; }

void hx_event_signal(hx_event *e) {
    __atomic_store_n(&e->state, 1u, __ATOMIC_RELEASE);
    /* seq_cst pairs with the waiter's increment-then-recheck below, so a
     * sleeper can never miss this signal. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&e->waiters, __ATOMIC_RELAXED)) hx_word_wake_all(&e->state);
}

/* Spin with an occasional yield: on an oversubscribed machine a pure spin
 * would steal the core from the engine it is waiting for. */
static int spin_until(int (*done)(const void *), const void *arg, uint64_t budget_ns, int forever) {
    uint64_t start = hx_now_ns();
    for (unsigned i = 1;; i++) {
        if (done(arg)) return 1;
        hx_cpu_relax();
        if ((i & 63) == 0) {
            if (!forever && hx_now_ns() - start >= budget_ns) return 0;
            hx_yield();
        }
    }
}

static int event_done(const void *e) { return hx_event_is_set((const hx_event *)e); }

void hx_event_wait(hx_event *e, const hx_wait_policy *p) {
    if (spin_until(event_done, e, p->spin_ns, p->strategy == HX_WAIT_SPIN)) return;
    while (!hx_event_is_set(e)) {
        __atomic_fetch_add(&e->waiters, 1u, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(&e->state, __ATOMIC_SEQ_CST)) hx_word_wait(&e->state, 0u);
        __atomic_fetch_sub(&e->waiters, 1u, __ATOMIC_SEQ_CST);
    }
}

uint32_t hx_counter_load(const hx_counter *c) { return __atomic_load_n(&c->value, __ATOMIC_ACQUIRE); }

void hx_counter_bump(hx_counter *c) {
    __atomic_fetch_add(&c->value, 1u, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&c->waiters, __ATOMIC_RELAXED)) hx_word_wake_all(&c->value);
}

struct change_arg {
    const hx_counter *c;
    uint32_t seen;
};
static int counter_moved(const void *a) {
    const struct change_arg *x = (const struct change_arg *)a;
    return hx_counter_load(x->c) != x->seen;
}

uint32_t hx_counter_wait_change(hx_counter *c, uint32_t seen, const hx_wait_policy *p) {
    struct change_arg a = {c, seen};
    if (!spin_until(counter_moved, &a, p->spin_ns, p->strategy == HX_WAIT_SPIN)) {
        while (hx_counter_load(c) == seen) {
            __atomic_fetch_add(&c->waiters, 1u, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&c->value, __ATOMIC_SEQ_CST) == seen) hx_word_wait(&c->value, seen);
            __atomic_fetch_sub(&c->waiters, 1u, __ATOMIC_SEQ_CST);
        }
    }
    return hx_counter_load(c);
}
