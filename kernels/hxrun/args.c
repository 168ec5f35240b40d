/* Command-line parsing and validation.  Every error names the option. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "config.h"
#include "platform.h"

const char *const hx_task_names[HX_NTASKS] = {"M", "V", "D"};

/* V's element size: a property of the configuration, read on both sides of
 * a split executor (protocol.c's meta, tasks.c's buffers). */
size_t hx_elem_bytes_v(const hx_config *cfg) { return cfg->precision == HX_FP32 ? 4 : 2; }
const char *const hx_group_names[HX_NGROUPS + 1] = {"A", "B", "C", "D", "alone"};
const char *const hx_engine_names[HX_NENG_NAMED] = {"host", "vec", "mx", "dma"};
const char *const hx_v_variant_names[HX_NV_VARIANTS] = {"compute", "onchip", "ddr", "stream"};

const char *hx_workload_name(uint32_t mask) {
    switch (mask) {
    case HX_BIT(HX_M) | HX_BIT(HX_V): return "mv";
    case HX_BIT(HX_M) | HX_BIT(HX_D): return "md";
    case HX_BIT(HX_M) | HX_BIT(HX_V) | HX_BIT(HX_D): return "mvd";
    case HX_BIT(HX_M): return "M";
    case HX_BIT(HX_V): return "V";
    case HX_BIT(HX_D): return "D";
    default: return "?";
    }
}

void hx_usage(FILE *f) {
    fputs("usage: hxrun --out FILE.jsonl [options]   (see docs/runner.md)\n"
          "  --npy-dir DIR  --workloads mv,md,mvd  --precision fp32|u8i8  --m-shape M,N,K  --m-tile KC\n"
          "  --v-variant compute|onchip|ddr|stream  --v-shape R,C  --v-passes P  --v-workers N\n"
          "  --v-release at-completion|at-entry-end  --window N|all\n"
          "  --d-shape ROWS,ROW_BYTES  --d-src-stride S  --d-desc-rows N  --d-repeat N  --d-buffers 1|2\n"
          "  --scratch-bytes N  --warmup W  --rounds N  --seed S  --wait spin|spin-block  --spin-ns N\n"
          "  --antagonist N  --antagonist-bytes B\n"
          "  --affinity spread|none|host=1,vec=1,mx=0,dma=0[,vec1=0..][,bw0=1..]  --calibrate M=100,V=80,D=60\n"
          "  --early-completion on|off  --check-at-publish  --groups A,B,C,D  --label K=V  --checkpoints K\n"
          "  --inject-conflict V-out-aliases-M-out|D-dst-aliases-V-scratch  --preempt-at-trial N (test hook)\n",
          f);
}

static int fail(char *err, size_t n, const char *opt, const char *why, const char *val) {
    snprintf(err, n, "%s: %s (got '%s')", opt, why, val ? val : "");
    return -1;
}

/* long is 32 bits on Hexagon: keep every bound below 2^31 here. */
static int parse_long(const char *s, long lo, long hi, long *out) {
    long long v;
    if (hx_parse_ll(s, 0, lo, hi, &v)) return -1;
    *out = (long)v;
    return 0;
}

/* "a,b,c" of integers within [lo, hi]; exactly n of them. */
static int parse_ints(const char *s, int n, long lo, long hi, int *out) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    int i = 0;
    for (; tok && i < n; i++, tok = strtok_r(NULL, ",", &save)) {
        long v;
        if (parse_long(tok, lo, hi, &v)) return -1;
        out[i] = (int)v;
    }
    return (i == n && !tok) ? 0 : -1;
}

static int parse_workloads(const char *s, hx_config *c) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    c->nworkloads = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        uint32_t m;
        if (!strcmp(tok, "mv")) m = HX_BIT(HX_M) | HX_BIT(HX_V);
        else if (!strcmp(tok, "md")) m = HX_BIT(HX_M) | HX_BIT(HX_D);
        else if (!strcmp(tok, "mvd")) m = HX_BIT(HX_M) | HX_BIT(HX_V) | HX_BIT(HX_D);
        else return -1;
        for (int i = 0; i < c->nworkloads; i++)
            if (c->workloads[i] == m) return -1;
        if (c->nworkloads == HX_MAX_WORKLOADS) return -1;
        c->workloads[c->nworkloads++] = m;
    }
    return c->nworkloads ? 0 : -1;
}

/* "name=value,..." where name is one of `names`; values are doubles in [lo, hi]. */
static int parse_named(const char *s, const char *const *names, int n, double lo, double hi, double *out, int *seen) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq = 0;
        int idx = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(tok, names[i])) idx = i;
        char *end;
        double v = strtod(eq + 1, &end);
        if (idx < 0 || end == eq + 1 || *end || v < lo || v > hi) return -1;
        out[idx] = v;
        if (seen) seen[idx] = 1;
    }
    return 0;
}

/* Name of placeable thread e ("host", "vec", "mx", "dma", "vec1".."vec7", "bw0".."bw7"). */
const char *hx_placed_name(int e, char *buf, size_t len) {
    if (e < HX_NENG_NAMED) return hx_engine_names[e];
    if (e >= HX_ENG_BW0) snprintf(buf, len, "bw%d", e - HX_ENG_BW0);
    else snprintf(buf, len, "vec%d", e - HX_NENG_NAMED + 1);
    return buf;
}

/* "none" or "engine=core,..." into c->affinity (engines not named float).
 * Cores are checked against the machine after parsing. */
static int parse_affinity(const char *s, hx_config *c, char *err, size_t n) {
    for (int e = 0; e < HX_NENG_ALL; e++) c->affinity[e] = -1;
    if (!strcmp(s, "none")) return 0;
    char buf[256], nbuf[16];
    snprintf(buf, sizeof buf, "%s", s);
    int seen[HX_NENG_ALL] = {0};
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return fail(err, n, "--affinity", "expected 'spread', 'none' or engine=core pairs", s);
        *eq = 0;
        int idx = -1;
        for (int e = 0; e < HX_NENG_ALL; e++)
            if (!strcmp(tok, hx_placed_name(e, nbuf, sizeof nbuf))) idx = e;
        if (idx < 0) {
            snprintf(err, n, "--affinity: unknown engine '%s' (engines: host, vec, mx, dma, vec1..vec%d, bw0..bw%d)",
                     tok, HX_MAX_VWORKERS - 1, HX_MAX_ANTAGONISTS - 1);
            return -1;
        }
        if (seen[idx]) {
            snprintf(err, n, "--affinity: engine '%s' placed twice", tok);
            return -1;
        }
        long core;
        if (parse_long(eq + 1, 0, 4095, &core)) {
            snprintf(err, n, "--affinity: %s: expected a core number >= 0 (got '%s')", tok, eq + 1);
            return -1;
        }
        seen[idx] = 1;
        c->affinity[idx] = (int)core;
    }
    return 0;
}

/* --affinity spread.  One core per device engine the workloads use, in the
 * fixed order mx, vec, dma, then the extra vector workers vec1.., wrapping
 * when engines outnumber cores.  Without V the vec control thread still runs
 * the fused entry of C and D: it goes on the core of the engine it launches
 * last (dma, else mx), because an engine woken on its own core preempts it
 * and, pinned, it could not launch the next task until that engine finished.
 *
 * The host is pinned too.  A free core if there is one; otherwise the core of
 * the engine that group B submits to last (V's vec, else dma, else mx).
 * Waking an engine on the waker's own core lets the engine preempt the
 * waker: on a 2-core machine a floating host lost its core between B's
 * pushes in about a third of the mvd rounds (three quarters when pinned with
 * mx), so B's later tasks started milliseconds late.  Sharing the core of the
 * engine B submits to last, the host can only be preempted once every task
 * has been handed over: no such B trial in 360 measured (docs/runner.md). */
static void place_spread(hx_config *c, int cores) {
    uint32_t used = 0;
    for (int w = 0; w < c->nworkloads; w++) used |= c->workloads[w];
    static const int eng_of_task[HX_NTASKS] = {HX_ENG_MX, HX_ENG_VEC, HX_ENG_DMA};
    static const int order[HX_NTASKS] = {HX_M, HX_V, HX_D};
    int next = 0;
    for (int i = 0; i < HX_NTASKS; i++)
        if (used & HX_BIT(order[i])) c->affinity[eng_of_task[order[i]]] = next++ % cores;
    if (used & HX_BIT(HX_V))
        for (int w = 1; w < c->v_workers; w++) c->affinity[HX_ENG_VWORKER(w)] = next++ % cores;
    /* Antagonists after every engine: on a machine with spare cores they get
     * their own, otherwise they share the engines' cores in the same order
     * (their pressure is then partly time-sharing, which the run's cpu_ns shows). */
    int nbw = next < cores ? next + 1 : next; /* after the host's free core, if it gets one */
    for (int b = 0; b < c->antagonists; b++) c->affinity[HX_ENG_BW(b)] = nbw++ % cores;
    if (!(used & HX_BIT(HX_V))) c->affinity[HX_ENG_VEC] = c->affinity[(used & HX_BIT(HX_D)) ? HX_ENG_DMA : HX_ENG_MX];
    if (next < cores) c->affinity[HX_ENG_HOST] = next;
    else
        c->affinity[HX_ENG_HOST] = c->affinity[(used & HX_BIT(HX_V))   ? HX_ENG_VEC
                                               : (used & HX_BIT(HX_D)) ? HX_ENG_DMA
                                                                       : HX_ENG_MX];
}

/* An option a parser does not own: the next one is asked. */
enum { NOT_MINE = 1 };

static void set_defaults(hx_config *c) {
    memset(c, 0, sizeof *c);
    c->nworkloads = 1;
    c->workloads[0] = HX_BIT(HX_M) | HX_BIT(HX_V) | HX_BIT(HX_D);
    c->precision = HX_FP32;
    c->m = c->n = c->k = 256;
    c->v_variant = HX_V_ONCHIP;
    c->v_rows = -1, c->v_cols = -1, c->v_passes = -1, c->v_workers = 1;
    c->d_rows = 1024, c->d_row_bytes = 2048, c->d_src_stride = -1, c->d_desc_rows = 64, c->d_repeat = 1;
    c->d_buffers = 1;
    c->preempt_at_trial = -1;
    c->m_tile = HX_M_TILE_DEFAULT;
    c->v_release = HX_V_RELEASE_AT_COMPLETION;
    c->window = 0;
    c->antagonist_bytes = 64u << 20;
    c->scratch_bytes = 8u << 20;
    c->warmup = 5, c->rounds = 30, c->seed = 1;
    c->wait = (hx_wait_policy){HX_WAIT_SPIN_BLOCK, 20000};
    for (int i = 0; i < HX_NENG_ALL; i++) c->affinity[i] = -1;
    c->affinity_spec = "none";
    c->early_completion = 1;
    c->groups = 0xF;
    c->checkpoints = HX_CKPT_DEFAULT;
}

/* The tasks' work: precision, shapes, V's variant and quota, D's pattern. */
static int parse_task_option(const char *o, const char *v, hx_config *c, char *err, size_t n) {
    long L;
    int t[3];
    if (!strcmp(o, "--precision")) {
        if (!strcmp(v, "fp32")) c->precision = HX_FP32;
        else if (!strcmp(v, "u8i8")) c->precision = HX_U8I8;
        else return fail(err, n, o, "expected fp32 or u8i8", v);
    } else if (!strcmp(o, "--m-shape")) {
        if (parse_ints(v, 3, 1, 8192, t)) return fail(err, n, o, "expected M,N,K each in [1, 8192]", v);
        c->m = t[0], c->n = t[1], c->k = t[2];
    } else if (!strcmp(o, "--m-tile")) {
        if (parse_long(v, 8, 8192, &L) || L % 8)
            return fail(err, n, o, "expected the GEMM k-block depth: a multiple of 8 in [8, 8192]", v);
        c->m_tile = (int)L, c->m_tile_set = 1;
    } else if (!strcmp(o, "--v-variant")) {
        int found = -1;
        for (int i = 0; i < HX_NV_VARIANTS; i++)
            if (!strcmp(v, hx_v_variant_names[i])) found = i;
        if (found < 0) return fail(err, n, o, "expected compute, onchip, ddr or stream", v);
        c->v_variant = found;
    } else if (!strcmp(o, "--v-shape")) {
        if (parse_ints(v, 2, 1, 1 << 16, t)) return fail(err, n, o, "expected ROWS,COLS each in [1, 65536]", v);
        c->v_rows = t[0], c->v_cols = t[1], c->v_shape_set = 1;
    } else if (!strcmp(o, "--v-passes")) {
        if (parse_long(v, 1, 4096, &L)) return fail(err, n, o, "expected an integer in [1, 4096]", v);
        c->v_passes = (int)L;
    } else if (!strcmp(o, "--v-workers")) {
        if (parse_long(v, 1, HX_MAX_VWORKERS, &L)) return fail(err, n, o, "expected an integer in [1, 8]", v);
        c->v_workers = (int)L;
    } else if (!strcmp(o, "--d-shape")) {
        if (parse_ints(v, 2, 1, 1 << 24, t)) return fail(err, n, o, "expected ROWS,ROW_BYTES each >= 1", v);
        c->d_rows = t[0], c->d_row_bytes = t[1];
    } else if (!strcmp(o, "--d-src-stride")) {
        if (parse_long(v, 1, 1 << 26, &L)) return fail(err, n, o, "expected a positive integer", v);
        c->d_src_stride = (int)L;
    } else if (!strcmp(o, "--d-repeat")) {
        if (parse_long(v, 1, 1 << 20, &L)) return fail(err, n, o, "expected an integer in [1, 1048576]", v);
        c->d_repeat = (int)L;
    } else if (!strcmp(o, "--d-desc-rows")) {
        if (parse_long(v, 1, 1 << 24, &L)) return fail(err, n, o, "expected a positive integer", v);
        c->d_desc_rows = (int)L;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* How the engines and the fused entry run the tasks: scratch, buffers,
 * release, window, waiting, placement, interference. */
static int parse_schedule_option(const char *o, const char *v, hx_config *c, char *err, size_t n) {
    long L;
    if (!strcmp(o, "--v-release")) {
        if (!strcmp(v, "at-completion")) c->v_release = HX_V_RELEASE_AT_COMPLETION;
        else if (!strcmp(v, "at-entry-end")) c->v_release = HX_V_RELEASE_AT_ENTRY_END;
        else return fail(err, n, o, "expected at-completion or at-entry-end", v);
    } else if (!strcmp(o, "--window")) {
        if (!strcmp(v, "all")) c->window = 0;
        else if (parse_long(v, 1, HX_NTASKS, &L)) return fail(err, n, o, "expected all or an integer in [1, 3]", v);
        else c->window = (int)L;
    } else if (!strcmp(o, "--d-buffers")) {
        if (parse_long(v, 1, 2, &L)) return fail(err, n, o, "expected 1 or 2", v);
        c->d_buffers = (int)L;
    } else if (!strcmp(o, "--scratch-bytes")) {
        long long LL;
        if (hx_parse_ll(v, 0, 0, (long long)(SIZE_MAX > 0xFFFFFFFFu ? (1LL << 34) : 0x7FFFFFFF), &LL))
            return fail(err, n, o, "expected a byte count", v);
        c->scratch_bytes = (size_t)LL;
    } else if (!strcmp(o, "--antagonist")) {
        if (parse_long(v, 0, HX_MAX_ANTAGONISTS, &L)) return fail(err, n, o, "expected an integer in [0, 8]", v);
        c->antagonists = (int)L;
    } else if (!strcmp(o, "--antagonist-bytes")) {
        if (parse_long(v, 1 << 20, 1L << 30, &L)) return fail(err, n, o, "expected a byte count in [1 MiB, 1 GiB]", v);
        c->antagonist_bytes = (size_t)L;
    } else if (!strcmp(o, "--wait")) {
        if (hx_parse_wait(v, &c->wait.strategy)) return fail(err, n, o, "expected spin or spin-block", v);
    } else if (!strcmp(o, "--spin-ns")) {
        if (parse_long(v, 0, 1000000000L, &L)) return fail(err, n, o, "expected ns in [0, 1e9]", v);
        c->wait.spin_ns = (uint64_t)L;
    } else if (!strcmp(o, "--early-completion")) {
        if (!strcmp(v, "on")) c->early_completion = 1;
        else if (!strcmp(v, "off")) c->early_completion = 0;
        else return fail(err, n, o, "expected on or off", v);
    } else if (!strcmp(o, "--affinity")) {
        c->affinity_spec = v;
        c->spread = !strcmp(v, "spread");
        if (!c->spread && parse_affinity(v, c, err, n)) return -1;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* The protocol: output, workloads, groups, rounds, seed, calibration,
 * labels and the deliberate conflicts of the integrity tests. */
static int parse_run_option(const char *o, const char *v, hx_config *c, char *err, size_t n) {
    long L;
    if (!strcmp(o, "--out")) c->out_path = v;
    else if (!strcmp(o, "--npy-dir")) c->npy_dir = v;
    else if (!strcmp(o, "--workloads")) {
        if (parse_workloads(v, c)) return fail(err, n, o, "expected a comma list of distinct mv, md, mvd", v);
    } else if (!strcmp(o, "--groups")) {
        if (hx_parse_groups(v, &c->groups)) return fail(err, n, o, "expected a comma list of A, B, C, D", v);
    } else if (!strcmp(o, "--warmup")) {
        if (parse_long(v, 0, 1000000, &L)) return fail(err, n, o, "expected an integer >= 0", v);
        c->warmup = (int)L;
    } else if (!strcmp(o, "--checkpoints")) {
        if (parse_long(v, 0, HX_MAX_CKPT, &L)) return fail(err, n, o, "expected an integer in [0, 64]", v);
        c->checkpoints = (int)L;
    } else if (!strcmp(o, "--rounds")) {
        if (parse_long(v, 1, 10000000, &L)) return fail(err, n, o, "expected an integer >= 1", v);
        c->rounds = (int)L;
    } else if (!strcmp(o, "--seed")) {
        char *end;
        errno = 0;
        c->seed = strtoull(v, &end, 0);
        if (errno || end == v || *end) return fail(err, n, o, "expected an unsigned integer", v);
    } else if (!strcmp(o, "--calibrate")) {
        int seen[HX_NTASKS] = {0};
        if (parse_named(v, hx_task_names, HX_NTASKS, 0, 1e7, c->calib_us, seen))
            return fail(err, n, o, "expected M=us,V=us,D=us with microseconds in [0, 1e7]", v);
        c->calibrate = 1;
    } else if (!strcmp(o, "--label")) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || c->nlabels == HX_MAX_LABELS) return fail(err, n, o, "expected KEY=VALUE (at most 16)", v);
        char *key = strndup(v, (size_t)(eq - v));
        c->label_key[c->nlabels] = key;
        c->label_val[c->nlabels++] = eq + 1;
    } else if (!strcmp(o, "--preempt-at-trial")) {
        if (parse_long(v, 0, 2000000000L, &L)) return fail(err, n, o, "expected a trial index >= 0", v);
        c->preempt_at_trial = L;
    } else if (!strcmp(o, "--inject-conflict")) {
        if (!strcmp(v, "V-out-aliases-M-out")) c->inject = HX_INJECT_V_OUT_M_OUT;
        else if (!strcmp(v, "D-dst-aliases-V-scratch")) c->inject = HX_INJECT_D_DST_V_SCRATCH;
        else return fail(err, n, o, "expected V-out-aliases-M-out or D-dst-aliases-V-scratch", v);
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* After every option: placement, per-variant defaults and the checks that
 * need several options at once. */
static int finish(hx_config *c, char *err, size_t n) {
    int cores = hx_online_cores();
    if (c->spread) {
        for (int e = 0; e < HX_NENG_ALL; e++) c->affinity[e] = -1;
        place_spread(c, cores);
    }
    char nbuf[16], val[48];
    for (int e = 0; e < HX_NENG_ALL; e++) {
        if (c->affinity[e] < 0) continue;
        const char *name = hx_placed_name(e, nbuf, sizeof nbuf);
        snprintf(val, sizeof val, "%s=%d", name, c->affinity[e]);
        if (c->affinity[e] >= cores)
            return fail(err, n, "--affinity", "core does not exist on this machine (online cores: 0..n-1)", val);
        if (e >= HX_NENG_NAMED && e < HX_ENG_BW0 && e - HX_NENG_NAMED + 1 >= c->v_workers)
            return fail(err, n, "--affinity", "no such vector worker: --v-workers N has workers vec1..vec(N-1)", val);
        if (e >= HX_ENG_BW0 && e - HX_ENG_BW0 >= c->antagonists)
            return fail(err, n, "--affinity", "no such antagonist: --antagonist N has threads bw0..bw(N-1)", val);
    }
    /* Per-variant defaults: compute is cache-resident with many passes, onchip
     * fits the arena, ddr streams an array far larger than any cache. */
    static const int def_rows[] = {64, 512, 4096, 4096}, def_cols[] = {256, 1024, 4096, 4096},
                     def_passes[] = {32, 1, 1, 1};
    if (!c->v_shape_set) c->v_rows = def_rows[c->v_variant], c->v_cols = def_cols[c->v_variant];
    if (c->v_passes < 0) c->v_passes = def_passes[c->v_variant];
    if (c->v_workers > c->v_rows) return fail(err, n, "--v-workers", "more vector workers than rows", "");
    if (c->d_src_stride < 0) c->d_src_stride = 2 * c->d_row_bytes;
    if (c->d_src_stride < c->d_row_bytes) return fail(err, n, "--d-src-stride", "must be >= row bytes", "");
    if ((double)c->d_rows * c->d_src_stride * c->d_repeat > (double)(SIZE_MAX / 2))
        return fail(err, n, "--d-repeat", "source region (rows x stride x repeat) does not fit in memory", "");
    if (c->inject == HX_INJECT_D_DST_V_SCRATCH && c->v_variant != HX_V_ONCHIP)
        return fail(err, n, "--inject-conflict", "D-dst-aliases-V-scratch needs --v-variant onchip", "");
    return 0;
}

int hx_parse_args(int argc, char **argv, hx_config *c, char *err, size_t n) {
    set_defaults(c);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) return 1;
        if (!strcmp(o, "--check-at-publish")) {
            c->check_at_publish = 1;
            continue;
        }
        if (strncmp(o, "--", 2) != 0) return fail(err, n, o, "unexpected argument", o);
        if (i + 1 >= argc) return fail(err, n, o, "missing value", "");
        const char *v = argv[++i];
        int rc = parse_task_option(o, v, c, err, n);
        if (rc == NOT_MINE) rc = parse_schedule_option(o, v, c, err, n);
        if (rc == NOT_MINE) rc = parse_run_option(o, v, c, err, n);
        if (rc == NOT_MINE) return fail(err, n, o, "unknown option", o);
        if (rc) return rc;
    }
    if (!c->out_path) return fail(err, n, "--out", "is required", "");
    return finish(c, err, n);
}
