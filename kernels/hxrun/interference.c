#include "interference.h"
#include "platform.h"

static void add_core(hx_interf *p, int core) {
    for (int i = 0; i < p->ncores; i++)
        if (p->cores[i] == core) return;
    if (p->ncores < HX_MAX_CORES) p->cores[p->ncores++] = core;
}

/* Median cost of one reading (what a trial pays twice, outside its timed
 * interval). */
static uint64_t read_cost_ns(const hx_interf *p) {
    enum { N = 101 };
    uint64_t d[N];
    hx_interf_sample s;
    for (int i = 0; i < N; i++) {
        uint64_t a = hx_now_ns();
        hx_interf_read(p, &s);
        d[i] = hx_now_ns() - a;
    }
    for (int i = 1; i < N; i++) /* insertion sort: N is small */
        for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
            uint64_t t = d[j];
            d[j] = d[j - 1], d[j - 1] = t;
        }
    return d[N / 2];
}

void hx_interf_init(hx_interf *p, const hx_config *c, int nvworkers, const int *allowed, int nallowed) {
    int threads[HX_NENG_ALL], n = 0, floating = 0;
    for (int e = 0; e < HX_NENG_NAMED + nvworkers; e++) threads[n++] = e;
    for (int b = 0; b < c->antagonists; b++) threads[n++] = HX_ENG_BW(b);
    p->ncores = 0;
    for (int i = 0; i < n; i++) {
        if (c->affinity[threads[i]] < 0) floating = 1;
        else add_core(p, c->affinity[threads[i]]);
    }
    /* A floating thread may run on any core the process may use, and so
     * may the other work that delays it. */
    if (floating) {
        p->ncores = 0;
        for (int i = 0; i < nallowed; i++) add_core(p, allowed[i]);
    }
    p->read_cost_ns = read_cost_ns(p);
}

/* Process CPU time first: on POSIX that read charges the calling thread's
 * running time to its core, so the core's busy time read next includes it
 * too and the difference of the two deltas leaves the host out. */
void hx_interf_read(const hx_interf *p, hx_interf_sample *s) {
    s->switches = hx_process_involuntary_switches();
    s->self_ns = hx_process_cpu_ns();
    s->busy_ns = p->ncores ? hx_cores_busy_ns(p->cores, p->ncores) : -1;
    s->at = hx_now_ns();
}
