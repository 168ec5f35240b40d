/* The dispatcher: replays the trace in real time and hands the requests'
 * tasks to the engines under policy A, B or D (serve.h).  One thread does
 * everything host-side: it admits an arrival when the clock passes it, reaps
 * completions (every task bumps one doorbell), decides, and sleeps until the
 * next arrival, the end of a pairing window, or the next completion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "platform.h"
#include "serve.h"

const char *const sv_policy_names[SV_NPOL] = {"A", "B", "D"};

#define NEVER   UINT64_MAX
/* Below this the dispatcher spins rather than sleeps: a futex timeout wakes
 * tens of microseconds late, which would add to every pairing window. */
#define SPIN_NS 20000u

/* Sleeps until the doorbell moves past `seen` or the replay clock reaches
 * `wake` (NEVER: no deadline). */
static void wait_until(sv_run *s, uint32_t seen, uint64_t wake) {
    hx_counter *c = &s->doorbell;
    for (;;) {
        if (hx_counter_load(c) != seen) return;
        uint64_t now = sv_now(s);
        if (wake != NEVER && now >= wake) return;
        uint64_t left = wake == NEVER ? NEVER : wake - now;
        if (left < SPIN_NS) {
            hx_cpu_relax();
            continue;
        }
        uint64_t sleep = left == NEVER ? UINT64_MAX : left - SPIN_NS / 2;
        __atomic_fetch_add(&c->waiters, 1u, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&c->value, __ATOMIC_SEQ_CST) == seen) hx_word_wait_timeout(&c->value, seen, sleep);
        __atomic_fetch_sub(&c->waiters, 1u, __ATOMIC_SEQ_CST);
    }
}

/* Dispatcher state of one replay. */
typedef struct fifo {
    int *id;
    int head, tail;
} fifo;
static int fifo_empty(const fifo *q) { return q->head == q->tail; }

typedef struct disp {
    sv_run *s;
    int policy;
    fifo ready[SV_NKINDS]; /* admitted, not launched (A, D) */
    sv_task **inflight;
    int ninflight;
    /* B: tasks an engine queue could not take yet, per engine, in order */
    sv_task **backlog[3];
    int bl_head[3], bl_tail[3];
    int busy;           /* A: a request in service; D: requests of the running entry not done */
    int current;        /* A: the request in service */
    uint64_t hol_since; /* D: since when the oldest ready request waits for a partner */
    int ndone;
    sv_replay_stats *st;
} disp;

static int engine_index(const sv_run *s, const hx_engine *e) { return e == &s->mx ? 0 : e == &s->vec ? 1 : 2; }

static void push_now(disp *d, sv_task *t) {
    t->push = sv_now(d->s);
    if (!t->r->launch) t->r->launch = t->push ? t->push : 1;
    d->inflight[d->ninflight++] = t;
}

/* Hands task t to its engine, or to the engine's backlog when its queue is
 * full (B under overload: the queue is bounded, the backlog is not). */
static void launch(disp *d, sv_task *t) {
    int e = engine_index(d->s, t->engine);
    if (d->bl_head[e] == d->bl_tail[e]) {
        uint64_t saved = t->r->launch;
        push_now(d, t);
        if (hx_engine_push(t->engine, &t->job) == 0) return;
        d->ninflight--, t->r->launch = saved;
    }
    d->backlog[e][d->bl_tail[e]++] = t;
}

static void drain_backlogs(disp *d) {
    for (int e = 0; e < 3; e++)
        while (d->bl_head[e] != d->bl_tail[e]) {
            sv_task *t = d->backlog[e][d->bl_head[e]];
            uint64_t saved = t->r->launch;
            push_now(d, t);
            if (hx_engine_push(t->engine, &t->job) != 0) {
                d->ninflight--, t->r->launch = saved;
                break;
            }
            d->bl_head[e]++;
        }
}

static void launch_request(disp *d, sv_req *r) {
    for (int j = 0; j < r->ntasks; j++) launch(d, &r->task[j]);
    r->next_task = r->ntasks;
}

static sv_req *oldest_ready(disp *d, int *kind) {
    sv_req *best = NULL;
    for (int k = 0; k < SV_NKINDS; k++) {
        fifo *q = &d->ready[k];
        if (fifo_empty(q)) continue;
        sv_req *r = &d->s->req[q->id[q->head]];
        if (!best || r->id < best->id) best = r, *kind = k;
    }
    return best;
}

static void finish(disp *d, sv_req *r) {
    r->done = 1;
    r->start = r->task[0].begin, r->end = r->task[0].end;
    for (int j = 1; j < r->ntasks; j++) {
        if (r->task[j].begin < r->start) r->start = r->task[j].begin;
        if (r->task[j].end > r->end) r->end = r->task[j].end;
    }
    d->ndone++;
    if (d->policy == SV_POL_D) d->busy--;
}

static void reap(disp *d) {
    for (int i = 0; i < d->ninflight;) {
        sv_task *t = d->inflight[i];
        if (!hx_event_is_set(&t->done)) {
            i++;
            continue;
        }
        d->inflight[i] = d->inflight[--d->ninflight];
        sv_req *r = t->r;
        if (++r->tasks_done == r->ntasks) finish(d, r);
        else if (d->policy == SV_POL_A && r->next_task < r->ntasks)
            launch(d, &r->task[r->next_task++]); /* A: the request's next task, after the previous */
    }
    if (d->policy == SV_POL_A && d->busy && d->s->req[d->current].done) d->busy = 0;
    drain_backlogs(d);
}

/* Policy decisions at time `now`; returns the earliest time the dispatcher
 * must look again without a completion (NEVER: none). */
static uint64_t decide(disp *d, uint64_t now) {
    sv_run *s = d->s;
    int kind = 0;
    if (d->policy == SV_POL_A && !d->busy) {
        sv_req *r = oldest_ready(d, &kind);
        if (r) {
            d->ready[kind].head++;
            d->busy = 1, d->current = r->id;
            launch(d, &r->task[r->next_task++]);
        }
    }
    if (d->policy == SV_POL_D && !d->busy) {
        sv_req *head = oldest_ready(d, &kind);
        if (!head) return NEVER;
        if (d->hol_since == NEVER) d->hol_since = now;
        fifo *other = &d->ready[1 - kind];
        sv_req *partner = fifo_empty(other) ? NULL : &s->req[other->id[other->head]];
        if (!partner && now - d->hol_since < s->p->window_ns) return d->hol_since + s->p->window_ns;
        /* One fused entry: the pair (or the head alone) launched at once. */
        d->ready[kind].head++;
        head->pairing_wait = now - d->hol_since;
        d->hol_since = NEVER;
        d->busy = 1;
        d->st->entries++;
        if (partner) {
            other->head++;
            head->paired_with = partner->id, partner->paired_with = head->id;
            d->busy = 2;
            d->st->pairs++;
            launch_request(d, partner);
        }
        launch_request(d, head);
    }
    return NEVER;
}

int sv_replay(sv_run *s, int policy, sv_replay_stats *st, char *err, size_t errlen) {
    const sv_trace *tr = s->trace;
    int n = tr->n;
    memset(st, 0, sizeof *st);
    disp d;
    memset(&d, 0, sizeof d);
    d.s = s, d.policy = policy, d.st = st, d.hol_since = NEVER;
    int *ids = malloc(sizeof(int) * 2 * (size_t)n);
    d.inflight = malloc(sizeof(sv_task *) * 2 * (size_t)n);
    sv_task **bl = malloc(sizeof(sv_task *) * 3 * (size_t)n);
    if (!ids || !d.inflight || !bl) {
        free(ids), free(d.inflight), free(bl);
        snprintf(err, errlen, "out of memory for the dispatcher");
        return -1;
    }
    for (int k = 0; k < SV_NKINDS; k++) d.ready[k].id = ids + (size_t)k * n;
    for (int e = 0; e < 3; e++) d.backlog[e] = bl + (size_t)e * n;
    for (int i = 0; i < n; i++) {
        sv_req *r = &s->req[i];
        r->next_task = r->tasks_done = r->done = 0;
        r->admit = r->launch = r->start = r->end = r->pairing_wait = 0;
        r->paired_with = -1;
        for (int j = 0; j < r->ntasks; j++) {
            sv_task *t = &r->task[j];
            t->push = t->begin = t->end = t->cpu_ns = 0;
            hx_event_reset(&t->done);
        }
    }
    /* Time 0 of the replay a little ahead, so the first arrival is not late. */
    s->origin = hx_now_ns() + 2000000u;
    while (hx_now_ns() < s->origin) hx_sleep_ns(200000u);
    int next = 0;
    while (d.ndone < n) {
        uint32_t seen = hx_counter_load(&s->doorbell);
        uint64_t now = sv_now(s);
        while (next < n && s->req[next].arrival <= now) {
            sv_req *r = &s->req[next++];
            r->admit = now;
            if (now - r->arrival > st->max_admit_lag_ns) st->max_admit_lag_ns = now - r->arrival;
            if (policy == SV_POL_B) launch_request(&d, r);
            else d.ready[r->kind].id[d.ready[r->kind].tail++] = r->id;
        }
        reap(&d);
        uint64_t wake = decide(&d, now);
        if (d.ndone == n) break;
        if (next < n && s->req[next].arrival < wake) wake = s->req[next].arrival;
        wait_until(s, seen, wake);
    }
    for (int i = 0; i < n; i++)
        if (s->req[i].end > st->makespan_ns) st->makespan_ns = s->req[i].end;
    free(ids), free(d.inflight), free(bl);
    return 0;
}
