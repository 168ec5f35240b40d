/* The measurement protocol (protocol.h): what runs when, what is measured
 * and what is compared.  Its findings go to a reporter (report.h) as plain
 * structs; the records' format is the reporter's (report_jsonl.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npy.h"
#include "protocol.h"
#include "record.h"
#include "report.h"
#include "rng.h"

typedef struct trial_kind {
    int group;
    uint32_t mask;
    int empty;
} trial_kind;

static uint64_t round_rng(uint64_t seed, int64_t round) {
    uint64_t z = seed ^ ((uint64_t)round * 0x9E3779B97F4A7C15ull) ^ 0xD1B54A32D192ED03ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 31);
}

/* Median cost of reading the clock twice back to back. */
static uint64_t clock_read_overhead_ns(const hx_exec *x) {
    enum { N = 1001 };
    uint64_t d[N];
    for (int i = 0; i < N; i++) {
        uint64_t a = hx_exec_now(x), b = hx_exec_now(x);
        d[i] = b - a;
    }
    for (int i = 1; i < N; i++) /* insertion sort: N is small */
        for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
            uint64_t t = d[j];
            d[j] = d[j - 1], d[j - 1] = t;
        }
    return d[N / 2];
}

static int engines_used(const hx_exec *x) {
    uint32_t all = 0;
    for (int w = 0; w < x->cfg->nworkloads; w++) all |= x->cfg->workloads[w];
    int n = __builtin_popcount(all);
    if (all & HX_BIT(HX_V)) n += x->nvworkers;
    return n;
}

/* The meta record's warnings (report.h, hx_warning): the code says which
 * condition holds, the text says it to a person. */
static void collect_warnings(hx_meta_facts *m, const hx_config *c) {
    int used = m->engines_used, cores = m->cores, nw = 0;
    hx_warning *warn = m->warnings;
    if (used > cores) {
        snprintf(m->texts[0], sizeof m->texts[0],
                 "%d device engines run on %d %s: engines time-share them, so overlap is bounded by the %s, not "
                 "the engines",
                 used, cores, hx_cores_words(), hx_cores_words());
        warn[nw++] = (hx_warning){"engines_exceed_cores", m->texts[0]};
    }
    if (c->wait.strategy == HX_WAIT_SPIN && used + 1 > cores)
        warn[nw++] =
            (hx_warning){"spin_wait_oversubscribed",
                         "spin waits with more threads than cores: waiting threads steal cycles from working ones"};
    if (c->calibrate)
        warn[nw++] = (hx_warning){"calibration", "calibration run: tasks are busy-waits, outputs are not checked"};
    if (c->antagonists && used + c->antagonists > cores) {
        snprintf(m->texts[1], sizeof m->texts[1],
                 "%d antagonist thread(s) and %d device engines on %d online cores: the antagonists also "
                 "take CPU time from the engines, not only memory bandwidth",
                 c->antagonists, used, cores);
        warn[nw++] = (hx_warning){"antagonists_share_cores", m->texts[1]};
    }
    if (c->host_pin_refused)
        warn[nw++] =
            (hx_warning){"host_unpinned", "--affinity spread: the platform refused to pin the host thread; it floats"};
    m->nwarnings = nw;
}

/* The meta record's facts: the machine's cores, the engines the workloads
 * use, the clock's read cost and the warnings they lead to. */
static void report_meta(hx_reporter *rep, const hx_exec *x) {
    hx_meta_facts m;
    m.cores = hx_online_cores();
    m.engines_used = engines_used(x);
    m.clock_overhead_ns = clock_read_overhead_ns(x);
    collect_warnings(&m, x->cfg);
    rep->meta(rep, x, &m);
}

/* A submit longer than this means the host thread lost its core between
 * pushing requests (a push alone takes a few microseconds). */
#define HX_SUBMIT_OUTLIER_NS 200000u

static int submit_outlier(const hx_host_times *h) {
    for (int i = 0; i < h->requests; i++)
        if (h->submits[i] > HX_SUBMIT_OUTLIER_NS) return 1;
    return 0;
}

/* Group B hands its tasks over in one burst: a last launch this late after
 * the first means the host lost its core between pushes, so B's later tasks
 * started late for a reason that is not B's mechanism. */
static int handover_outlier(const hx_exec *x, uint32_t mask) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < HX_NTASKS; i++) {
        if (!(mask & HX_BIT(i))) continue;
        if (x->task[i].launch < lo) lo = x->task[i].launch;
        if (x->task[i].launch > hi) hi = x->task[i].launch;
    }
    return hi - lo > HX_SUBMIT_OUTLIER_NS;
}

static int has_output_check(const hx_exec *x, int empty) { return !empty && !x->cfg->calibrate; }

/* The interference samples taken just before and just after the trial's
 * timed interval (hx_interf_read). */
typedef struct trial_samples {
    hx_interf_sample before, after;
} trial_samples;

/* One trial's result from the executor's records; each checked task's
 * checksum is compared with the verified one (checksums_ok). */
static void trial_result(hx_trial_result *t, const hx_exec *x, const trial_kind *k, const hx_host_times *h,
                         const trial_samples *ts, const uint64_t *verified) {
    t->group = k->group, t->mask = k->mask, t->empty = k->empty;
    t->host = h;
    t->tasks = x->task;
    t->cpu_unknown = !k->empty && !hx_exec_thread_cpu_available(x);
    t->checked = has_output_check(x, k->empty);
    t->checksums_ok = 1;
    for (int i = 0; i < HX_NTASKS; i++) {
        if (!(k->mask & HX_BIT(i)) || !t->checked) continue;
        const hx_task *task = &x->task[i];
        t->checksum[i] = x->cfg->check_at_publish ? task->checksum_at_publish : hx_task_checksum(task);
        if (t->checksum[i] != verified[i]) t->checksums_ok = 0;
    }
    t->entry_begin = x->fused.entry_begin, t->entry_end = x->fused.entry_end;
    t->waits = x->waits;
    t->nwaits = x->nwaits < HX_MAX_WAITS ? x->nwaits : HX_MAX_WAITS;
    t->scratch_peak_bytes = hx_arena_peak(&x->arena);
    t->makespan_ns = h->wait_end - h->submit_begin;
    t->before = ts->before, t->after = ts->after;
}

static void poison(hx_exec *x, uint32_t mask) {
    for (int i = 0; i < HX_NTASKS; i++)
        if (mask & HX_BIT(i)) hx_task_poison(&x->task[i]);
}

/* Writes the inputs and outputs of the tasks in `mask` to <npy_dir>/<workload>/
 * and lists them (relative to npy_dir) in v->files. */
static int dump_npy(hx_exec *x, uint32_t mask, hx_verify_result *v, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    char dir[1024], path[1200];
    const char *wl = hx_workload_name(mask);
    hx_make_dir(c->npy_dir);
    snprintf(dir, sizeof dir, "%s/%s", c->npy_dir, wl);
    hx_make_dir(dir);
    int f32 = c->precision == HX_FP32;
    struct {
        int task;
        const char *name, *dtype;
        int ndim;
        size_t shape[2];
        const void *data;
        size_t elem;
    } files[] = {
        {HX_M, "M_A", f32 ? "<f4" : "|u1", 2, {(size_t)c->m, (size_t)c->k}, x->m.A, f32 ? 4u : 1u},
        {HX_M, "M_B", f32 ? "<f4" : "|i1", 2, {(size_t)c->k, (size_t)c->n}, x->m.B, f32 ? 4u : 1u},
        {HX_M, "M_C", f32 ? "<f4" : "<i4", 2, {(size_t)c->m, (size_t)c->n}, x->m.C, 4},
        {HX_V, "V_X", f32 ? "<f4" : "<i2", 2, {(size_t)c->v_rows, (size_t)c->v_cols}, x->v.x, f32 ? 4u : 2u},
        {HX_V, "V_Y", f32 ? "<f4" : "<i2", 2, {(size_t)c->v_rows, (size_t)c->v_cols}, x->v.y, f32 ? 4u : 2u},
        {HX_V, "V_rowsum", f32 ? "<f4" : "<i4", 1, {(size_t)c->v_rows, 0}, x->v.rowsum, 4},
        {HX_V, "V_rowmax", f32 ? "<f4" : "<i2", 1, {(size_t)c->v_rows, 0}, x->v.rowmax, f32 ? 4u : 2u},
        /* the source window whose copy the scratch must hold: the last one */
        {HX_D,
         "D_src",
         "|u1",
         2,
         {(size_t)c->d_rows, (size_t)c->d_src_stride},
         x->d.src + (size_t)(c->d_repeat - 1) * c->d_rows * c->d_src_stride,
         1},
        {HX_D, "D_dst", "|u1", 2, {(size_t)c->d_rows, (size_t)x->d.dst_stride}, x->d.out, 1},
    };
    _Static_assert(sizeof files / sizeof files[0] <= HX_MAX_NPY_FILES, "report.h: HX_MAX_NPY_FILES");
    v->dumped = 1;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (!(mask & HX_BIT(files[i].task))) continue;
        size_t n = files[i].shape[0] * (files[i].ndim == 2 ? files[i].shape[1] : 1);
        snprintf(path, sizeof path, "%s/%s.npy", dir, files[i].name);
        if (hx_npy_write(path, files[i].dtype, files[i].ndim, files[i].shape, files[i].data, n * files[i].elem)) {
            snprintf(err, errlen, "cannot write %s", path);
            return -1;
        }
        hx_npy_file *f = &v->files[v->nfiles++];
        f->name = files[i].name;
        snprintf(f->rel, sizeof f->rel, "%s/%s.npy", wl, files[i].name);
    }
    return 0;
}

/* Verification round: every workload once in group D; its checksums become
 * the reference every later trial is compared against, and its inputs and
 * outputs go to .npy for the numpy check. */
static int verify(hx_exec *x, hx_reporter *rep, uint64_t *verified, int *mismatches, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    int have[HX_NTASKS] = {0};
    for (int w = 0; w < c->nworkloads; w++) {
        uint32_t mask = c->workloads[w];
        hx_host_times h;
        hx_verify_result v = {.mask = mask, .checked = !c->calibrate};
        poison(x, mask);
        if (hx_run_group(x, HX_G_D, mask, 0, &h, err, errlen)) return -1;
        for (int i = 0; i < HX_NTASKS && v.checked; i++) {
            if (!(mask & HX_BIT(i))) continue;
            uint64_t cs = v.checksum[i] = hx_task_checksum(&x->task[i]);
            if (!have[i]) verified[i] = cs, have[i] = 1;
            else if (verified[i] != cs) (*mismatches)++; /* same task, same inputs: must agree */
        }
        if (c->npy_dir && !c->calibrate) {
            if (hx_exec_fetch_data(x, mask, err, errlen)) return -1;
            if (dump_npy(x, mask, &v, err, errlen)) return -1;
        }
        rep->verify(rep, x, &v);
    }
    return 0;
}

#define MAX_KINDS (HX_MAX_WORKLOADS * HX_NGROUPS * 2 + HX_NTASKS)

/* The kinds of trial of one round, in the fixed order before shuffling:
 * every workload in every group (measured and empty), then every task
 * alone.  Returns how many. */
static int trial_kinds(const hx_config *c, trial_kind kinds[MAX_KINDS]) {
    int nk = 0;
    uint32_t all = 0;
    for (int w = 0; w < c->nworkloads; w++) {
        all |= c->workloads[w];
        for (int g = 0; g < HX_NGROUPS; g++) {
            if (!(c->groups & HX_BIT(g))) continue;
            kinds[nk++] = (trial_kind){g, c->workloads[w], 0};
            kinds[nk++] = (trial_kind){g, c->workloads[w], 1};
        }
    }
    for (int i = 0; i < HX_NTASKS; i++)
        if (all & HX_BIT(i)) kinds[nk++] = (trial_kind){HX_G_ALONE, HX_BIT(i), 0};
    return nk;
}

/* What the trial loop counts, and how it ended. */
typedef struct run_state {
    uint64_t verified[HX_NTASKS];
    int mismatches, trials, outliers, handover;
    int outliers_by[HX_NGROUPS + 1];
    uint64_t t0;
    /* a release request (platform.h): when it came and when the resources
     * went back (0: none), and the trial during which it came (-1: before
     * any trial, i.e. during the verification round) */
    uint64_t asked_ns, released_ns;
    int64_t preempted_trial, preempted_round;
} run_state;

/* The resource manager asks for a release within this (HAP_compute_res.h). */
#define HX_RELEASE_BOUND_NS 5000000u

/* At a trial boundary: 1 when a release was asked (the resources are given
 * back at once and the run ends), else 0. */
static int release_at_boundary(run_state *rs) {
    if (!hx_release_asked(&rs->asked_ns)) return 0;
    hx_release_resources();
    rs->released_ns = hx_now_ns();
    return 1;
}

/* The end record's result: counts, outliers, the release request, what the
 * antagonists applied. */
static void report_end(hx_exec *x, hx_reporter *rep, const run_state *rs, const char *failed) {
    hx_end_result e = {
        .status = failed           ? failed
                  : rs->asked_ns   ? "preempted"
                  : rs->mismatches ? "checksum_mismatch"
                                   : "ok",
        .trials = rs->trials,
        .mismatches = rs->mismatches,
        .outliers = rs->outliers,
        .handover = rs->handover,
        .submit_outlier_ns = HX_SUBMIT_OUTLIER_NS,
        .wall_ns = hx_now_ns() - rs->t0,
        .asked_ns = rs->asked_ns,
        .released_ns = rs->released_ns,
        .release_bound_ns = HX_RELEASE_BOUND_NS,
        .preempted_trial = rs->preempted_trial,
        .preempted_round = rs->preempted_round,
        .antagonists = x->bw.n,
    };
    memcpy(e.outliers_by, rs->outliers_by, sizeof e.outliers_by);
    if (x->bw.n) e.antagonist_bytes = hx_antagonists_bytes(&x->bw), e.antagonist_active_ns = x->bw.active_ns;
    rep->end(rep, x, &e);
}

/* Every warm-up and measured round; returns 0, 1 on an error (err), or 6
 * when a release request ended the run at a trial boundary. */
static int run_rounds(hx_exec *x, hx_reporter *rep, run_state *rs, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    trial_kind kinds[MAX_KINDS];
    int nk = trial_kinds(c, kinds);
    int64_t index = 0; /* trials so far, warm-up included (--preempt-at-trial counts these) */
    for (int64_t r = -(int64_t)c->warmup; r < c->rounds; r++) {
        /* interleaving cancels drift: the kinds in a seeded order */
        trial_kind order[sizeof kinds / sizeof kinds[0]];
        int perm[sizeof kinds / sizeof kinds[0]];
        for (int i = 0; i < nk; i++) perm[i] = i;
        uint64_t s = round_rng(c->seed, r);
        hx_shuffle(perm, nk, &s);
        for (int i = 0; i < nk; i++) order[i] = kinds[perm[i]];
        for (int i = 0; i < nk; i++, index++) {
            hx_host_times h;
            trial_samples ts;
            if (!order[i].empty && !c->calibrate) poison(x, order[i].mask);
            /* outside the timed interval: the readings do not enter makespan_ns */
            hx_interf_read(&x->interf, &ts.before);
            if (index == c->preempt_at_trial) hx_release_ask(); /* test hook: as the resource manager would */
            if (hx_run_group(x, order[i].group, order[i].mask, order[i].empty, &h, err, errlen)) return 1;
            hx_interf_read(&x->interf, &ts.after);
            hx_trial_result t = {.round = r, .seq = i};
            t.preempted = release_at_boundary(rs);
            if (t.preempted) rs->preempted_trial = index, rs->preempted_round = r;
            trial_result(&t, x, &order[i], &h, &ts, rs->verified);
            rep->trial(rep, x, &t);
            if (!t.checksums_ok) rs->mismatches++;
            rs->trials++;
            if (r >= 0 && submit_outlier(&h)) rs->outliers++, rs->outliers_by[order[i].group]++;
            if (r >= 0 && order[i].group == HX_G_B) rs->handover += handover_outlier(x, order[i].mask);
            if (t.preempted) return 6;
        }
    }
    return 0;
}

int hx_protocol_run(hx_exec *x, FILE *out, char *err, size_t errlen) {
    hx_reporter rep;
    hx_reporter_jsonl(&rep, out);
    return hx_protocol_report(x, &rep, err, errlen);
}

int hx_protocol_report(hx_exec *x, hx_reporter *rep, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    static run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.t0 = hx_now_ns();
    rs.preempted_trial = rs.preempted_round = -1;
    /* here, not at set-up: main has pinned the host (or left it floating) by now */
    hx_interf_init(&x->interf, c, x->nvworkers, x->allowed, x->nallowed);
    report_meta(rep, x);
    if (verify(x, rep, rs.verified, &rs.mismatches, err, errlen)) return 1;
    int rc = 0;
    if (release_at_boundary(&rs)) {
        rc = 6; /* asked during the verification round: no trial ran */
    } else {
        /* Antagonists stream through every warm-up and measured round (warm-up
         * sees the conditions it warms up for), not through the verification. */
        hx_antagonists_set_active(&x->bw, 1);
        rc = run_rounds(x, rep, &rs, err, errlen);
        hx_antagonists_set_active(&x->bw, 0);
        if (rc == 1) return 1;
    }
    /* Integrity: the number of records before this one and the FNV-1a 64
     * digest of their bytes (newlines included), taken before the end
     * record's first byte; the pipeline's check refuses a file that differs. */
    char ferr[512] = "";
    const char *failed = hx_exec_finish(x, ferr, sizeof ferr);
    report_end(x, rep, &rs, failed);
    if (failed) {
        snprintf(err, errlen, "%s", ferr);
        return 7;
    }
    if (rc == 6)
        snprintf(err, errlen,
                 "preempted: another client of the NPU asked for its resources back during %s; they were "
                 "released at the trial boundary and the run ended there (see the end record's preemption)",
                 rs.preempted_trial < 0 ? "the verification round" : "a trial (marked preempted)");
    return rc ? rc : rs.mismatches ? 4 : 0;
}
