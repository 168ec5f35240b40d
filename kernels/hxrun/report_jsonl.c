/* The JSON Lines reporter (report.h): every record of hxrun's and hxrun-ap's
 * protocol, from the structs protocol.c fills (docs/runner.md describes the
 * records).  Nothing here measures or decides: a value a record carries is
 * the protocol's, the executor's or the configuration's. */
#include <string.h>
#include "json.h"
#include "platform.h"
#include "record.h"
#include "report.h"

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

/* ---- meta ---- */

/* The meta record's warnings: `warnings` keeps its texts (readers of schema 2
 * use it) and `warning_codes`, a parallel list of the same length, gives each
 * one a stable code (docs/runner.md).  Programs key on the code; the text may
 * be reworded. */
static void write_warnings(hx_json *j, const hx_meta_facts *m) {
    hx_json_arr(j, "warnings");
    for (int i = 0; i < m->nwarnings; i++) hx_json_str(j, NULL, m->warnings[i].text);
    hx_json_close(j, ']');
    hx_json_arr(j, "warning_codes");
    for (int i = 0; i < m->nwarnings; i++) hx_json_str(j, NULL, m->warnings[i].code);
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
static void write_clock(hx_json *j, const hx_meta_facts *m) {
    hx_json_obj(j, "clock");
    hx_json_str(j, "source", hx_exec_clock_source());
    hx_json_u64(j, "resolution_ns", hx_exec_clock_resolution_ns());
    hx_json_u64(j, "read_overhead_ns", m->clock_overhead_ns);
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

/* meta.interference: the cores, the source, its resolution and the cost of one reading. */
static void write_interference_meta(hx_json *j, const hx_interf *p) {
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

static void jsonl_meta(hx_reporter *r, const hx_exec *x, const hx_meta_facts *m) {
    const hx_config *c = x->cfg;
    hx_json j;
    hx_json_begin(&j, r->out);
    hx_json_str(&j, "record", "meta");
    hx_json_i64(&j, "schema_version", 2);
    write_machine(&j, x, m->cores);
    write_engines(&j, x);
    write_group_mapping(&j, c);
    hx_json_i64(&j, "device_engines_used", m->engines_used);
    write_affinity(&j, x);
    hx_json_bool(&j, "engines_exceed_cores", m->engines_used > m->cores);
    write_clock(&j, m);
    write_interference_meta(&j, &x->interf);
    hx_json_u64(&j, "epoch", x->epoch);
    write_args(&j, c);
    write_workloads(&j, "workloads", c);
    write_tasks(&j, x);
    write_scratch(&j, x);
    write_policy(&j, c);
    hx_json_obj(&j, "labels");
    for (int i = 0; i < c->nlabels; i++) hx_json_str(&j, c->label_key[i], c->label_val[i]);
    hx_json_close(&j, '}');
    write_warnings(&j, m);
    hx_exec_write_device_meta(&j, x); /* a split executor: the DSP's side and the transport */
    hx_json_end(&j);
}

/* ---- verify ---- */

static void jsonl_verify(hx_reporter *r, const hx_exec *x, const hx_verify_result *v) {
    (void)x;
    hx_json j;
    hx_json_begin(&j, r->out);
    hx_json_str(&j, "record", "verify");
    hx_json_str(&j, "workload", hx_workload_name(v->mask));
    hx_json_str(&j, "group", "D");
    hx_json_obj(&j, "checksums");
    for (int i = 0; i < HX_NTASKS; i++) {
        if (!(v->mask & HX_BIT(i))) continue;
        if (v->checked) hx_json_hex64(&j, hx_task_names[i], v->checksum[i]);
        else hx_json_null(&j, hx_task_names[i]);
    }
    hx_json_close(&j, '}');
    if (v->dumped) {
        hx_json_obj(&j, "files");
        for (int i = 0; i < v->nfiles; i++) hx_json_str(&j, v->files[i].name, v->files[i].rel);
        hx_json_close(&j, '}');
    }
    hx_json_end(&j);
}

/* ---- trial ---- */

/* A core id, or null where the platform cannot tell (-1). */
static void cpu_id(hx_json *j, const char *key, int cpu) {
    if (cpu < 0) hx_json_null(j, key);
    else hx_json_i64(j, key, cpu);
}

/* CPU time, or null where the platform's per-thread counters do not advance
 * (a 0 would read as "no work done"); empty tasks measure nothing: 0. */
static void cpu_time(hx_json *j, const hx_trial_result *t, const char *key, uint64_t ns) {
    if (t->cpu_unknown) hx_json_null(j, key);
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

/* One task's record in a trial. */
static void write_task(hx_json *j, const hx_trial_result *tr, int i) {
    const hx_task *t = &tr->tasks[i];
    hx_json_obj(j, NULL);
    hx_json_str(j, "task", hx_task_names[i]);
    hx_json_str(j, "engine", t->ran_on);
    hx_json_u64(j, "launch", t->launch);
    hx_json_u64(j, "begin", t->begin), hx_json_u64(j, "end", t->end);
    hx_json_u64(j, "host_seen", t->host_seen);
    cpu_time(j, tr, "cpu_ns", t->cpu_ns);
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
        cpu_time(j, tr, "cpu_ns", r->cpu_ns);
        cpu_id(j, "cpu_begin", r->cpu_begin), cpu_id(j, "cpu_end", r->cpu_end);
        write_checkpoints(j, r);
        hx_json_close(j, '}');
    }
    hx_json_close(j, ']');
    if (tr->checked) hx_json_hex64(j, "checksum", tr->checksum[i]);
    else hx_json_null(j, "checksum");
    hx_json_close(j, '}');
}

static void write_host(hx_json *j, const hx_host_times *h) {
    hx_json_obj(j, "host");
    hx_json_u64(j, "submit_begin", h->submit_begin), hx_json_u64(j, "submit_end", h->submit_end);
    hx_json_u64(j, "wait_begin", h->wait_begin), hx_json_u64(j, "wait_end", h->wait_end);
    hx_json_u64(j, "submit_ns", h->submit_ns), hx_json_u64(j, "wait_ns", h->wait_ns);
    hx_json_i64(j, "requests", h->requests);
    hx_json_arr(j, "submits");
    for (int i = 0; i < h->requests; i++) hx_json_u64(j, NULL, h->submits[i]);
    hx_json_close(j, ']');
    cpu_id(j, "cpu", h->cpu);
    hx_json_close(j, '}');
}

static void delta(hx_json *j, const char *key, int64_t a, int64_t b) {
    if (a < 0 || b < 0) hx_json_null(j, key);
    else hx_json_i64(j, key, b - a);
}

/* trial.interference: the deltas between the two readings. */
static void write_interference(hx_json *j, const hx_interf_sample *a, const hx_interf_sample *b) {
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

static void jsonl_trial(hx_reporter *r, const hx_exec *x, const hx_trial_result *t) {
    (void)x;
    hx_json j;
    hx_json_begin(&j, r->out);
    hx_json_str(&j, "record", "trial");
    hx_json_i64(&j, "round", t->round);
    hx_json_i64(&j, "seq", t->seq);
    hx_json_bool(&j, "warmup", t->round < 0);
    hx_json_str(&j, "workload",
                t->group == HX_G_ALONE ? hx_task_names[__builtin_ctz(t->mask)] : hx_workload_name(t->mask));
    hx_json_str(&j, "group", hx_group_names[t->group]);
    hx_json_bool(&j, "empty", t->empty);
    write_host(&j, t->host);
    if (t->group == HX_G_C || t->group == HX_G_D) {
        hx_json_obj(&j, "device");
        hx_json_u64(&j, "entry_begin", t->entry_begin), hx_json_u64(&j, "entry_end", t->entry_end);
        hx_json_close(&j, '}');
    } else {
        hx_json_null(&j, "device");
    }
    hx_json_arr(&j, "tasks");
    for (int i = 0; i < HX_NTASKS; i++)
        if (t->mask & HX_BIT(i)) write_task(&j, t, i);
    hx_json_close(&j, ']');
    hx_json_arr(&j, "waits");
    for (uint32_t i = 0; i < t->nwaits; i++) {
        hx_json_obj(&j, NULL);
        hx_json_str(&j, "who", t->waits[i].who), hx_json_str(&j, "on", t->waits[i].on);
        hx_json_u64(&j, "begin", t->waits[i].begin), hx_json_u64(&j, "end", t->waits[i].end);
        hx_json_close(&j, '}');
    }
    hx_json_close(&j, ']');
    hx_json_u64(&j, "scratch_peak_bytes", t->scratch_peak_bytes);
    hx_json_u64(&j, "makespan_ns", t->makespan_ns);
    write_interference(&j, &t->before, &t->after);
    hx_json_bool(&j, "checksums_ok", t->checksums_ok);
    /* another client asked for the NPU's resources during this trial: a
     * contender may be in its timings (the analysis leaves it out) */
    hx_json_bool(&j, "preempted", t->preempted);
    hx_json_end(&j);
}

/* ---- end ---- */

static void write_preemption(hx_json *j, const hx_end_result *e) {
    if (!e->asked_ns) {
        hx_json_null(j, "preemption");
        return;
    }
    uint64_t lat = e->released_ns > e->asked_ns ? e->released_ns - e->asked_ns : 0;
    hx_json_obj(j, "preemption");
    hx_json_str(j, "what",
                "another client of the NPU asked for its resources back: they were released at the next trial "
                "boundary and the run ended there");
    if (e->preempted_trial < 0) hx_json_null(j, "trial"), hx_json_null(j, "round");
    else hx_json_i64(j, "trial", e->preempted_trial), hx_json_i64(j, "round", e->preempted_round);
    hx_json_u64(j, "asked_ns", e->asked_ns), hx_json_u64(j, "released_ns", e->released_ns);
    hx_json_u64(j, "release_latency_ns", lat);
    hx_json_u64(j, "release_bound_ns", e->release_bound_ns);
    hx_json_bool(j, "within_bound", lat <= e->release_bound_ns);
    hx_json_close(j, '}');
}

/* The end record: counts, outliers, what the antagonists applied, the
 * load after the run and the platform's resources. */
static void jsonl_end(hx_reporter *r, hx_exec *x, const hx_end_result *e) {
    const hx_config *c = x->cfg;
    hx_json j;
    hx_record_end_begin(&j, r->out, e->status);
    hx_json_i64(&j, "trials", e->trials);
    hx_json_i64(&j, "checksum_mismatches", e->mismatches);
    /* measured trials with any single submit above the threshold */
    hx_json_i64(&j, "submit_outliers", e->outliers);
    hx_json_obj(&j, "submit_outliers_by_group");
    for (int g = 0; g <= HX_NGROUPS; g++)
        if (g == HX_G_ALONE || (c->groups & HX_BIT(g))) hx_json_i64(&j, hx_group_names[g], e->outliers_by[g]);
    hx_json_close(&j, '}');
    hx_json_i64(&j, "b_handover_outliers", e->handover);
    hx_json_u64(&j, "submit_outlier_ns", e->submit_outlier_ns);
    hx_json_u64(&j, "wall_ns", e->wall_ns);
    write_preemption(&j, e);
    /* the clock again, after the last trial: throttling during the run */
    hx_exec_write_clock_drift(&j, x);
    if (e->antagonists) {
        /* what the antagonists applied: bytes read while active, and the rate */
        hx_json_u64(&j, "antagonist_bytes", e->antagonist_bytes);
        hx_json_u64(&j, "antagonist_active_ns", e->antagonist_active_ns);
        hx_json_f64(&j, "antagonist_bytes_per_s",
                    e->antagonist_active_ns ? e->antagonist_bytes * 1e9 / (double)e->antagonist_active_ns : 0.0);
    }
    hx_record_after(&j);
    hx_exec_write_resources(&j, x); /* what the run really held and used */
    hx_json_end(&j);
}

void hx_reporter_jsonl(hx_reporter *r, FILE *out) {
    *r = (hx_reporter){out, jsonl_meta, jsonl_verify, jsonl_trial, jsonl_end};
}
