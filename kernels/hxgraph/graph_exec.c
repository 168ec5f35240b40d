/* Groups A-D for a task graph (docs/graphs.md).
 *
 * A  the host runs the nodes in the fixed topological order, one request
 *    each, and waits for each before the next.
 * B  the host is a graph executor with one queue per engine: it pushes every
 *    node to its engine's queue as soon as the node's inputs are done (it
 *    learns of completions through one counter every engine bumps).
 * C  one fused request to the vector engine's thread, which runs the nodes
 *    in the fixed order: V nodes itself, M and D nodes launched on their
 *    engines and waited for (a full barrier after each).
 * D  the same fused request with the barrier off: the entry launches every
 *    ready M and D node on its engine (in the fixed order), runs ready V
 *    nodes itself, and resolves dependencies as completions arrive; the host
 *    waits once.
 * In every group a node starts only after all its predecessors ended: the
 * orchestrator (host or entry) launches it after it has seen their
 * completion events (release/acquire). */
#include <stddef.h>
#include <string.h>
#include "graph.h"
#include "platform.h"

const char *const hxg_group_names[HXG_NGROUPS] = {"A", "B", "C", "D"};

uint64_t hxg_now(const hxg_exec *x) { return hx_now_ns() - x->epoch; }

static void execute(hxg_exec *x, hxg_node *nd, hx_engine *e) {
    nd->ran_on = e->name;
    nd->cpu_begin = hx_current_cpu();
    uint64_t c0 = hx_thread_cpu_ns();
    nd->begin = hxg_now(x);
    hxg_node_run(nd, x->arena, x->k);
    nd->end = hxg_now(x);
    nd->cpu_ns = hx_thread_cpu_ns() - c0;
    nd->cpu_end = hx_current_cpu();
}

static void complete(hxg_exec *x, hxg_node *nd) {
    hx_event_signal(&nd->done); /* release: its outputs and record */
    hx_counter_bump(&x->completions);
}

static void node_job(hx_job *job, hx_engine *e) {
    hxg_node *nd = (hxg_node *)((char *)job - offsetof(hxg_node, job));
    execute(nd->x, nd, e);
    complete(nd->x, nd);
}

static void launch(hxg_exec *x, hxg_node *nd) {
    nd->launch = hxg_now(x);
    /* a queue holds HX_QUEUE_CAP jobs; a wider graph waits for room (engine.h) */
    while (hx_engine_push(&x->eng[nd->engine], &nd->job) != 0) hx_yield();
}

static void run_inline(hxg_exec *x, hxg_node *nd) {
    nd->launch = hxg_now(x);
    execute(x, nd, &x->eng[HXG_ENG_VEC]);
    complete(x, nd);
}

/* Marks every newly completed node handled and counts down its successors;
 * sets ready[] for those whose last predecessor it was.  Returns how many
 * completions it handled. */
static int harvest(hxg_exec *x, int ready[]) {
    hxg_graph *g = x->g;
    int n = 0;
    for (int i = 0; i < g->nnodes; i++) {
        hxg_node *nd = &g->node[i];
        if (nd->handled || !hx_event_is_set(&nd->done)) continue; /* acquire */
        nd->handled = 1, n++;
        for (int s = 0; s < nd->nsucc; s++)
            if (--g->node[nd->succ[s]].pending == 0) ready[nd->succ[s]] = 1;
    }
    return n;
}

static void reset(hxg_exec *x, int ready[]) {
    for (int i = 0; i < x->g->nnodes; i++) {
        hxg_node *nd = &x->g->node[i];
        hx_event_reset(&nd->done);
        nd->pending = nd->npred, nd->handled = 0;
        ready[i] = nd->npred == 0;
        nd->launch = nd->begin = nd->end = nd->cpu_ns = nd->pack_ns = 0;
    }
}

/* The dependency-driven loop of groups B (host, every node pushed) and D
 * (entry, V nodes run inline). */
static void drive(hxg_exec *x, int ready[], int inline_v) {
    hxg_graph *g = x->g;
    int done = 0;
    for (;;) {
        uint32_t seen = hx_counter_load(&x->completions);
        done += harvest(x, ready);
        if (done == g->nnodes) return;
        int ran = 0, vnext = -1;
        for (int t = 0; t < g->nnodes; t++) { /* the fixed order */
            int i = g->order[t];
            if (!ready[i]) continue;
            if (inline_v && g->node[i].engine == HXG_ENG_VEC) {
                if (vnext < 0) vnext = i;
                continue;
            }
            ready[i] = 0, ran = 1;
            launch(x, &g->node[i]);
        }
        if (vnext >= 0) {
            ready[vnext] = 0;
            run_inline(x, &g->node[vnext]);
            continue;
        }
        if (!ran) hx_counter_wait_change(&x->completions, seen, &x->wait);
    }
}

static void entry_job(hx_job *job, hx_engine *e) {
    hxg_exec *x = (hxg_exec *)((char *)job - offsetof(hxg_exec, entry_job));
    (void)e;
    hxg_graph *g = x->g;
    static int ready[HXG_MAX_NODES];
    x->entry_begin = hxg_now(x);
    reset(x, ready);
    if (x->entry_barrier) {
        for (int t = 0; t < g->nnodes; t++) {
            hxg_node *nd = &g->node[g->order[t]];
            if (nd->engine == HXG_ENG_VEC) run_inline(x, nd);
            else {
                launch(x, nd);
                hx_event_wait(&nd->done, &x->wait);
            }
        }
    } else {
        drive(x, ready, 1);
    }
    x->entry_end = hxg_now(x);
    hx_event_signal(&x->entry_done);
}

void hxg_run_group(hxg_exec *x, int group) {
    hxg_graph *g = x->g;
    static int ready[HXG_MAX_NODES];
    x->entry_begin = x->entry_end = 0;
    switch (group) {
    case HXG_A:
        reset(x, ready);
        for (int t = 0; t < g->nnodes; t++) {
            hxg_node *nd = &g->node[g->order[t]];
            if (x->before) x->before(x, nd, x->ctx);
            launch(x, nd);
            hx_event_wait(&nd->done, &x->wait);
            if (x->after) x->after(x, nd, x->ctx);
        }
        break;
    case HXG_B:
        reset(x, ready);
        drive(x, ready, 0);
        break;
    default:
        hx_event_reset(&x->entry_done);
        x->entry_barrier = group == HXG_C;
        while (hx_engine_push(&x->eng[HXG_ENG_VEC], &x->entry_job) != 0) hx_yield();
        hx_event_wait(&x->entry_done, &x->wait);
        break;
    }
}

int hxg_exec_start(hxg_exec *x, hxg_graph *g, const hx_kernels *k, const int core[HXG_NENG], hx_wait_policy wait,
                   char *err, size_t errlen) {
    memset(x, 0, sizeof *x);
    x->g = g, x->k = k, x->wait = wait;
    x->epoch = hx_now_ns();
    x->entry_job.run = entry_job;
    for (int i = 0; i < g->nnodes; i++) g->node[i].job.run = node_job, g->node[i].x = x;
    for (int e = 0; e < HXG_NENG; e++)
        if (hx_engine_start(&x->eng[e], hxg_engine_names[e], core[e], &x->wait, err, errlen)) return -1;
    return 0;
}

void hxg_exec_stop(hxg_exec *x) {
    for (int e = 0; e < HXG_NENG; e++) hx_engine_stop(&x->eng[e]);
}
