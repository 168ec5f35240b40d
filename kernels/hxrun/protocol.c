#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "npy.h"
#include "protocol.h"
#include "record.h"
#include "rng.h"

/* One warning of the meta record: a stable code for programs and a text for
 * people (docs/runner.md, `warnings` and `warning_codes`).  Five conditions
 * can warn (write_warnings); the bound leaves room for more. */
typedef struct {
    const char *code, *text;
} hx_warning;
#define HX_MAX_WARNINGS 8

#ifndef HX_COMPILER
#define HX_COMPILER "unknown"
#endif
/* What group B means on this target (what B maps to, or the specific
 * limitation), recorded in every run.  Target files may override it. */
#ifndef HX_GROUP_B
#define HX_GROUP_B                                                                                                     \
    "one request per task, pushed at once to each task's own engine queue (mx, vec, dma); the host waits for all"
#endif
#ifndef HX_CFLAGS
#define HX_CFLAGS "unknown"
#endif

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

/* The meta record's warnings: `warnings` keeps its texts (readers of schema 2
 * use it) and `warning_codes`, a parallel list of the same length, gives each
 * one a stable code (docs/runner.md).  Programs key on the code; the text may
 * be reworded. */
static void write_warnings(hx_json *j, const hx_config *c, int used, int cores) {
    hx_warning warn[HX_MAX_WARNINGS];
    int nw = 0;
    char w_engines[200], w_antagonists[200];
    if (used > cores) {
        snprintf(w_engines, sizeof w_engines,
                 "%d device engines run on %d %s: engines time-share them, so overlap is bounded by the %s, not "
                 "the engines",
                 used, cores, hx_cores_words(), hx_cores_words());
        warn[nw++] = (hx_warning){"engines_exceed_cores", w_engines};
    }
    if (c->wait.strategy == HX_WAIT_SPIN && used + 1 > cores)
        warn[nw++] =
            (hx_warning){"spin_wait_oversubscribed",
                         "spin waits with more threads than cores: waiting threads steal cycles from working ones"};
    if (c->calibrate)
        warn[nw++] = (hx_warning){"calibration", "calibration run: tasks are busy-waits, outputs are not checked"};
    if (c->antagonists && used + c->antagonists > cores) {
        snprintf(w_antagonists, sizeof w_antagonists,
                 "%d antagonist thread(s) and %d device engines on %d online cores: the antagonists also "
                 "take CPU time from the engines, not only memory bandwidth",
                 c->antagonists, used, cores);
        warn[nw++] = (hx_warning){"antagonists_share_cores", w_antagonists};
    }
    if (c->host_pin_refused)
        warn[nw++] =
            (hx_warning){"host_unpinned", "--affinity spread: the platform refused to pin the host thread; it floats"};
    hx_json_arr(j, "warnings");
    for (int i = 0; i < nw; i++) hx_json_str(j, NULL, warn[i].text);
    hx_json_close(j, ']');
    hx_json_arr(j, "warning_codes");
    for (int i = 0; i < nw; i++) hx_json_str(j, NULL, warn[i].code);
    hx_json_close(j, ']');
}

static const char *precision_name(const hx_config *c) { return c->precision == HX_FP32 ? "fp32" : "u8i8"; }
static const char *wait_name(const hx_config *c) { return c->wait.strategy == HX_WAIT_SPIN ? "spin" : "spin-block"; }
static const char *v_release_name(const hx_config *c) {
    return c->v_release == HX_V_RELEASE_AT_COMPLETION ? "at-completion" : "at-entry-end";
}

static void write_window(hx_json *j, const hx_config *c) {
    if (c->window) hx_json_i64(j, "window", c->window);
    else hx_json_str(j, "window", "all");
}

static void write_workloads(hx_json *j, const char *key, const hx_config *c) {
    hx_json_arr(j, key);
    for (int w = 0; w < c->nworkloads; w++) hx_json_str(j, NULL, hx_workload_name(c->workloads[w]));
    hx_json_close(j, ']');
}

/* The build and the machine, and how busy it was before the point. */
static void write_machine(hx_json *j, const hx_exec *x, int cores) {
    char model[256], gov[64];
    hx_cpu_model(model, sizeof model);
    hx_cpu_governor(gov, sizeof gov);
    hx_json_str(j, "target", hx_platform_name());
    hx_record_emulated(j);
    hx_json_str(j, "kernels", x->kern->name);
    /* how a build with several kernel variants chose this one */
    if (x->kern->choice) hx_json_str(j, "kernels_choice", x->kern->choice);
    hx_json_str(j, "compiler", HX_COMPILER);
    hx_json_str(j, "compiler_version", __VERSION__);
    hx_json_str(j, "cflags", HX_CFLAGS);
    hx_json_str(j, "cpu_model", model);
    /* On the cDSP the count is of hardware threads: named so, never cores. */
    if (strcmp(hx_cores_key(), "online_cores") != 0) hx_json_null(j, "online_cores");
    hx_json_i64(j, hx_cores_key(), cores);
    hx_json_str(j, "cpu_governor", gov);
    /* Load before the point: a loaded machine is warned about in the summary;
     * the engines are idle now, whatever keeps cores busy is someone else. */
    hx_record_before(j);
}

/* Every placeable thread of this run, in the order the timelines draw them. */
static void write_engines(hx_json *j, const hx_exec *x) {
    char nbuf[16];
    hx_json_arr(j, "engines");
    hx_json_str(j, NULL, "host");
    hx_json_str(j, NULL, "vec");
    for (int i = 0; i < x->nvworkers; i++) hx_json_str(j, NULL, x->vworker[i].name);
    hx_json_str(j, NULL, "mx");
    hx_json_str(j, NULL, "dma");
    for (int i = 0; i < x->cfg->antagonists; i++) hx_json_str(j, NULL, hx_placed_name(HX_ENG_BW(i), nbuf, sizeof nbuf));
    hx_json_close(j, ']');
}

/* What each group means on this backend, in words a reader of the raw file needs. */
static void write_group_mapping(hx_json *j, const hx_config *c) {
    hx_json_obj(j, "group_mapping");
    hx_json_str(j, "A",
                "one request per task on its engine's queue, the host waits before the next (fixed order M, D, V)");
    hx_json_str(j, "B", HX_GROUP_B);
    hx_json_str(j, "C", "one fused request to the vec control thread; full barrier after each task");
    if (c->window) {
        char d[200];
        snprintf(d, sizeof d,
                 "the same fused request with the barrier off: M and D launched async, V run inline; "
                 "at most %d of its tasks in flight (--window)",
                 c->window);
        hx_json_str(j, "D", d);
    } else {
        hx_json_str(j, "D", "the same fused request with the barrier off: M and D launched async, V run inline");
    }
    hx_json_close(j, '}');
}

/* The core each thread was pinned to (-1: it floats). */
static void write_affinity(hx_json *j, const hx_exec *x) {
    const hx_config *c = x->cfg;
    char nbuf[16];
    hx_json_obj(j, "affinity");
    for (int i = 0; i < HX_NENG_NAMED + x->nvworkers; i++)
        hx_json_i64(j, hx_placed_name(i, nbuf, sizeof nbuf), c->affinity[i]);
    for (int i = 0; i < c->antagonists; i++)
        hx_json_i64(j, hx_placed_name(HX_ENG_BW(i), nbuf, sizeof nbuf), c->affinity[HX_ENG_BW(i)]);
    hx_json_close(j, '}');
}

/* The records' clock: the executor's (hx_exec_now; hxrun-ap's is the AP's
 * counter, not the platform's hx_now_ns). */
static void write_clock(hx_json *j, const hx_exec *x) {
    hx_json_obj(j, "clock");
    hx_json_str(j, "source", hx_exec_clock_source());
    hx_json_u64(j, "resolution_ns", hx_exec_clock_resolution_ns());
    hx_json_u64(j, "read_overhead_ns", clock_read_overhead_ns(x));
    /* the core clock CPU times rest on (null where nothing is calibrated);
     * measured again after the last trial: end.clock_drift */
    double cal = hx_clock_calibration_start();
    if (cal > 0) hx_json_f64(j, "core_cycles_per_us", cal);
    else hx_json_null(j, "core_cycles_per_us");
    hx_json_close(j, '}');
}

/* The command line as parsed, defaults filled in: enough to rerun the point. */
static void write_args(hx_json *j, const hx_config *c) {
    hx_json_obj(j, "args");
    hx_json_str(j, "out", c->out_path);
    hx_json_str(j, "npy_dir", c->npy_dir);
    write_workloads(j, "workloads", c);
    hx_json_str(j, "precision", precision_name(c));
    hx_json_i64(j, "m", c->m), hx_json_i64(j, "n", c->n), hx_json_i64(j, "k", c->k);
    hx_json_i64(j, "m_tile", c->m_tile);
    hx_json_i64(j, "checkpoints", c->checkpoints);
    hx_json_str(j, "v_variant", hx_v_variant_names[c->v_variant]);
    hx_json_str(j, "v_release", v_release_name(c));
    write_window(j, c);
    hx_json_i64(j, "v_rows", c->v_rows), hx_json_i64(j, "v_cols", c->v_cols);
    hx_json_i64(j, "v_passes", c->v_passes), hx_json_i64(j, "v_workers", c->v_workers);
    hx_json_i64(j, "d_rows", c->d_rows), hx_json_i64(j, "d_row_bytes", c->d_row_bytes);
    hx_json_i64(j, "d_src_stride", c->d_src_stride), hx_json_i64(j, "d_desc_rows", c->d_desc_rows);
    hx_json_i64(j, "d_repeat", c->d_repeat);
    hx_json_i64(j, "d_buffers", c->d_buffers);
    hx_json_u64(j, "scratch_bytes", c->scratch_bytes);
    hx_json_i64(j, "antagonist", c->antagonists);
    hx_json_u64(j, "antagonist_bytes", c->antagonist_bytes);
    hx_json_i64(j, "warmup", c->warmup), hx_json_i64(j, "rounds", c->rounds);
    hx_json_u64(j, "seed", c->seed);
    hx_json_str(j, "wait", wait_name(c));
    hx_json_u64(j, "spin_ns", c->wait.spin_ns);
    hx_json_bool(j, "early_completion", c->early_completion);
    hx_json_str(j, "affinity", c->affinity_spec);
    hx_json_bool(j, "check_at_publish", c->check_at_publish);
    hx_json_arr(j, "groups");
    for (int g = 0; g < HX_NGROUPS; g++)
        if (c->groups & HX_BIT(g)) hx_json_str(j, NULL, hx_group_names[g]);
    hx_json_close(j, ']');
    hx_json_close(j, '}');
}

/* Each task's work as it was prepared: shapes, bytes, flops, layout. */
static void write_tasks(hx_json *j, const hx_exec *x) {
    const hx_config *c = x->cfg;
    size_t ve = hx_elem_bytes_v(c), vab = (size_t)c->v_rows * c->v_cols * ve;
    uint64_t me = c->precision == HX_FP32 ? 4 : 1;
    hx_json_obj(j, "tasks");
    hx_json_obj(j, "M");
    hx_json_str(j, "precision", precision_name(c));
    hx_json_i64(j, "m", c->m), hx_json_i64(j, "n", c->n), hx_json_i64(j, "k", c->k);
    hx_json_u64(j, "flops", 2ull * c->m * c->n * c->k);
    /* logical operand bytes; the prepared layout's own size (padding, widening) is prep_bytes */
    hx_json_u64(j, "bytes_in", (uint64_t)c->m * c->k * me + (uint64_t)c->k * c->n * me);
    hx_json_u64(j, "prep_bytes", x->m.prep_bytes);
    hx_json_u64(j, "bytes_out", (uint64_t)c->m * c->n * 4);
    hx_json_u64(j, "prep_ns", x->m.prep_ns);
    /* the k-block the GEMM ran with (the backend's fixed blocking is reported as the default) */
    hx_json_i64(j, "tile_k", c->m_tile);
    hx_json_close(j, '}');
    hx_json_obj(j, "V");
    hx_json_str(j, "precision", c->precision == HX_FP32 ? "fp32" : "i16");
    hx_json_str(j, "activation",
                c->precision != HX_FP32       ? "hardswish_q13"
                : c->v_variant == HX_V_STREAM ? "hardswish"
                                              : "silu");
    if (c->precision == HX_FP32 && c->v_variant == HX_V_STREAM)
        hx_json_str(j, "kernel", x->v.stream_is_ref ? "reference (the backend has no stream kernel)" : x->kern->name);
    hx_json_str(j, "variant", hx_v_variant_names[c->v_variant]);
    hx_json_i64(j, "rows", c->v_rows), hx_json_i64(j, "cols", c->v_cols);
    hx_json_i64(j, "passes", c->v_passes), hx_json_i64(j, "workers", c->v_workers);
    hx_json_u64(j, "bytes_in", vab);
    hx_json_u64(j, "bytes_out", vab + (uint64_t)c->v_rows * (4 + ve));
    hx_json_bool(j, "in_scratch", x->v.in_scratch);
    hx_json_close(j, '}');
    hx_json_obj(j, "D");
    hx_json_i64(j, "rows", c->d_rows), hx_json_i64(j, "row_bytes", c->d_row_bytes);
    hx_json_i64(j, "src_stride", c->d_src_stride), hx_json_i64(j, "dst_stride", x->d.dst_stride);
    hx_json_i64(j, "descriptors", x->d.ndesc);
    hx_json_i64(j, "repeat", c->d_repeat);
    hx_json_u64(j, "window_bytes", x->d.dst_bytes);
    hx_json_i64(j, "buffers", c->d_buffers);
    /* bytes moved per run: every window, read from DDR and written to scratch once */
    hx_json_u64(j, "bytes", x->d.dst_bytes * (uint64_t)c->d_repeat);
    hx_json_close(j, '}');
    hx_json_close(j, '}');
}

/* The scratch arena's plan: capacity, where it lives, what each task reserves. */
static void write_scratch(hx_json *j, const hx_exec *x) {
    hx_json_obj(j, "scratch");
    hx_json_u64(j, "capacity", x->arena.capacity);
    hx_json_bool(j, "on_chip", x->arena.on_chip);
    /* per task; D's includes its second window when double-buffered */
    hx_json_obj(j, "reserved");
    for (int i = 0; i < HX_NTASKS; i++)
        hx_json_u64(j, hx_task_names[i], x->arena.slot_bytes[i] + (i == HX_D ? x->arena.slot_bytes[HX_SLOT_D2] : 0));
    hx_json_close(j, '}');
    hx_json_obj(j, "slots");
    for (int i = 0; i < HX_NSLOTS; i++) hx_json_u64(j, x->arena.slot_name[i], x->arena.slot_bytes[i]);
    hx_json_close(j, '}');
    hx_json_u64(j, "total", hx_arena_total(&x->arena));
    hx_json_close(j, '}');
}

/* The policies the trials ran under.  Some repeat a field of `args` on
 * purpose: `args` echoes the command line (to rerun the point), these are
 * what the analysis reads, one level up so that the ONNX Runtime harness can
 * write null where a policy has no meaning there. */
static void write_policy(hx_json *j, const hx_config *c) {
    if (c->calibrate) {
        hx_json_obj(j, "calibration");
        for (int i = 0; i < HX_NTASKS; i++) hx_json_f64(j, hx_task_names[i], c->calib_us[i]);
        hx_json_close(j, '}');
    } else {
        hx_json_null(j, "calibration");
    }
    hx_json_str(j, "wait", wait_name(c));
    hx_json_u64(j, "spin_ns", c->wait.spin_ns);
    hx_json_bool(j, "early_completion", c->early_completion);
    hx_json_str(j, "v_release", v_release_name(c));
    write_window(j, c);
    /* K: progress blocks per task (per V worker), each followed by a
     * checkpoint; 0: the tasks ran unblocked, with none */
    hx_json_i64(j, "checkpoints", c->checkpoints);
    if (c->antagonists) {
        hx_json_obj(j, "antagonist");
        hx_json_i64(j, "threads", c->antagonists);
        hx_json_u64(j, "buffer_bytes", c->antagonist_bytes);
        hx_json_str(j, "active", "every warm-up and measured trial; not the verification round");
        hx_json_close(j, '}');
    } else {
        hx_json_null(j, "antagonist");
    }
}

void hx_write_meta(hx_exec *x, FILE *out) {
    const hx_config *c = x->cfg;
    hx_json j;
    int cores = hx_online_cores();
    int used = engines_used(x);
    hx_json_begin(&j, out);
    hx_json_str(&j, "record", "meta");
    hx_json_i64(&j, "schema_version", 2);
    write_machine(&j, x, cores);
    write_engines(&j, x);
    write_group_mapping(&j, c);
    hx_json_i64(&j, "device_engines_used", used);
    write_affinity(&j, x);
    hx_json_bool(&j, "engines_exceed_cores", used > cores);
    write_clock(&j, x);
    hx_interf_write_meta(&j, &x->interf);
    hx_json_u64(&j, "epoch", x->epoch);
    write_args(&j, c);
    write_workloads(&j, "workloads", c);
    write_tasks(&j, x);
    write_scratch(&j, x);
    write_policy(&j, c);
    hx_json_obj(&j, "labels");
    for (int i = 0; i < c->nlabels; i++) hx_json_str(&j, c->label_key[i], c->label_val[i]);
    hx_json_close(&j, '}');
    write_warnings(&j, c, used, cores);
    hx_exec_write_device_meta(&j, x); /* a split executor: the DSP's side and the transport */
    hx_json_end(&j);
}

/* A core id, or null where the platform cannot tell (-1). */
static void cpu_id(hx_json *j, const char *key, int cpu) {
    if (cpu < 0) hx_json_null(j, key);
    else hx_json_i64(j, key, cpu);
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

/* CPU time, or null where the platform's per-thread counters do not advance
 * (a 0 would read as "no work done"); empty tasks measure nothing: 0. */
static void cpu_time(hx_json *j, const hx_exec *x, const char *key, uint64_t ns, int empty) {
    if (!empty && !hx_exec_thread_cpu_available(x)) hx_json_null(j, key);
    else hx_json_u64(j, key, ns);
}

/* A thread's progress checkpoints: the times, and the work done by each as
 * a fraction of the task's whole work (empty lists: no checkpoints). */
static void write_checkpoints(hx_json *j, const hx_worker_rec *r) {
    hx_json_arr(j, "checkpoints");
    for (int i = 0; i < r->nckpt; i++) hx_json_u64(j, NULL, r->ckpt[i]);
    hx_json_close(j, ']');
    hx_json_arr(j, "checkpoint_work");
    for (int i = 0; i < r->nckpt; i++)
        hx_json_f64(j, NULL, r->ckpt_total ? (double)r->ckpt_done[i] / (double)r->ckpt_total : 0.0);
    hx_json_close(j, ']');
}

/* One task's record in a trial; returns 0 when its checksum differs from
 * the verified one. */
static int write_task(hx_json *j, const hx_exec *x, int i, int empty, const uint64_t *verified) {
    const hx_task *t = &x->task[i];
    int ok = 1;
    hx_json_obj(j, NULL);
    hx_json_str(j, "task", hx_task_names[i]);
    hx_json_str(j, "engine", t->ran_on);
    hx_json_u64(j, "launch", t->launch);
    hx_json_u64(j, "begin", t->begin), hx_json_u64(j, "end", t->end);
    hx_json_u64(j, "host_seen", t->host_seen);
    cpu_time(j, x, "cpu_ns", t->cpu_ns, empty);
    cpu_id(j, "cpu_begin", t->cpu_begin), cpu_id(j, "cpu_end", t->cpu_end);
    /* null: not measured (empty task) or the platform cannot count them */
    if (t->switches < 0) hx_json_null(j, "involuntary_switches");
    else hx_json_i64(j, "involuntary_switches", t->switches);
    hx_json_arr(j, "workers");
    for (int w = 0; w < t->nworkers; w++) {
        const hx_worker_rec *r = &t->workers[w];
        hx_json_obj(j, NULL);
        hx_json_str(j, "engine", r->engine);
        hx_json_u64(j, "begin", r->begin), hx_json_u64(j, "end", r->end);
        cpu_time(j, x, "cpu_ns", r->cpu_ns, empty);
        cpu_id(j, "cpu_begin", r->cpu_begin), cpu_id(j, "cpu_end", r->cpu_end);
        write_checkpoints(j, r);
        hx_json_close(j, '}');
    }
    hx_json_close(j, ']');
    if (has_output_check(x, empty)) {
        uint64_t cs = x->cfg->check_at_publish ? t->checksum_at_publish : hx_task_checksum(t);
        hx_json_hex64(j, "checksum", cs);
        if (cs != verified[i]) ok = 0;
    } else {
        hx_json_null(j, "checksum");
    }
    hx_json_close(j, '}');
    return ok;
}

/* The interference samples taken just before and just after the trial's
 * timed interval (hx_interf_read). */
typedef struct trial_samples {
    hx_interf_sample before, after;
} trial_samples;

static void write_trial(hx_exec *x, FILE *out, int64_t round, int seq, const trial_kind *k, const hx_host_times *h,
                        const trial_samples *ts, const uint64_t *verified, int *mismatches, int preempted) {
    hx_json j;
    int ok = 1;
    hx_json_begin(&j, out);
    hx_json_str(&j, "record", "trial");
    hx_json_i64(&j, "round", round);
    hx_json_i64(&j, "seq", seq);
    hx_json_bool(&j, "warmup", round < 0);
    hx_json_str(&j, "workload",
                k->group == HX_G_ALONE ? hx_task_names[__builtin_ctz(k->mask)] : hx_workload_name(k->mask));
    hx_json_str(&j, "group", hx_group_names[k->group]);
    hx_json_bool(&j, "empty", k->empty);
    hx_json_obj(&j, "host");
    hx_json_u64(&j, "submit_begin", h->submit_begin), hx_json_u64(&j, "submit_end", h->submit_end);
    hx_json_u64(&j, "wait_begin", h->wait_begin), hx_json_u64(&j, "wait_end", h->wait_end);
    hx_json_u64(&j, "submit_ns", h->submit_ns), hx_json_u64(&j, "wait_ns", h->wait_ns);
    hx_json_i64(&j, "requests", h->requests);
    hx_json_arr(&j, "submits");
    for (int i = 0; i < h->requests; i++) hx_json_u64(&j, NULL, h->submits[i]);
    hx_json_close(&j, ']');
    cpu_id(&j, "cpu", h->cpu);
    hx_json_close(&j, '}');
    if (k->group == HX_G_C || k->group == HX_G_D) {
        hx_json_obj(&j, "device");
        hx_json_u64(&j, "entry_begin", x->fused.entry_begin), hx_json_u64(&j, "entry_end", x->fused.entry_end);
        hx_json_close(&j, '}');
    } else {
        hx_json_null(&j, "device");
    }
    hx_json_arr(&j, "tasks");
    for (int i = 0; i < HX_NTASKS; i++)
        if ((k->mask & HX_BIT(i)) && !write_task(&j, x, i, k->empty, verified)) ok = 0;
    hx_json_close(&j, ']');
    hx_json_arr(&j, "waits");
    uint32_t nw = x->nwaits < HX_MAX_WAITS ? x->nwaits : HX_MAX_WAITS;
    for (uint32_t i = 0; i < nw; i++) {
        hx_json_obj(&j, NULL);
        hx_json_str(&j, "who", x->waits[i].who), hx_json_str(&j, "on", x->waits[i].on);
        hx_json_u64(&j, "begin", x->waits[i].begin), hx_json_u64(&j, "end", x->waits[i].end);
        hx_json_close(&j, '}');
    }
    hx_json_close(&j, ']');
    hx_json_u64(&j, "scratch_peak_bytes", hx_arena_peak(&x->arena));
    hx_json_u64(&j, "makespan_ns", h->wait_end - h->submit_begin);
    hx_interf_write_trial(&j, &ts->before, &ts->after);
    hx_json_bool(&j, "checksums_ok", ok);
    /* another client asked for the NPU's resources during this trial: a
     * contender may be in its timings (the analysis leaves it out) */
    hx_json_bool(&j, "preempted", preempted);
    hx_json_end(&j);
    if (!ok) (*mismatches)++;
}

static void poison(hx_exec *x, uint32_t mask) {
    for (int i = 0; i < HX_NTASKS; i++)
        if (mask & HX_BIT(i)) hx_task_poison(&x->task[i]);
}

/* Writes the inputs and outputs of the tasks in `mask` to <npy_dir>/<workload>/
 * and lists them (relative to npy_dir) in the open JSON object `files`. */
static int dump_npy(hx_exec *x, uint32_t mask, hx_json *j, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    char dir[1024], path[1200], rel[128];
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
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (!(mask & HX_BIT(files[i].task))) continue;
        size_t n = files[i].shape[0] * (files[i].ndim == 2 ? files[i].shape[1] : 1);
        snprintf(path, sizeof path, "%s/%s.npy", dir, files[i].name);
        if (hx_npy_write(path, files[i].dtype, files[i].ndim, files[i].shape, files[i].data, n * files[i].elem)) {
            snprintf(err, errlen, "cannot write %s", path);
            return -1;
        }
        snprintf(rel, sizeof rel, "%s/%s.npy", wl, files[i].name);
        hx_json_str(j, files[i].name, rel);
    }
    return 0;
}

/* Verification round: every workload once in group D; its checksums become
 * the reference every later trial is compared against, and its inputs and
 * outputs go to .npy for the numpy check. */
static int verify(hx_exec *x, FILE *out, uint64_t *verified, int *mismatches, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    int have[HX_NTASKS] = {0};
    for (int w = 0; w < c->nworkloads; w++) {
        uint32_t mask = c->workloads[w];
        hx_host_times h;
        poison(x, mask);
        if (hx_run_group(x, HX_G_D, mask, 0, &h, err, errlen)) return -1;
        hx_json j;
        hx_json_begin(&j, out);
        hx_json_str(&j, "record", "verify");
        hx_json_str(&j, "workload", hx_workload_name(mask));
        hx_json_str(&j, "group", "D");
        hx_json_obj(&j, "checksums");
        for (int i = 0; i < HX_NTASKS; i++) {
            if (!(mask & HX_BIT(i))) continue;
            if (c->calibrate) {
                hx_json_null(&j, hx_task_names[i]);
                continue;
            }
            uint64_t cs = hx_task_checksum(&x->task[i]);
            hx_json_hex64(&j, hx_task_names[i], cs);
            if (!have[i]) verified[i] = cs, have[i] = 1;
            else if (verified[i] != cs) (*mismatches)++; /* same task, same inputs: must agree */
        }
        hx_json_close(&j, '}');
        if (c->npy_dir && !c->calibrate) {
            if (hx_exec_fetch_data(x, mask, err, errlen)) return -1;
            hx_json_obj(&j, "files");
            int rc = dump_npy(x, mask, &j, err, errlen);
            hx_json_close(&j, '}');
            if (rc) return -1;
        }
        hx_json_end(&j);
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

static void write_preemption(hx_json *j, const run_state *rs) {
    if (!rs->asked_ns) {
        hx_json_null(j, "preemption");
        return;
    }
    uint64_t lat = rs->released_ns > rs->asked_ns ? rs->released_ns - rs->asked_ns : 0;
    hx_json_obj(j, "preemption");
    hx_json_str(j, "what",
                "another client of the NPU asked for its resources back: they were released at the next trial "
                "boundary and the run ended there");
    if (rs->preempted_trial < 0) hx_json_null(j, "trial"), hx_json_null(j, "round");
    else hx_json_i64(j, "trial", rs->preempted_trial), hx_json_i64(j, "round", rs->preempted_round);
    hx_json_u64(j, "asked_ns", rs->asked_ns), hx_json_u64(j, "released_ns", rs->released_ns);
    hx_json_u64(j, "release_latency_ns", lat);
    hx_json_u64(j, "release_bound_ns", HX_RELEASE_BOUND_NS);
    hx_json_bool(j, "within_bound", lat <= HX_RELEASE_BOUND_NS);
    hx_json_close(j, '}');
}

/* The end record: counts, outliers, what the antagonists applied, the
 * load after the run and the platform's resources. */
static void write_end(hx_exec *x, FILE *out, const run_state *rs, const char *failed) {
    const hx_config *c = x->cfg;
    hx_json j;
    hx_record_end_begin(&j, out,
                        failed           ? failed
                        : rs->asked_ns   ? "preempted"
                        : rs->mismatches ? "checksum_mismatch"
                                         : "ok");
    hx_json_i64(&j, "trials", rs->trials);
    hx_json_i64(&j, "checksum_mismatches", rs->mismatches);
    /* measured trials with any single submit above the threshold */
    hx_json_i64(&j, "submit_outliers", rs->outliers);
    hx_json_obj(&j, "submit_outliers_by_group");
    for (int g = 0; g <= HX_NGROUPS; g++)
        if (g == HX_G_ALONE || (c->groups & HX_BIT(g))) hx_json_i64(&j, hx_group_names[g], rs->outliers_by[g]);
    hx_json_close(&j, '}');
    hx_json_i64(&j, "b_handover_outliers", rs->handover);
    hx_json_u64(&j, "submit_outlier_ns", HX_SUBMIT_OUTLIER_NS);
    hx_json_u64(&j, "wall_ns", hx_now_ns() - rs->t0);
    write_preemption(&j, rs);
    /* the clock again, after the last trial: throttling during the run */
    hx_exec_write_clock_drift(&j, x);
    if (x->bw.n) {
        /* what the antagonists applied: bytes read while active, and the rate */
        uint64_t bytes = hx_antagonists_bytes(&x->bw);
        hx_json_u64(&j, "antagonist_bytes", bytes);
        hx_json_u64(&j, "antagonist_active_ns", x->bw.active_ns);
        hx_json_f64(&j, "antagonist_bytes_per_s", x->bw.active_ns ? bytes * 1e9 / (double)x->bw.active_ns : 0.0);
    }
    hx_record_after(&j);
    hx_exec_write_resources(&j, x); /* what the run really held and used */
    hx_json_end(&j);
}

/* Every warm-up and measured round; returns 0, 1 on an error (err), or 6
 * when a release request ended the run at a trial boundary. */
static int run_rounds(hx_exec *x, FILE *out, run_state *rs, char *err, size_t errlen) {
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
            int preempted = release_at_boundary(rs);
            if (preempted) rs->preempted_trial = index, rs->preempted_round = r;
            write_trial(x, out, r, i, &order[i], &h, &ts, rs->verified, &rs->mismatches, preempted);
            rs->trials++;
            if (r >= 0 && submit_outlier(&h)) rs->outliers++, rs->outliers_by[order[i].group]++;
            if (r >= 0 && order[i].group == HX_G_B) rs->handover += handover_outlier(x, order[i].mask);
            if (preempted) return 6;
        }
    }
    return 0;
}

int hx_protocol_run(hx_exec *x, FILE *out, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    static run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.t0 = hx_now_ns();
    rs.preempted_trial = rs.preempted_round = -1;
    /* here, not at set-up: main has pinned the host (or left it floating) by now */
    hx_interf_init(&x->interf, c, x->nvworkers, x->allowed, x->nallowed);
    hx_write_meta(x, out);
    if (verify(x, out, rs.verified, &rs.mismatches, err, errlen)) return 1;
    int rc = 0;
    if (release_at_boundary(&rs)) {
        rc = 6; /* asked during the verification round: no trial ran */
    } else {
        /* Antagonists stream through every warm-up and measured round (warm-up
         * sees the conditions it warms up for), not through the verification. */
        hx_antagonists_set_active(&x->bw, 1);
        rc = run_rounds(x, out, &rs, err, errlen);
        hx_antagonists_set_active(&x->bw, 0);
        if (rc == 1) return 1;
    }
    /* Integrity: the number of records before this one and the FNV-1a 64
     * digest of their bytes (newlines included), taken before the end
     * record's first byte; the pipeline's check refuses a file that differs. */
    char ferr[512] = "";
    const char *failed = hx_exec_finish(x, ferr, sizeof ferr);
    write_end(x, out, &rs, failed);
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
