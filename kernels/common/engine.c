#include <stdio.h>
#include <string.h>
#include "engine.h"

static hx_job *pop(hx_engine *e) {
    uint32_t head = e->head; /* only the engine thread writes head */
    if (head == __atomic_load_n(&e->tail, __ATOMIC_ACQUIRE)) return NULL;
    hx_job *job = e->ring[head % HX_QUEUE_CAP];
    __atomic_store_n(&e->head, head + 1, __ATOMIC_RELEASE);
    return job;
}

static void engine_main(void *arg) {
    hx_engine *e = (hx_engine *)arg;
    for (;;) {
        /* Read the doorbell before looking at the queue: a push that lands
         * after the look moves the doorbell, so the wait below cannot sleep
         * through it. */
        uint32_t seen = hx_counter_load(&e->doorbell);
        hx_job *job = pop(e);
        if (job) {
            job->run(job, e);
            continue;
        }
        if (__atomic_load_n(&e->stop, __ATOMIC_ACQUIRE)) return;
        hx_counter_wait_change(&e->doorbell, seen, e->wait);
    }
}

int hx_engine_start(hx_engine *e, const char *name, int core, const hx_wait_policy *wait, char *err, size_t errlen) {
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->core = core;
    e->wait = wait;
    if (wait->strategy == HX_WAIT_SPIN && hx_max_ready_threads() > 0) {
        /* platform.h: where ready threads are not time-sliced, a spinning
         * waiter never gives its hardware thread up, and with as many ready
         * threads as hardware threads an engine may never run. */
        snprintf(err, errlen,
                 "--wait spin is refused on this platform (%s): its threads are not time-sliced, so a spinning "
                 "waiter can keep engine %s from ever running; use --wait spin-block",
                 hx_platform_name(), name);
        return -1;
    }
    e->thread = hx_thread_start(engine_main, e, name, core, err, errlen);
    return e->thread ? 0 : -1;
}

int hx_engine_push(hx_engine *e, hx_job *job) {
    while (__atomic_exchange_n(&e->lock, 1u, __ATOMIC_ACQUIRE)) hx_cpu_relax();
    uint32_t tail = e->tail;
    int rc = -1;
    if (tail - __atomic_load_n(&e->head, __ATOMIC_ACQUIRE) < HX_QUEUE_CAP) {
        e->ring[tail % HX_QUEUE_CAP] = job;
        __atomic_store_n(&e->tail, tail + 1, __ATOMIC_RELEASE);
        rc = 0;
    }
    __atomic_store_n(&e->lock, 0u, __ATOMIC_RELEASE);
    if (rc == 0) hx_counter_bump(&e->doorbell);
    return rc;
}

void hx_engine_stop(hx_engine *e) {
    if (!e->thread) return;
    __atomic_store_n(&e->stop, 1u, __ATOMIC_RELEASE);
    hx_counter_bump(&e->doorbell);
    hx_thread_join(e->thread);
    e->thread = NULL;
}
