/* hxserve: the service mode's runner (docs/serve.md).  Reads a trace, replays
 * it once per policy and repetition (policies in a seeded order within each
 * repetition, so slow drift of the machine falls on every policy alike), and
 * writes JSON Lines: a meta record, per replay a replay record and one
 * record per request, verify records naming the dumped .npy sets, and an end
 * record with the record count and digest.  Written to FILE.tmp and renamed
 * when complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "json.h"
#include "opts.h"
#include "platform.h"
#include "record.h"
#include "serve.h"

#ifndef HX_COMPILER
#define HX_COMPILER "unknown"
#endif
#ifndef HX_CFLAGS
#define HX_CFLAGS "unknown"
#endif

#define MAX_LABELS 16

typedef struct sv_args {
    const char *trace, *out, *npy_dir;
    int npol, pol[SV_NPOL];
    int reps;
    sv_params p;
    int nlabels;
    const char *label_key[MAX_LABELS], *label_val[MAX_LABELS];
} sv_args;

/* The wording hxserve's errors have always had. */
static const hx_opt_style STYLE = {
    .value_first = 1,
    .int_why = "is not an integer in [%lld, %lld]",
    .unknown = "unknown option '%s'",
    .missing = "%s: missing value (or unknown option)",
    .base = 10,
};

/* --policies: a comma-separated list of A, B and D, none twice. */
static int parse_policies(const hx_opt *o, const char *v, char *err, size_t errlen) {
    sv_args *a = o->dst;
    a->npol = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int p = -1;
        for (int k = 0; k < SV_NPOL; k++)
            if (!strcmp(tok, sv_policy_names[k])) p = k;
        if (p < 0) {
            snprintf(err, errlen, "--policies: '%s' is not A, B or D", tok);
            return -1;
        }
        for (int k = 0; k < a->npol; k++)
            if (a->pol[k] == p) {
                snprintf(err, errlen, "--policies: %s given twice", tok);
                return -1;
            }
        a->pol[a->npol++] = p;
    }
    if (!a->npol) {
        snprintf(err, errlen, "--policies: empty list");
        return -1;
    }
    return 0;
}

/* --gemm-nk N,K: each in [1, 4096]. */
static int parse_gemm_nk(const hx_opt *o, const char *v, char *err, size_t errlen) {
    sv_params *p = o->dst;
    const hx_opt each = {.name = o->name, .lo = 1, .hi = 4096};
    long long n, k;
    char buf[64], *c;
    snprintf(buf, sizeof buf, "%s", v);
    if (!(c = strchr(buf, ','))) {
        snprintf(err, errlen, "--gemm-nk: '%s' is not N,K", v);
        return -1;
    }
    *c = 0;
    if (hx_parse_ll(buf, 10, each.lo, each.hi, &n)) return hx_opt_bad(&STYLE, &each, NULL, buf, err, errlen);
    if (hx_parse_ll(c + 1, 10, each.lo, each.hi, &k)) return hx_opt_bad(&STYLE, &each, NULL, c + 1, err, errlen);
    p->gemm_n = (int)n, p->gemm_k = (int)k;
    return 0;
}

/* --label KEY=VALUE, at most MAX_LABELS. */
static int parse_label(const hx_opt *o, const char *v, char *err, size_t errlen) {
    sv_args *a = o->dst;
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || a->nlabels == MAX_LABELS) {
        snprintf(err, errlen, "--label: '%s' is not KEY=VALUE (at most %d labels)", v, MAX_LABELS);
        return -1;
    }
    char *key = strndup(v, (size_t)(eq - v));
    a->label_key[a->nlabels] = key, a->label_val[a->nlabels++] = eq + 1;
    return 0;
}

#define STR_(x) #x
#define STR(x)  STR_(x)
enum { NOPTS = 13 };
/* hxserve's options, in the order of the usage text; window_us is read
 * into *window_us (the parameters hold nanoseconds). */
static void options(hx_opt t[NOPTS], sv_args *a, int64_t *window_us) {
    const hx_opt all[NOPTS] = {
        {"--trace", HX_OPT_STR, &a->trace, .metavar = "FILE",
         .help = "CSV: arrival_ns,kind,size,deadline_ns (kind compute|bandwidth)"},
        {"--out", HX_OPT_STR, &a->out, .metavar = "FILE",
         .help = "JSON Lines output (written to FILE.tmp, renamed when complete)"},
        {"--npy-dir", HX_OPT_STR, &a->npy_dir, .metavar = "DIR",
         .help = "dump every input set and one request's outputs for it (.npy)"},
        {"--policies", HX_OPT_CUSTOM, a, .parse = parse_policies, .metavar = "LIST",
         .help = "comma-separated subset of A,B,D (default A,B,D)"},
        {"--reps", HX_OPT_INT, &a->reps, 1, 100, .metavar = "N",
         .help = "repetitions; each replays the trace once per policy (default 2, 1..100)"},
        {"--window-us", HX_OPT_I64, window_us, 0, 10000000, .metavar = "W",
         .help = "D's pairing window in microseconds (default 0, 0..10000000)"},
        {"--seed", HX_OPT_I64, &a->p.seed, 0, 2147483647, .metavar = "S",
         .help = "inputs and policy order (default 1)"},
        {"--gemm-nk", HX_OPT_CUSTOM, &a->p, .parse = parse_gemm_nk, .metavar = "N,K",
         .help = "compute request: C[size][N] = A[size][K] B[K][N] (default 256,256)"},
        {"--gemv-cols", HX_OPT_INT, &a->p.gemv_cols, 1, 65536, .metavar = "C",
         .help = "bandwidth request: y[size] = W[size][C] x[C] (default 2048)"},
        {"--copy-row-bytes", HX_OPT_INT, &a->p.copy_row_bytes, 1, 1 << 20, .metavar = "R",
         .help = "bandwidth request: size rows of R bytes copied (default 512)"},
        {"--copy-src-stride", HX_OPT_INT, &a->p.copy_src_stride, 1, 1 << 21, .metavar = "S",
         .help = "source row pitch in bytes, >= R (default 1024)"},
        {"--pool", HX_OPT_INT, &a->p.pool, 1, SV_MAX_POOL, .metavar = "P",
         .help = "distinct inputs per (kind, size) (default 2, 1.." STR(SV_MAX_POOL) ")"},
        {"--label", HX_OPT_CUSTOM, a, .parse = parse_label, .metavar = "KEY=VALUE",
         .help = "copied into the meta record (up to " STR(MAX_LABELS) ")"},
    };
    memcpy(t, all, sizeof all);
}

static void usage(FILE *f) {
    static sv_args dummy;
    int64_t w;
    hx_opt t[NOPTS];
    options(t, &dummy, &w);
    fputs("usage: hxserve --trace FILE --out FILE [options]\n", f);
    hx_opts_usage(f, t, NOPTS, 21);
}

static int parse(int argc, char **argv, sv_args *a, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    a->reps = 2;
    a->p = (sv_params){.gemm_n = 256,
                       .gemm_k = 256,
                       .gemv_cols = 2048,
                       .copy_row_bytes = 512,
                       .copy_src_stride = 1024,
                       .pool = 2,
                       .seed = 1,
                       .window_ns = 0};
    a->npol = 3, a->pol[0] = SV_POL_A, a->pol[1] = SV_POL_B, a->pol[2] = SV_POL_D;
    int64_t window_us = 0;
    hx_opt t[NOPTS];
    options(t, a, &window_us);
    int rc = hx_opts_parse(t, NOPTS, &STYLE, argc, argv, err, errlen);
    if (rc) return rc;
    a->p.window_ns = (uint64_t)window_us * 1000u;
    if (!a->trace || !a->out) {
        snprintf(err, errlen, "--trace and --out are required");
        return -1;
    }
    if (a->p.copy_src_stride < a->p.copy_row_bytes) {
        snprintf(err, errlen, "--copy-src-stride %d is below --copy-row-bytes %d (rows would overlap)",
                 a->p.copy_src_stride, a->p.copy_row_bytes);
        return -1;
    }
    return 0;
}

static void write_meta(FILE *out, const sv_args *a, const sv_run *s, const sv_trace *t) {
    hx_json j;
    char buf[256];
    hx_json_begin(&j, out);
    hx_json_str(&j, "record", "meta");
    hx_json_str(&j, "runner", "hxserve");
    hx_json_str(&j, "target", hx_platform_name());
    hx_json_str(&j, "trace", a->trace);
    hx_json_hex64(&j, "trace_fnv1a64", t->digest);
    hx_json_i64(&j, "requests", t->n);
    hx_json_arr(&j, "policies");
    for (int i = 0; i < a->npol; i++) hx_json_str(&j, NULL, sv_policy_names[a->pol[i]]);
    hx_json_close(&j, ']');
    hx_json_i64(&j, "reps", a->reps);
    hx_json_u64(&j, "window_ns", a->p.window_ns);
    hx_json_u64(&j, "seed", a->p.seed);
    hx_json_obj(&j, "params");
    hx_json_i64(&j, "gemm_n", a->p.gemm_n);
    hx_json_i64(&j, "gemm_k", a->p.gemm_k);
    hx_json_i64(&j, "gemv_cols", a->p.gemv_cols);
    hx_json_i64(&j, "copy_row_bytes", a->p.copy_row_bytes);
    hx_json_i64(&j, "copy_src_stride", a->p.copy_src_stride);
    hx_json_i64(&j, "pool", a->p.pool);
    hx_json_close(&j, '}');
    hx_json_obj(&j, "labels");
    for (int i = 0; i < a->nlabels; i++) hx_json_str(&j, a->label_key[i], a->label_val[i]);
    hx_json_close(&j, '}');
    hx_json_str(&j, "kernels", s->k->name);
    if (s->k->choice) hx_json_str(&j, "kernels_choice", s->k->choice);
    hx_json_str(&j, "compiler", HX_COMPILER);
    hx_json_str(&j, "cflags", HX_CFLAGS);
    hx_json_str(&j, "clock", hx_clock_source());
    hx_json_u64(&j, "clock_resolution_ns", hx_clock_resolution_ns());
    hx_json_i64(&j, "online_cores", hx_online_cores());
    hx_cpu_model(buf, sizeof buf);
    hx_json_str(&j, "cpu_model", buf);
    hx_record_before(&j);
    hx_json_end(&j);
}

static void write_replay(FILE *out, int rep, int slot, int pol, const sv_replay_stats *st) {
    hx_json j;
    hx_json_begin(&j, out);
    hx_json_str(&j, "record", "replay");
    hx_json_i64(&j, "rep", rep);
    hx_json_i64(&j, "slot", slot);
    hx_json_str(&j, "policy", sv_policy_names[pol]);
    hx_json_u64(&j, "makespan_ns", st->makespan_ns);
    hx_json_u64(&j, "max_admit_lag_ns", st->max_admit_lag_ns);
    hx_json_u64(&j, "entries", st->entries);
    hx_json_u64(&j, "pairs", st->pairs);
    hx_json_end(&j);
}

static void write_request(FILE *out, int rep, int pol, const sv_run *s, const sv_req *r) {
    hx_json j;
    hx_json_begin(&j, out);
    hx_json_str(&j, "record", "request");
    hx_json_i64(&j, "rep", rep);
    hx_json_str(&j, "policy", sv_policy_names[pol]);
    hx_json_i64(&j, "id", r->id);
    hx_json_str(&j, "kind", sv_kind_names[r->kind]);
    hx_json_i64(&j, "size", r->size);
    hx_json_i64(&j, "input", r->in->pool);
    hx_json_u64(&j, "arrival_ns", r->arrival);
    hx_json_u64(&j, "deadline_ns", r->deadline);
    hx_json_u64(&j, "admit_ns", r->admit);
    hx_json_u64(&j, "launch_ns", r->launch);
    hx_json_u64(&j, "start_ns", r->start);
    hx_json_u64(&j, "end_ns", r->end);
    hx_json_u64(&j, "pairing_wait_ns", r->pairing_wait);
    if (r->paired_with >= 0) hx_json_i64(&j, "paired_with", r->paired_with);
    else hx_json_null(&j, "paired_with");
    hx_json_arr(&j, "tasks");
    for (int t = 0; t < r->ntasks; t++) {
        const sv_task *k = &r->task[t];
        hx_json_obj(&j, NULL);
        hx_json_str(&j, "engine", k->engine->name);
        hx_json_u64(&j, "push_ns", k->push);
        hx_json_u64(&j, "begin_ns", k->begin);
        hx_json_u64(&j, "end_ns", k->end);
        hx_json_u64(&j, "cpu_ns", k->cpu_ns);
        hx_json_close(&j, '}');
    }
    hx_json_close(&j, ']');
    hx_json_hex64(&j, "checksum", r->checksum);
    hx_json_end(&j);
    (void)s;
}

static int run(const sv_args *a, sv_run *s, const sv_trace *t, FILE *out, char *err, size_t errlen) {
    uint64_t t0 = hx_now_ns();
    write_meta(out, a, s, t);
    uint64_t order_rng = a->p.seed * 0x9E3779B97F4A7C15ull + 7;
    int dumped = 0;
    for (int rep = 0; rep < a->reps; rep++) {
        int order[SV_NPOL];
        memcpy(order, a->pol, sizeof(int) * (size_t)a->npol);
        hx_shuffle(order, a->npol, &order_rng); /* one stream over the repetitions */
        for (int slot = 0; slot < a->npol; slot++) {
            int pol = order[slot];
            sv_replay_stats st;
            sv_poison_outputs(s);
            if (sv_replay(s, pol, &st, err, errlen)) return 1;
            for (int i = 0; i < t->n; i++) s->req[i].checksum = sv_req_checksum(&s->req[i]);
            write_replay(out, rep, slot, pol, &st);
            for (int i = 0; i < t->n; i++) write_request(out, rep, pol, s, &s->req[i]);
            if (a->npy_dir && !dumped) {
                /* The evidence for the numpy check: every input set and the
                 * outputs of the first request that used it. */
                for (int in = 0; in < s->ninputs; in++) {
                    const sv_req *r = NULL;
                    for (int i = 0; i < t->n && !r; i++)
                        if (s->req[i].in == &s->inputs[in]) r = &s->req[i];
                    if (!r) continue;
                    char name[64];
                    if (sv_dump_input(s, r, a->npy_dir, name, sizeof name, err, errlen)) return 1;
                    hx_json j;
                    hx_json_begin(&j, out);
                    hx_json_str(&j, "record", "verify");
                    hx_json_str(&j, "name", name);
                    hx_json_str(&j, "kind", sv_kind_names[r->kind]);
                    hx_json_i64(&j, "size", r->size);
                    hx_json_i64(&j, "input", r->in->pool);
                    hx_json_i64(&j, "rep", rep);
                    hx_json_str(&j, "policy", sv_policy_names[pol]);
                    hx_json_i64(&j, "request", r->id);
                    hx_json_hex64(&j, "checksum", r->checksum);
                    hx_json_end(&j);
                }
                dumped = 1;
            }
        }
    }
    hx_json j;
    hx_record_end_begin(&j, out, "ok");
    hx_json_u64(&j, "wall_ns", hx_now_ns() - t0);
    hx_record_after(&j);
    hx_json_end(&j);
    return 0;
}

int main(int argc, char **argv) {
    sv_args a;
    char err[1024] = "";
    int rc = parse(argc, argv, &a, err, sizeof err);
    if (rc > 0) {
        usage(stdout);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "hxserve: error: %s\n", err);
        usage(stderr);
        return 2;
    }
    /* A bad trace stops here, before any input is made or thread started. */
    sv_trace t;
    if (sv_trace_read(a.trace, &t, err, sizeof err)) {
        fprintf(stderr, "hxserve: error: %s\n", err);
        return 2;
    }
    /* The dispatcher's futex timeouts: the default 50 us slack would be
     * added to every pairing window. */
    hx_set_timer_slack_ns(1000UL);
    static sv_run s;
    if (sv_setup(&s, &a.p, &t, err, sizeof err)) {
        fprintf(stderr, "hxserve: error: %s\n", err);
        sv_teardown(&s);
        sv_trace_free(&t);
        return 1;
    }
    hx_out out;
    if (hx_out_open(&out, "hxserve", a.out)) {
        sv_teardown(&s);
        sv_trace_free(&t);
        return 1;
    }
    rc = run(&a, &s, &t, out.f, err, sizeof err);
    sv_teardown(&s);
    sv_trace_free(&t);
    return hx_out_close(&out, rc ? 1 : 0, err) ? 1 : 0;
}
