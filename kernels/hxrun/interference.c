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

void hx_interf_write_meta(hx_json *j, const hx_interf *p) {
    uint64_t res = hx_cores_busy_resolution_ns();
    hx_json_obj(j, "interference");
    hx_json_arr(j, "cores");
    for (int i = 0; i < p->ncores; i++) hx_json_i64(j, NULL, p->cores[i]);
    hx_json_close(j, ']');
    hx_json_str(j, "busy_source", hx_cores_busy_source());
    if (res) hx_json_u64(j, "busy_resolution_ns", res);
    else hx_json_null(j, "busy_resolution_ns");
    hx_json_str(j, "switches_source", hx_process_involuntary_switches() >= 0 ? "getrusage ru_nivcsw" : "unavailable");
    hx_json_u64(j, "read_cost_ns", p->read_cost_ns);
    hx_json_close(j, '}');
}

static void delta(hx_json *j, const char *key, int64_t a, int64_t b) {
    if (a < 0 || b < 0) hx_json_null(j, key);
    else hx_json_i64(j, key, b - a);
}

void hx_interf_write_trial(hx_json *j, const hx_interf_sample *a, const hx_interf_sample *b) {
    hx_json_obj(j, "interference");
    delta(j, "involuntary_switches", a->switches, b->switches);
    delta(j, "cores_busy_ns", a->busy_ns, b->busy_ns);
    delta(j, "self_cpu_ns", a->self_ns, b->self_ns);
    if (a->busy_ns < 0 || b->busy_ns < 0 || a->self_ns < 0 || b->self_ns < 0) {
        hx_json_null(j, "other_cpu_ns");
    } else {
        /* Busy time on the runner's cores that the runner's own threads did
         * not use.  Clamped at 0: the few microseconds between the two reads
         * of a sample can tip a quiet trial's raw difference below it. */
        int64_t other = (b->busy_ns - a->busy_ns) - (b->self_ns - a->self_ns);
        hx_json_i64(j, "other_cpu_ns", other > 0 ? other : 0);
    }
    hx_json_u64(j, "span_ns", b->at - a->at);
    hx_json_close(j, '}');
}
