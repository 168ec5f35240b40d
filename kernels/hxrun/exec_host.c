/* Host side: how each group is submitted and waited for, like an offload
 * runtime's application thread.
 *   A: each task is its own request; the host waits before the next.
 *   B: each task goes to its own engine queue at once; the host waits for all.
 *   C: one fused request, full barrier after each task.
 *   D: the same fused request, barrier off.
 *   alone: one task as its own request (the A path with one task). */
#include <stdio.h>
#include <string.h>
#include "exec.h"

/* The fixed task order of phase 1 (the fused entry launches M, then D, then V). */
static const int task_order[HX_NTASKS] = {HX_M, HX_D, HX_V};

/* The host has seen task t complete at `now`.  With --check-at-publish it
 * reads the outputs right away: the mechanism test for publication
 * visibility (inside the wait, so only for that test). */
static void observe(hx_exec *x, hx_task *t, uint64_t now) {
    t->host_seen = now;
    if (x->cfg->check_at_publish && !t->empty) t->checksum_at_publish = hx_task_checksum(t);
}

/* Waits until every task in `mask` is published and, if `final` is given,
 * until it is signalled.  With the early-completion interface the host wakes
 * on every publish and stamps host_seen per task; without it, the host only
 * learns of completion when the final event fires. */
static void host_wait(hx_exec *x, uint32_t mask, hx_event *final, hx_host_times *h) {
    uint64_t b = hx_exec_now(x);
    if (x->cfg->early_completion) {
        uint32_t pending = mask;
        for (;;) {
            uint32_t seen = hx_counter_load(&x->host_channel);
            /* Read the entry's return before scanning: it is signalled after
             * every publish, so once it is seen (acquire) the scan below sees
             * every task the entry published. */
            int returned = final && hx_event_is_set(final);
            for (int i = 0; i < HX_NTASKS; i++) {
                if ((pending & HX_BIT(i)) && hx_event_is_set(&x->task[i].published)) {
                    observe(x, &x->task[i], hx_exec_now(x));
                    pending &= ~HX_BIT(i);
                }
            }
            /* A returned entry publishes nothing more (a failed one nothing at all). */
            if (returned || (pending == 0 && !final)) break;
            hx_counter_wait_change(&x->host_channel, seen, &x->cfg->wait);
        }
    } else {
        if (final) hx_event_wait(final, &x->cfg->wait);
        for (int i = 0; i < HX_NTASKS; i++)
            if (mask & HX_BIT(i)) hx_event_wait(&x->task[i].published, &x->cfg->wait);
        uint64_t now = hx_exec_now(x);
        for (int i = 0; i < HX_NTASKS; i++)
            if (mask & HX_BIT(i)) observe(x, &x->task[i], now);
    }
    uint64_t e = hx_exec_now(x);
    hx_exec_note_wait(x, "host", final ? "req" : (mask == (mask & -mask) ? hx_task_names[__builtin_ctz(mask)] : "all"),
                      b, e);
    if (!h->wait_begin) h->wait_begin = b;
    h->wait_end = e;
    h->wait_ns += e - b;
}

/* Hands one request to engine e.  `t`: the task it carries (A, B, alone),
 * whose launch is the begin of the push; NULL for the fused request. */
static void submit(hx_exec *x, hx_engine *e, hx_job *job, hx_task *t, hx_host_times *h) {
    if (!h->requests) h->cpu = hx_current_cpu();
    uint64_t b = hx_exec_now(x);
    if (t) t->launch = b;
    hx_engine_push(e, job);
    uint64_t end = hx_exec_now(x);
    if (!h->submit_begin) h->submit_begin = b;
    h->submit_end = end;
    h->submit_ns += end - b;
    h->submits[h->requests++] = end - b;
}

int hx_run_group(hx_exec *x, int group, uint32_t mask, int empty, hx_host_times *h, char *err, size_t errlen) {
    memset(h, 0, sizeof *h);
    x->nwaits = 0;
    for (int i = 0; i < HX_NTASKS; i++) hx_task_reset_record(&x->task[i], empty);
    hx_arena_reset_peak(&x->arena);
    switch (group) {
    case HX_G_A:
    case HX_G_ALONE:
        for (int j = 0; j < HX_NTASKS; j++) {
            hx_task *t = &x->task[task_order[j]];
            if (!(mask & HX_BIT(t->id))) continue;
            submit(x, t->engine, &t->request_job, t, h);
            host_wait(x, HX_BIT(t->id), NULL, h);
        }
        break;
    case HX_G_B:
        for (int j = 0; j < HX_NTASKS; j++) {
            hx_task *t = &x->task[task_order[j]];
            if (mask & HX_BIT(t->id)) submit(x, t->engine, &t->request_job, t, h);
        }
        host_wait(x, mask, NULL, h);
        break;
    case HX_G_C:
    case HX_G_D: {
        hx_fused_req *f = &x->fused;
        f->mask = mask;
        f->barrier = group == HX_G_C;
        f->failed = 0;
        f->error[0] = 0;
        f->entry_begin = f->entry_end = 0;
        hx_event_reset(&f->done);
        submit(x, &x->vec, &f->job, NULL, h);
        host_wait(x, mask, &f->done, h);
        if (f->failed) {
            snprintf(err, errlen, "fused entry rejected the plan: %s", f->error);
            return -1;
        }
        break;
    }
    default: snprintf(err, errlen, "unknown group %d", group); return -1;
    }
    return 0;
}
