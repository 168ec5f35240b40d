/* hxgraph: runs one task graph in groups A-D (docs/graphs.md).
 *
 * Protocol: the graph is read and checked (every error before any work); a
 * verification round (group A) dumps every node's inputs and outputs as .npy
 * (--npy-dir) and records each buffer's checksum; then warm-up and measured
 * rounds run every group once per round in a seeded random order.  Every
 * trial allocates the graph's buffers and workspaces, copies the graph's
 * inputs in, runs, and frees them: the end-to-end time includes that
 * preparation, the device time does not.  After each trial every buffer's
 * checksum must equal the verification round's.
 *
 * Output: JSON Lines (meta, verify, one trial record per trial, end with the
 * record count and digest), written to FILE.tmp and renamed when complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "graph.h"
#include "json.h"
#include "npy.h"
#include "opts.h"
#include "platform.h"
#include "record.h"
#include "rng.h"

#ifndef HX_COMPILER
#define HX_COMPILER "unknown"
#endif
#ifndef HX_CFLAGS
#define HX_CFLAGS "unknown"
#endif
#define POISON 0xA5

typedef struct {
    const char *graph, *out, *npy_dir, *affinity;
    int warmup, rounds;
    uint64_t seed;
    uint32_t groups;
    hx_wait_policy wait;
    int nlabels;
    const char *label[16]; /* --label KEY=VALUE, recorded in the meta record */
} opts;

static void usage(FILE *f) {
    fprintf(f, "usage: hxgraph --graph FILE.json --out FILE.jsonl [--npy-dir DIR] [--warmup N] [--rounds N]\n"
               "               [--seed S] [--groups A,B,C,D] [--wait spin|spin-block] [--spin-ns N]\n"
               "               [--affinity spread|none] [--label KEY=VALUE ...]\n");
}

/* --label KEY=VALUE: at most 16, the key of letters, digits and _. */
static int add_label(const hx_opt *opt, const char *v, char *err, size_t n) {
    opts *o = opt->dst;
    if (!strchr(v, '=') || v[0] == '=' || o->nlabels == 16) {
        snprintf(err, n, "--label: expected KEY=VALUE, at most 16 (got '%s')", v);
        return -1;
    }
    for (const char *q = v; *q != '='; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_')) {
            snprintf(err, n, "--label: the key may hold letters, digits and _ only (got '%s')", v);
            return -1;
        }
    o->label[o->nlabels++] = v;
    return 0;
}

static int wait_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    (void)err, (void)n;
    return hx_parse_wait(v, o->dst);
}

static int groups_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    (void)err, (void)n;
    return hx_parse_groups(v, o->dst);
}

/* The wording hxgraph's errors have always had. */
static const hx_opt_style STYLE = {
    .int_why = "expected an integer in [%lld, %lld]",
    .unknown = "unknown option %s",
    .missing = "%s: missing value (or unknown option)",
    .base = 10,
};

static int parse(int argc, char **argv, opts *o, char *err, size_t n) {
    static const char *const affinities[] = {"spread", "none", NULL};
    memset(o, 0, sizeof *o);
    o->warmup = 2, o->rounds = 10, o->seed = 1, o->groups = 0xF, o->affinity = "spread";
    o->wait = (hx_wait_policy){HX_WAIT_SPIN_BLOCK, 20000}; /* the sweep points' default */
    const hx_opt table[] = {
        {.name = "--graph", .kind = HX_OPT_STR, .dst = &o->graph},
        {.name = "--out", .kind = HX_OPT_STR, .dst = &o->out},
        {.name = "--npy-dir", .kind = HX_OPT_STR, .dst = &o->npy_dir},
        {.name = "--label", .kind = HX_OPT_CUSTOM, .dst = o, .parse = add_label},
        {.name = "--warmup", .kind = HX_OPT_INT, .dst = &o->warmup, .lo = 0, .hi = 1000000},
        {.name = "--rounds", .kind = HX_OPT_INT, .dst = &o->rounds, .lo = 1, .hi = 10000000},
        {.name = "--seed", .kind = HX_OPT_U64, .dst = &o->seed, .why = "expected an unsigned 64-bit integer"},
        {.name = "--spin-ns", .kind = HX_OPT_I64, .dst = &o->wait.spin_ns, .lo = 0, .hi = 1000000000},
        {.name = "--wait",
         .kind = HX_OPT_CUSTOM,
         .dst = &o->wait.strategy,
         .parse = wait_arg,
         .why = "expected spin or spin-block"},
        {.name = "--affinity",
         .kind = HX_OPT_STR,
         .dst = &o->affinity,
         .choices = affinities,
         .why = "expected spread or none"},
        {.name = "--groups",
         .kind = HX_OPT_CUSTOM,
         .dst = &o->groups,
         .parse = groups_arg,
         .why = "expected a comma-separated subset of A,B,C,D"},
    };
    int rc = hx_opts_parse(table, (int)(sizeof table / sizeof table[0]), &STYLE, argc, argv, err, n);
    if (rc) return rc;
    if (!o->graph || !o->out) {
        snprintf(err, n, "--graph and --out are required");
        return -1;
    }
    return 0;
}

/* ---- per-trial buffers ---------------------------------------------- */

static hxg_graph G;
static hxg_exec X;
static uint8_t *pristine;               /* the graph's inputs, made once from the seed */
static int input_storage[HXG_MAX_BUFS]; /* storage whose first use is a read: filled from pristine */
static uint64_t verified[HXG_MAX_BUFS];

typedef struct {
    uint64_t alloc_ns, input_ns, free_ns, input_bytes;
} prep_times;

/* Storage read before any node writes it, in the fixed order: the graph's
 * inputs (weights, activations in).  Filled with values uniform in
 * [-1, 1) scaled by 1/sqrt(its largest consumer's fan-in), so chained
 * blocks stay in range. */
static void plan_inputs(const hxg_graph *g) {
    int seen[HXG_MAX_BUFS] = {0};
    for (int t = 0; t < g->nnodes; t++) {
        const hxg_node *nd = &g->node[g->order[t]];
        for (int a = 0; a < nd->nacc; a++) {
            int s = g->buf[nd->acc[a].buf].storage;
            if (!seen[s]) seen[s] = 1, input_storage[s] = !nd->acc[a].write;
        }
    }
}

static void make_pristine(const hxg_graph *g, uint64_t seed) {
    pristine = (uint8_t *)hx_alloc(g->arena_bytes ? g->arena_bytes : 64, 64);
    memset(pristine, 0, g->arena_bytes);
    uint64_t s = seed ^ 0x6A09E667F3BCC909ull;
    for (int b = 0; b < g->nbufs; b++) {
        if (g->buf[b].storage != b || !input_storage[b]) continue;
        /* fan-in: the k of a GEMM reading it as b (weights), else 1 */
        double fan = 1.0;
        for (int i = 0; i < g->nnodes; i++) {
            const hxg_node *nd = &g->node[i];
            for (int r = 0; r < nd->nin; r++)
                if (g->buf[nd->in[r]].storage == b && nd->op == HXG_GEMM && !strcmp(nd->in_role[r], "b") && nd->k > fan)
                    fan = nd->k;
        }
        float scale = (float)(1.0 / __builtin_sqrt(fan));
        float *p = (float *)(pristine + g->buf[b].offset);
        for (size_t i = 0; i < g->buf[b].bytes / 4; i++)
            p[i] = scale * ((float)(hx_splitmix64(&s) >> 40) / (float)(1 << 24) * 2.0f - 1.0f);
    }
}

/* Returns 0, or -1 when memory runs out (reported, the run ends). */
static int alloc_trial(hxg_graph *g, prep_times *pt) {
    uint64_t t0 = hx_now_ns();
    X.arena = (uint8_t *)hx_alloc(g->arena_bytes, 64);
    int ok = X.arena != NULL;
    for (int i = 0; i < g->nnodes; i++) {
        g->node[i].priv = g->node[i].priv_bytes ? (uint8_t *)hx_alloc(g->node[i].priv_bytes, 64) : NULL;
        ok &= !g->node[i].priv_bytes || g->node[i].priv != NULL;
    }
    if (!ok) return -1;
    uint64_t t1 = hx_now_ns();
    pt->input_bytes = 0;
    for (int b = 0; b < g->nbufs; b++)
        if (g->buf[b].storage == b && input_storage[b]) {
            memcpy(X.arena + g->buf[b].offset, pristine + g->buf[b].offset, g->buf[b].bytes);
            pt->input_bytes += g->buf[b].bytes;
        }
    uint64_t t2 = hx_now_ns();
    pt->alloc_ns = t1 - t0, pt->input_ns = t2 - t1;
    return 0;
}

/* Poisons everything before freeing it (outside the timing), so that an
 * allocator handing the same memory to the next trial cannot make skipped
 * work look correct. */
static void free_trial(hxg_graph *g, prep_times *pt) {
    if (X.arena) memset(X.arena, POISON, g->arena_bytes);
    uint64_t t0 = hx_now_ns();
    hx_free(X.arena);
    for (int i = 0; i < g->nnodes; i++) hx_free(g->node[i].priv), g->node[i].priv = NULL;
    pt->free_ns = hx_now_ns() - t0;
    X.arena = NULL;
}

static uint64_t buf_checksum(const hxg_graph *g, int b) {
    return hx_checksum(hxg_buf_ptr(g, X.arena, b), g->buf[b].bytes);
}

/* ---- verification dumps ---------------------------------------------- */

typedef struct {
    const char *dir;
    int failed;
} dump_ctx;

static void dump(hxg_exec *x, const hxg_node *nd, const char *kind, const char *role, int b, dump_ctx *c) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s__%s_%s.npy", c->dir, nd->name, kind, role);
    size_t bytes = x->g->buf[b].bytes;
    int raw = nd->op == HXG_COPY; /* copies move bytes: compared bit for bit */
    size_t shape[1] = {raw ? bytes : bytes / 4};
    if (hx_npy_write(path, raw ? "|u1" : "<f4", 1, shape, hxg_buf_ptr(x->g, x->arena, b), bytes)) c->failed = 1;
}

static void before(hxg_exec *x, hxg_node *nd, void *ctx) {
    for (int r = 0; r < nd->nin; r++) dump(x, nd, "in", nd->in_role[r], nd->in[r], (dump_ctx *)ctx);
    if (nd->op == HXG_COPY) dump(x, nd, "before", nd->out_role[0], nd->out[0], (dump_ctx *)ctx);
}

static void after(hxg_exec *x, hxg_node *nd, void *ctx) {
    for (int r = 0; r < nd->nout; r++) dump(x, nd, "out", nd->out_role[r], nd->out[r], (dump_ctx *)ctx);
}

/* ---- records ---------------------------------------------------------- */

/* meta.args and meta.labels: the options the run was given. */
static void write_meta_args(hx_json *jp, const opts *o) {
    hx_json_obj(jp, "args");
    hx_json_str(jp, "graph", o->graph);
    hx_json_str(jp, "out", o->out);
    hx_json_str(jp, "npy_dir", o->npy_dir);
    hx_json_i64(jp, "warmup", o->warmup);
    hx_json_i64(jp, "rounds", o->rounds);
    hx_json_u64(jp, "seed", o->seed);
    hx_json_str(jp, "wait", o->wait.strategy == HX_WAIT_SPIN ? "spin" : "spin-block");
    hx_json_u64(jp, "spin_ns", o->wait.spin_ns);
    hx_json_str(jp, "affinity", o->affinity);
    hx_json_arr(jp, "groups");
    for (int gr = 0; gr < HXG_NGROUPS; gr++)
        if (o->groups >> gr & 1) hx_json_str(jp, NULL, hxg_group_names[gr]);
    hx_json_close(jp, ']');
    hx_json_close(jp, '}');
    hx_json_obj(jp, "labels");
    for (int i = 0; i < o->nlabels; i++) {
        char key[64];
        const char *eq = strchr(o->label[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - o->label[i]) < 63 ? (int)(eq - o->label[i]) : 63, o->label[i]);
        hx_json_str(jp, key, eq + 1);
    }
    hx_json_close(jp, '}');
}

/* meta.graph: the buffers and nodes, nodes in the fixed topological order. */
static void write_meta_graph(hx_json *jp, const hxg_graph *g) {
    hx_json_obj(jp, "graph");
    hx_json_str(jp, "name", g->name);
    hx_json_u64(jp, "arena_bytes", g->arena_bytes);
    hx_json_i64(jp, "edges", g->nedges);
    hx_json_arr(jp, "buffers");
    for (int b = 0; b < g->nbufs; b++) {
        hx_json_obj(jp, NULL);
        hx_json_str(jp, "name", g->buf[b].name);
        hx_json_u64(jp, "bytes", g->buf[b].bytes);
        hx_json_u64(jp, "offset", g->buf[b].offset);
        hx_json_str(jp, "alias", g->buf[b].alias >= 0 ? g->buf[g->buf[b].alias].name : NULL);
        hx_json_bool(jp, "input", input_storage[g->buf[b].storage]);
        hx_json_close(jp, '}');
    }
    hx_json_close(jp, ']');
    hx_json_arr(jp, "nodes");
    for (int t = 0; t < g->nnodes; t++) {
        const hxg_node *nd = &g->node[g->order[t]];
        hx_json_obj(jp, NULL);
        hx_json_str(jp, "name", nd->name);
        hx_json_str(jp, "op", hxg_op_names[nd->op]);
        hx_json_str(jp, "engine", hxg_engine_names[nd->engine]);
        char cls[2] = {hxg_class_names[nd->engine], 0};
        hx_json_str(jp, "class", cls);
        hx_json_i64(jp, "topo", nd->topo);
        hx_json_i64(jp, "level", nd->level);
        hx_json_arr(jp, "after");
        for (int p = 0; p < nd->npred; p++) hx_json_str(jp, NULL, g->node[nd->pred[p]].name);
        hx_json_close(jp, ']');
        hx_json_u64(jp, "workspace_bytes", nd->priv_bytes);
        if (nd->op == HXG_GEMM) hx_json_u64(jp, "flops", 2ull * nd->m * nd->n * nd->k);
        hx_json_close(jp, '}');
    }
    hx_json_close(jp, ']');
    hx_json_close(jp, '}');
}

static void write_meta(FILE *f, const opts *o, const int core[HXG_NENG], int host_core) {
    hxg_graph *g = &G;
    hx_json j;
    char model[256], gov[64];
    hx_cpu_model(model, sizeof model);
    hx_cpu_governor(gov, sizeof gov);
    hx_json_begin(&j, f);
    hx_json_str(&j, "record", "meta");
    hx_json_i64(&j, "schema_version", 1);
    hx_json_str(&j, "runner", "hxgraph");
    hx_json_str(&j, "target", hx_platform_name());
    hx_record_emulated(&j);
    hx_json_str(&j, "kernels", X.k->name);
    if (X.k->choice) hx_json_str(&j, "kernels_choice", X.k->choice);
    hx_json_str(&j, "compiler", HX_COMPILER);
    hx_json_str(&j, "compiler_version", __VERSION__);
    hx_json_str(&j, "cflags", HX_CFLAGS);
    hx_json_str(&j, "cpu_model", model);
    hx_json_i64(&j, "online_cores", hx_online_cores());
    /* three engine threads and the host: on fewer cores they take turns */
    hx_json_i64(&j, "threads", HXG_NENG + 1);
    hx_json_bool(&j, "engines_exceed_cores", HXG_NENG + 1 > hx_online_cores());
    hx_json_str(&j, "cpu_governor", gov);
    hx_record_before(&j);
    hx_json_obj(&j, "affinity");
    hx_json_i64(&j, "host", host_core);
    for (int e = 0; e < HXG_NENG; e++) hx_json_i64(&j, hxg_engine_names[e], core[e]);
    hx_json_close(&j, '}');
    hx_json_obj(&j, "group_mapping");
    hx_json_str(&j, "A", "the host runs the nodes in the fixed topological order, one request each, waiting for each");
    hx_json_str(&j, "B", "the host pushes each node to its engine's queue as soon as its inputs are done");
    hx_json_str(
        &j, "C",
        "one fused request to the vec thread: nodes in the fixed order, V inline, M and D launched and waited for");
    hx_json_str(
        &j, "D",
        "the same fused request without barriers: every ready M and D node launched on its engine (fixed order), "
        "ready V nodes run inline");
    hx_json_close(&j, '}');
    write_meta_args(&j, o);
    write_meta_graph(&j, g);
    hx_json_end(&j);
}

static void write_trial(FILE *f, int round, int idx, int group, uint64_t hb, uint64_t he, const prep_times *pt,
                        const int *badbuf, int *mismatches) {
    hxg_graph *g = &G;
    hx_json j;
    hx_json_begin(&j, f);
    hx_json_str(&j, "record", "trial");
    hx_json_i64(&j, "round", round);
    hx_json_bool(&j, "warmup", round < 0);
    hx_json_i64(&j, "index", idx);
    hx_json_str(&j, "group", hxg_group_names[group]);
    hx_json_u64(&j, "host_begin", hb);
    hx_json_u64(&j, "host_end", he);
    hx_json_u64(&j, "device_ns", he - hb);
    hx_json_u64(&j, "alloc_ns", pt->alloc_ns);
    hx_json_u64(&j, "input_ns", pt->input_ns);
    hx_json_u64(&j, "input_bytes", pt->input_bytes);
    hx_json_u64(&j, "free_ns", pt->free_ns);
    hx_json_u64(&j, "e2e_ns", pt->alloc_ns + pt->input_ns + (he - hb) + pt->free_ns);
    if (group >= HXG_C) {
        hx_json_u64(&j, "entry_begin", X.entry_begin);
        hx_json_u64(&j, "entry_end", X.entry_end);
    }
    hx_json_arr(&j, "nodes");
    for (int t = 0; t < g->nnodes; t++) {
        const hxg_node *nd = &g->node[g->order[t]];
        hx_json_obj(&j, NULL);
        hx_json_str(&j, "name", nd->name);
        hx_json_str(&j, "engine", nd->ran_on);
        hx_json_u64(&j, "launch", nd->launch);
        hx_json_u64(&j, "begin", nd->begin);
        hx_json_u64(&j, "end", nd->end);
        hx_json_u64(&j, "cpu_ns", nd->cpu_ns);
        hx_json_u64(&j, "pack_ns", nd->pack_ns);
        hx_json_i64(&j, "cpu_begin", nd->cpu_begin);
        hx_json_i64(&j, "cpu_end", nd->cpu_end);
        hx_json_close(&j, '}');
    }
    hx_json_close(&j, ']');
    int bad = 0;
    hx_json_arr(&j, "mismatched_buffers");
    for (int b = 0; b < g->nbufs; b++)
        if (badbuf[b]) bad++, hx_json_str(&j, NULL, g->buf[b].name);
    hx_json_close(&j, ']');
    hx_json_bool(&j, "checksums_ok", bad == 0);
    hx_json_end(&j);
    *mismatches += bad != 0;
}

/* The round's group order: its own stream per round, so a round's order
 * does not depend on how many rounds came before. */
static void shuffle(int *a, int n, uint64_t seed, int round) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull ^ (uint64_t)(int64_t)round ^ 0xD1B54A32D192ED03ull;
    hx_shuffle(a, n, &s);
}

static int run(FILE *f, const opts *o, char *err, size_t n) {
    hxg_graph *g = &G;
    prep_times pt;
    /* verification round: group A with dumps */
    dump_ctx dc = {o->npy_dir, 0};
    if (alloc_trial(g, &pt)) {
        free_trial(g, &pt);
        snprintf(err, n, "out of memory allocating the graph's %zu-byte arena and workspaces", g->arena_bytes);
        return 1;
    }
    if (o->npy_dir) X.before = before, X.after = after, X.ctx = &dc;
    hxg_run_group(&X, HXG_A);
    X.before = X.after = NULL;
    if (dc.failed) {
        snprintf(err, n, "cannot write .npy files into %s", o->npy_dir);
        free_trial(g, &pt);
        return 1;
    }
    hx_json j;
    hx_json_begin(&j, f);
    hx_json_str(&j, "record", "verify");
    hx_json_str(&j, "group", "A");
    hx_json_obj(&j, "checksums");
    char hex[20];
    for (int b = 0; b < g->nbufs; b++) {
        verified[b] = buf_checksum(g, b);
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)verified[b]);
        hx_json_str(&j, g->buf[b].name, hex);
    }
    hx_json_close(&j, '}');
    hx_json_end(&j);
    free_trial(g, &pt);

    int groups[HXG_NGROUPS], ng = 0, trials = 0, mismatches = 0;
    for (int gr = 0; gr < HXG_NGROUPS; gr++)
        if (o->groups >> gr & 1) groups[ng++] = gr;
    uint64_t t0 = hx_now_ns();
    for (int r = -o->warmup; r < o->rounds; r++) {
        shuffle(groups, ng, o->seed, r);
        for (int i = 0; i < ng; i++) {
            if (alloc_trial(g, &pt)) {
                free_trial(g, &pt);
                snprintf(err, n, "out of memory allocating the graph's %zu-byte arena and workspaces", g->arena_bytes);
                return 1;
            }
            uint64_t hb = hxg_now(&X);
            hxg_run_group(&X, groups[i]);
            uint64_t he = hxg_now(&X);
            int badbuf[HXG_MAX_BUFS];
            for (int b = 0; b < g->nbufs; b++) badbuf[b] = buf_checksum(g, b) != verified[b];
            free_trial(g, &pt);
            write_trial(f, r, i, groups[i], hb, he, &pt, badbuf, &mismatches);
            trials++;
        }
    }
    hx_record_end_begin(&j, f, mismatches ? "checksum_mismatch" : "ok");
    hx_json_i64(&j, "trials", trials);
    hx_json_i64(&j, "checksum_mismatches", mismatches);
    hx_json_u64(&j, "wall_ns", hx_now_ns() - t0);
    hx_record_after(&j);
    hx_json_end(&j);
    return mismatches ? 4 : 0;
}

int main(int argc, char **argv) {
    opts o;
    char err[1200] = "";
    int rc = parse(argc, argv, &o, err, sizeof err);
    if (rc > 0) {
        usage(stdout);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "hxgraph: error: %s\n", err);
        usage(stderr);
        return 2;
    }
    if (hxg_load(&G, o.graph, err, sizeof err)) {
        fprintf(stderr, "hxgraph: error: %s\n", err);
        return 2;
    }
    if (o.npy_dir) {
        if (!hx_is_directory(o.npy_dir)) {
            fprintf(stderr, "hxgraph: error: --npy-dir %s is not a directory\n", o.npy_dir);
            return 2;
        }
    }
    /* spread: mx, vec, dma, then the host, one core each, wrapping */
    int cores = hx_online_cores(), core[HXG_NENG], host = -1;
    for (int e = 0; e < HXG_NENG; e++) core[e] = -1;
    if (!strcmp(o.affinity, "spread") && cores > 0) {
        for (int e = 0; e < HXG_NENG; e++) core[e] = e % cores;
        host = HXG_NENG % cores;
    }
    plan_inputs(&G);
    make_pristine(&G, o.seed);
    if (hxg_exec_start(&X, &G, hx_kernels_fast(), core, o.wait, err, sizeof err)) {
        fprintf(stderr, "hxgraph: error: %s\n", err);
        hxg_exec_stop(&X);
        return 1;
    }
    if (host >= 0 && hx_pin_self(host) != 0) host = -1; /* recorded: the host floats */
    hx_out out;
    if (hx_out_open(&out, "hxgraph", o.out)) {
        hxg_exec_stop(&X);
        return 1;
    }
    write_meta(out.f, &o, core, host);
    rc = run(out.f, &o, err, sizeof err);
    hxg_exec_stop(&X);
    rc = hx_out_close(&out, rc, err);
    if (rc == 4) fprintf(stderr, "hxgraph: error: checksum mismatch in some trials (see %s)\n", o.out);
    return rc;
}
