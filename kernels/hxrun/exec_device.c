/* Device side of the executor: what runs on the engines.  A task runs either
 * as its own request (groups A, B and alone runs) or as an asynchronous
 * launch from the fused entry (groups C and D).  C and D share every line of
 * the fused entry; only the barrier switch differs. */
#include <stdio.h>
#include <string.h>
#include "exec.h"

void hx_exec_note_wait(hx_exec *x, const char *who, const char *on, uint64_t b, uint64_t e) {
    uint32_t i = __atomic_fetch_add(&x->nwaits, 1u, __ATOMIC_RELAXED);
    if (i < HX_MAX_WAITS) x->waits[i] = (hx_wait_rec){who, on, b, e};
}

/* Stamps one thread's part of a task.  The CPU-time reads sit inside
 * [begin, end], so on one thread cpu_ns <= end - begin.  Each read is a
 * system call (about 0.7 us on a VM), so an empty task, whose work is zero,
 * skips them: its trials keep measuring the control path alone.  The
 * involuntary-switch count (another system call) is read outside [begin,
 * end], so the task's duration does not pay for it; a switch in those few
 * instructions is counted with the task. */
static uint64_t rec_open(hx_exec *x, hx_worker_rec *w, const char *engine, int cpu_time) {
    w->engine = engine;
    w->switches = cpu_time ? hx_thread_involuntary_switches() : -1;
    w->nckpt = 0, w->ckpt_total = 0;
    w->cpu_begin = hx_current_cpu();
    w->begin = hx_exec_now(x);
    return cpu_time ? hx_thread_cpu_ns() : 0;
}

static void rec_close(hx_exec *x, hx_worker_rec *w, int cpu_time, uint64_t cpu0) {
    w->cpu_ns = cpu_time ? hx_thread_cpu_ns() - cpu0 : 0;
    w->end = hx_exec_now(x);
    w->cpu_end = hx_current_cpu();
    int64_t s1 = w->switches >= 0 ? hx_thread_involuntary_switches() : -1;
    w->switches = s1 >= 0 ? s1 - w->switches : -1;
}

static void work_v_split(hx_exec *x);

/* The task's work on this thread; V with extra vector workers splits its
 * rows over them (tasks.c computes each chunk). */
static void task_work(hx_task *t) {
    hx_exec *x = t->x;
    if (t->id == HX_V && !t->empty && !t->calib_ns && x->nvworkers > 0) work_v_split(x);
    else hx_task_work(t);
}

/* Runs a task on engine e.  A task whose work was split over vector workers
 * has filled its worker records itself (work_v_split); its CPU time
 * is theirs, not this thread's, which mostly waited for them. */
static void run_timed(hx_task *t, hx_engine *e) {
    hx_worker_rec w;
    t->ran_on = e->name;
    t->nworkers = 0;
    uint64_t cpu0 = rec_open(t->x, &w, e->name, !t->empty);
    t->rec = &w;
    task_work(t);
    rec_close(t->x, &w, !t->empty, cpu0);
    t->begin = w.begin, t->end = w.end;
    t->cpu_begin = w.cpu_begin, t->cpu_end = w.cpu_end;
    if (t->nworkers == 0) t->workers[t->nworkers++] = w;
    t->cpu_ns = 0;
    t->switches = 0;
    for (int i = 0; i < t->nworkers; i++) {
        t->cpu_ns += t->workers[i].cpu_ns;
        /* one unmeasured worker leaves the task unmeasured, not undercounted */
        t->switches = t->switches < 0 || t->workers[i].switches < 0 ? -1 : t->switches + t->workers[i].switches;
    }
}

/* Publishing: the release store in hx_event_signal orders every output write
 * before the flag; the host's acquire load of the flag then sees the data. */
static void publish(hx_task *t) {
    hx_event_signal(&t->published);
    hx_counter_bump(&t->x->host_channel);
}

static void request_run(hx_job *job, hx_engine *e) {
    hx_task *t = (hx_task *)((char *)job - offsetof(hx_task, request_job));
    /* The backend's normal path acquires scratch per request. */
    if (hx_arena_reserve(&t->x->arena, t->slot_mask) != 0) {
        fprintf(stderr, "hxrun: internal error: scratch slot of %s reserved twice\n", hx_task_names[t->id]);
    }
    run_timed(t, e);
    hx_arena_release(&t->x->arena, t->slot_mask | t->lazy_mask);
    publish(t);
}

static void launch_run(hx_job *job, hx_engine *e) {
    hx_task *t = (hx_task *)((char *)job - offsetof(hx_task, launch_job));
    run_timed(t, e);
    hx_event_signal(&t->dev_done);
}

void hx_task_init_jobs(hx_task *t) {
    t->request_job.run = request_run;
    t->launch_job.run = launch_run;
}

/* One chunk on one thread, recorded as one of V's workers. */
static void vchunk_run(hx_job *job, hx_engine *e) {
    hx_vchunk *c = (hx_vchunk *)job;
    uint64_t cpu0 = rec_open(c->x, &c->rec, e->name, 1);
    hx_task_work_v_rows(c->x, c->r0, c->r1, &c->rec);
    rec_close(c->x, &c->rec, 1, cpu0);
    hx_event_signal(&c->done);
}

/* V with a vector quota > 1: rows are split across the entry thread and the
 * extra vector workers, each chunk recorded as one of V's workers. */
static void work_v_split(hx_exec *x) {
    int parts = x->nvworkers + 1, rows = x->cfg->v_rows;
    for (int i = 0; i < parts; i++) {
        hx_vchunk *c = &x->vchunk[i];
        c->job.run = vchunk_run;
        c->x = x;
        c->r0 = (int)((long)rows * i / parts);
        c->r1 = (int)((long)rows * (i + 1) / parts);
        hx_event_reset(&c->done);
    }
    for (int i = 1; i < parts; i++) hx_engine_push(&x->vworker[i - 1], &x->vchunk[i].job);
    vchunk_run(&x->vchunk[0].job, &x->vec);
    for (int i = 1; i < parts; i++) hx_event_wait(&x->vchunk[i].done, &x->cfg->wait);
    hx_task *V = &x->task[HX_V];
    for (int i = 0; i < parts; i++) V->workers[i] = x->vchunk[i].rec;
    V->nworkers = parts;
}

/* Step 1 of the fused entry: inputs ready, no range or scratch conflicts. */
int hx_plan_check(hx_exec *x, uint32_t mask, char *err, size_t errlen) {
    const hx_range_set *sets[HX_NTASKS];
    int n = 0;
    for (int i = 0; i < HX_NTASKS; i++) {
        if (!(mask & HX_BIT(i))) continue;
        if (!__atomic_load_n(&x->task[i].ready, __ATOMIC_ACQUIRE)) {
            snprintf(err, errlen, "task %s: inputs not ready", hx_task_names[i]);
            return -1;
        }
        sets[n++] = &x->task[i].ranges;
    }
    return hx_ranges_check(sets, n, err, errlen);
}

static void wait_dev(hx_exec *x, hx_task *t, const char *ev) {
    uint64_t b = hx_exec_now(x);
    hx_event_wait(&t->dev_done, &x->cfg->wait);
    hx_exec_note_wait(x, "vec", ev, b, hx_exec_now(x));
}

/* Group D's concurrency window: the entry's tasks in flight, in launch
 * order.  Before a task starts (launched to its engine, or run inline for V)
 * while `window` tasks are in flight, the entry waits for the oldest and
 * publishes it. */
typedef struct inflight {
    hx_task *t[HX_NTASKS];
    const char *ev[HX_NTASKS];
    int head, tail, window;
} inflight;

static void make_room(hx_exec *x, inflight *q) {
    while (q->tail - q->head >= q->window) {
        wait_dev(x, q->t[q->head], q->ev[q->head]);
        publish(q->t[q->head]);
        q->head++;
    }
}

static void launch_async(hx_exec *x, inflight *q, hx_task *t, const char *ev) {
    make_room(x, q);
    t->launch = hx_exec_now(x);
    hx_engine_push(t->engine, &t->launch_job);
    q->t[q->tail] = t, q->ev[q->tail++] = ev;
}

static void fused_run(hx_job *job, hx_engine *e) {
    hx_fused_req *f = (hx_fused_req *)job;
    hx_exec *x = f->x;
    hx_task *M = &x->task[HX_M], *V = &x->task[HX_V], *D = &x->task[HX_D];
    int hasM = !!(f->mask & HX_BIT(HX_M)), hasV = !!(f->mask & HX_BIT(HX_V)), hasD = !!(f->mask & HX_BIT(HX_D));
    int early_release = x->cfg->v_release == HX_V_RELEASE_AT_COMPLETION;
    inflight q = {.window = x->cfg->window ? x->cfg->window : HX_NTASKS};
    f->entry_begin = hx_exec_now(x);

    /* 1. inputs ready, ranges and scratch do not conflict */
    if (hx_plan_check(x, f->mask, f->error, sizeof f->error) != 0) goto fail;
    /* 2. scratch for all tasks at once: they are live together */
    uint32_t slots = (hasM ? M->slot_mask : 0) | (hasV ? V->slot_mask : 0) | (hasD ? D->slot_mask : 0);
    if (hx_arena_reserve(&x->arena, slots) != 0) {
        snprintf(f->error, sizeof f->error, "scratch slots already live at fused entry");
        goto fail;
    }
    /* 3. launch M -> eM, launch D -> eD (C: full barrier after each; D:
     * within the concurrency window, all of them by default) */
    if (f->barrier) {
        if (hasM) {
            M->launch = hx_exec_now(x);
            hx_engine_push(M->engine, &M->launch_job);
            wait_dev(x, M, "eM");
            publish(M);
        }
        if (hasD) {
            D->launch = hx_exec_now(x);
            hx_engine_push(D->engine, &D->launch_job);
            wait_dev(x, D, "eD");
            publish(D);
        }
    } else {
        if (hasM) launch_async(x, &q, M, "eM");
        if (hasD) launch_async(x, &q, D, "eD");
    }
    /* 4. run V here (once the window has room), publish it, and release its
     * scratch now unless --v-release at-entry-end holds it to the return */
    if (hasV) {
        if (!f->barrier) make_room(x, &q);
        run_timed(V, e);
        V->launch = V->begin; /* run inline by the entry: no queue */
        publish(V);
        if (early_release) hx_arena_release(&x->arena, V->slot_mask);
    }
    /* 5. wait eM, publish M; wait eD, publish D (those still in flight) */
    if (!f->barrier) {
        q.window = 1; /* room for none: wait for every task still in flight, oldest first */
        make_room(x, &q);
    }
    uint32_t held = (hasV && early_release) ? V->slot_mask : 0;
    hx_arena_release(&x->arena, (slots & ~held) | (hasD ? D->lazy_mask : 0));
    f->entry_end = hx_exec_now(x);
    /* 6. one return for the whole entry */
    hx_event_signal(&f->done);
    hx_counter_bump(&x->host_channel);
    return;
fail:
    f->failed = 1;
    f->entry_end = hx_exec_now(x);
    hx_event_signal(&f->done);
    hx_counter_bump(&x->host_channel);
}

void hx_fused_init(hx_fused_req *f, hx_exec *x) {
    f->job.run = fused_run;
    f->x = x;
}
