/* Command-line parsing and validation.  Every error names the option.
 * Bounds, defaults and named values come from options.h, generated from
 * hxfuse/runner/cli.py (the one table of hxrun's options); the asserts
 * below hold the runner's own limits and enums to it at compile time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "config.h"
#include "options.h"
#include "opts.h"
#include "platform.h"

const char *const hx_task_names[HX_NTASKS] = {"M", "V", "D"};

/* V's element size: a property of the configuration, read on both sides of
 * a split executor (protocol.c's meta, tasks.c's buffers). */
size_t hx_elem_bytes_v(const hx_config *cfg) { return cfg->precision == HX_FP32 ? 4 : 2; }
const char *const hx_group_names[HX_NGROUPS + 1] = {"A", "B", "C", "D", "alone"};
const char *const hx_engine_names[HX_NENG_NAMED] = {"host", "vec", "mx", "dma"};
const char *const hx_v_variant_names[HX_NV_VARIANTS] = HX_OPT_V_VARIANT_CHOICES;

#define HX_STR_(x) #x
#define HX_STR(x)  HX_STR_(x)
/* The table's named values in the order of the runner's enums (a value's
 * index is its enum), and its bounds where the runner sizes arrays. */
_Static_assert(HX_OPT_V_VARIANT_NCHOICES == HX_NV_VARIANTS && HX_V_ONCHIP == 1, "--v-variant: table and enum");
_Static_assert(HX_OPT_PRECISION_NCHOICES == 2 && HX_FP32 == 0 && HX_U8I8 == 1, "--precision: table and enum");
_Static_assert(HX_OPT_V_RELEASE_NCHOICES == 2 && HX_V_RELEASE_AT_COMPLETION == 0 && HX_V_RELEASE_AT_ENTRY_END == 1,
               "--v-release: table and enum");
_Static_assert(HX_OPT_WAIT_NCHOICES == 2 && HX_WAIT_SPIN == 0 && HX_WAIT_SPIN_BLOCK == 1, "--wait: table and enum");
_Static_assert(HX_OPT_INJECT_CONFLICT_NCHOICES == 2 && HX_INJECT_V_OUT_M_OUT == 1 && HX_INJECT_D_DST_V_SCRATCH == 2,
               "--inject-conflict: table and enum (index + 1)");
_Static_assert(HX_OPT_V_WORKERS_HI == HX_MAX_VWORKERS, "--v-workers: table and HX_MAX_VWORKERS");
_Static_assert(HX_OPT_ANTAGONIST_HI == HX_MAX_ANTAGONISTS && HX_OPT_ANTAGONIST_DEFAULT == 0, "--antagonist");
_Static_assert(HX_OPT_CHECKPOINTS_HI == HX_MAX_CKPT && HX_OPT_CHECKPOINTS_DEFAULT == HX_CKPT_DEFAULT, "--checkpoints");
_Static_assert(HX_OPT_WINDOW_HI == HX_NTASKS, "--window: table and HX_NTASKS");
/* the messages that say "positive" or ">= 0" */
_Static_assert(HX_OPT_D_SRC_STRIDE_LO == 1 && HX_OPT_D_DESC_ROWS_LO == 1 && HX_OPT_ROUNDS_LO == 1, "positive");
_Static_assert(HX_OPT_WARMUP_LO == 0, ">= 0");

/* Index of s among n named values, or -1. */
static int choice(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

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

static void set_defaults(hx_config *c) {
    memset(c, 0, sizeof *c);
    c->nworkloads = 1;
    c->workloads[0] = HX_BIT(HX_M) | HX_BIT(HX_V) | HX_BIT(HX_D);
    c->precision = HX_OPT_PRECISION_DEFAULT_INDEX;
    c->m = HX_OPT_M_SHAPE_DEFAULT_0, c->n = HX_OPT_M_SHAPE_DEFAULT_1, c->k = HX_OPT_M_SHAPE_DEFAULT_2;
    c->v_variant = HX_OPT_V_VARIANT_DEFAULT_INDEX;
    c->v_rows = -1, c->v_cols = -1, c->v_passes = -1, c->v_workers = HX_OPT_V_WORKERS_DEFAULT;
    c->d_rows = HX_OPT_D_SHAPE_DEFAULT_0, c->d_row_bytes = HX_OPT_D_SHAPE_DEFAULT_1, c->d_src_stride = -1;
    c->d_desc_rows = HX_OPT_D_DESC_ROWS_DEFAULT, c->d_repeat = HX_OPT_D_REPEAT_DEFAULT;
    c->d_buffers = HX_OPT_D_BUFFERS_DEFAULT;
    c->preempt_at_trial = -1;
    c->m_tile = HX_M_TILE_DEFAULT;
    c->v_release = HX_OPT_V_RELEASE_DEFAULT_INDEX;
    c->window = 0; /* all */
    c->antagonist_bytes = HX_OPT_ANTAGONIST_BYTES_DEFAULT;
    c->scratch_bytes = HX_OPT_SCRATCH_BYTES_DEFAULT;
    c->warmup = HX_OPT_WARMUP_DEFAULT, c->rounds = HX_OPT_ROUNDS_DEFAULT, c->seed = HX_OPT_SEED_DEFAULT;
    c->wait = (hx_wait_policy){(hx_wait_strategy)HX_OPT_WAIT_DEFAULT_INDEX, HX_OPT_SPIN_NS_DEFAULT};
    for (int i = 0; i < HX_NENG_ALL; i++) c->affinity[i] = -1;
    c->affinity_spec = "none";
    c->early_completion = HX_OPT_EARLY_COMPLETION_DEFAULT;
    c->groups = 0xF;
    c->checkpoints = HX_OPT_CHECKPOINTS_DEFAULT;
}

/* The options whose values need more than a bound (their own syntax, or a
 * second field set): hx_opt custom parsers on the configuration (o->dst).
 * A -1 with err left empty is worded from the option's `why`. */
static int m_shape_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    hx_config *c = o->dst;
    int t[3];
    (void)err, (void)n;
    if (parse_ints(v, 3, HX_OPT_M_SHAPE_LO, HX_OPT_M_SHAPE_HI, t)) return -1;
    c->m = t[0], c->n = t[1], c->k = t[2];
    return 0;
}

static int m_tile_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    hx_config *c = o->dst;
    long L;
    (void)err, (void)n;
    if (parse_long(v, HX_OPT_M_TILE_LO, HX_OPT_M_TILE_HI, &L) || L % HX_OPT_M_TILE_MULTIPLE) return -1;
    c->m_tile = (int)L, c->m_tile_set = 1;
    return 0;
}

static int v_shape_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    hx_config *c = o->dst;
    int t[2];
    (void)err, (void)n;
    if (parse_ints(v, 2, HX_OPT_V_SHAPE_LO, HX_OPT_V_SHAPE_HI, t)) return -1;
    c->v_rows = t[0], c->v_cols = t[1], c->v_shape_set = 1;
    return 0;
}

static int d_shape_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    hx_config *c = o->dst;
    int t[2];
    (void)err, (void)n;
    if (parse_ints(v, 2, HX_OPT_D_SHAPE_LO, HX_OPT_D_SHAPE_HI, t)) return -1;
    c->d_rows = t[0], c->d_row_bytes = t[1];
    return 0;
}

static int window_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    int *window = o->dst;
    long L;
    (void)err, (void)n;
    if (!strcmp(v, "all")) L = 0;
    else if (parse_long(v, HX_OPT_WINDOW_LO, HX_OPT_WINDOW_HI, &L)) return -1;
    *window = (int)L;
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

static int workloads_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    (void)err, (void)n;
    return parse_workloads(v, o->dst);
}

static int affinity_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    hx_config *c = o->dst;
    c->affinity_spec = v;
    c->spread = !strcmp(v, "spread");
    return !c->spread && parse_affinity(v, c, err, n) ? -1 : 0;
}

/* strtoull's reading, as the pipeline has always passed it (base 0). */
static int seed_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    char *end;
    (void)err, (void)n;
    errno = 0;
    *(uint64_t *)o->dst = strtoull(v, &end, 0);
    return errno || end == v || *end ? -1 : 0;
}

static int calibrate_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    hx_config *c = o->dst;
    int seen[HX_NTASKS] = {0};
    (void)err, (void)n;
    if (parse_named(v, hx_task_names, HX_NTASKS, 0, 1e7, c->calib_us, seen)) return -1;
    c->calibrate = 1;
    return 0;
}

static int label_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    hx_config *c = o->dst;
    const char *eq = strchr(v, '=');
    (void)err, (void)n;
    if (!eq || eq == v || c->nlabels == HX_MAX_LABELS) return -1;
    c->label_key[c->nlabels] = strndup(v, (size_t)(eq - v));
    c->label_val[c->nlabels++] = eq + 1;
    return 0;
}

static int inject_arg(const hx_opt *o, const char *v, char *err, size_t n) {
    static const char *const names[] = HX_OPT_INJECT_CONFLICT_CHOICES;
    int i = choice(v, names, HX_OPT_INJECT_CONFLICT_NCHOICES);
    (void)err, (void)n;
    if (i < 0) return -1;
    *(int *)o->dst = i + 1;
    return 0;
}

static const char *const precisions[] = HX_OPT_PRECISION_CHOICES, *const v_releases[] = HX_OPT_V_RELEASE_CHOICES,
                         *const on_off[] = {"off", "on"};
#define HX_NOPTS 34

/* long: one flat table of hxrun's options, an entry per option (the order of the usage text) */
static void options(hx_opt t[HX_NOPTS], hx_config *c) {
    const hx_opt all[HX_NOPTS] = {
        {"--out", HX_OPT_STR, .dst = &c->out_path},
        {"--npy-dir", HX_OPT_STR, .dst = &c->npy_dir},
        {"--workloads", HX_OPT_CUSTOM, c, .parse = workloads_arg,
         .why = "expected a comma list of distinct mv, md, mvd"},
        {"--precision", HX_OPT_ENUM, &c->precision, .choices = precisions, .nchoices = HX_OPT_PRECISION_NCHOICES,
         .why = "expected fp32 or u8i8"},
        {"--m-shape", HX_OPT_CUSTOM, c, .parse = m_shape_arg, .why = "expected M,N,K each in " HX_OPT_M_SHAPE_RANGE},
        {"--m-tile", HX_OPT_CUSTOM, c, .parse = m_tile_arg,
         .why = "expected the GEMM k-block depth: a multiple of " HX_STR(
             HX_OPT_M_TILE_MULTIPLE) " in " HX_OPT_M_TILE_RANGE},
        {"--v-variant", HX_OPT_ENUM, &c->v_variant, .choices = hx_v_variant_names, .nchoices = HX_NV_VARIANTS,
         .why = "expected compute, onchip, ddr or stream"},
        {"--v-shape", HX_OPT_CUSTOM, c, .parse = v_shape_arg,
         .why = "expected ROWS,COLS each in " HX_OPT_V_SHAPE_RANGE},
        {"--v-passes", HX_OPT_INT, &c->v_passes, HX_OPT_V_PASSES_LO, HX_OPT_V_PASSES_HI,
         .why = "expected an integer in " HX_OPT_V_PASSES_RANGE},
        {"--v-workers", HX_OPT_INT, &c->v_workers, HX_OPT_V_WORKERS_LO, HX_OPT_V_WORKERS_HI,
         .why = "expected an integer in " HX_OPT_V_WORKERS_RANGE},
        {"--v-release", HX_OPT_ENUM, &c->v_release, .choices = v_releases, .nchoices = HX_OPT_V_RELEASE_NCHOICES,
         .why = "expected at-completion or at-entry-end"},
        {"--window", HX_OPT_CUSTOM, &c->window, .parse = window_arg,
         .why = "expected all or an integer in " HX_OPT_WINDOW_RANGE},
        {"--d-shape", HX_OPT_CUSTOM, c, .parse = d_shape_arg,
         .why = "expected ROWS,ROW_BYTES each >= " HX_STR(HX_OPT_D_SHAPE_LO)},
        {"--d-src-stride", HX_OPT_INT, &c->d_src_stride, HX_OPT_D_SRC_STRIDE_LO, HX_OPT_D_SRC_STRIDE_HI,
         .why = "expected a positive integer"},
        {"--d-desc-rows", HX_OPT_INT, &c->d_desc_rows, HX_OPT_D_DESC_ROWS_LO, HX_OPT_D_DESC_ROWS_HI,
         .why = "expected a positive integer"},
        {"--d-repeat", HX_OPT_INT, &c->d_repeat, HX_OPT_D_REPEAT_LO, HX_OPT_D_REPEAT_HI,
         .why = "expected an integer in " HX_OPT_D_REPEAT_RANGE},
        {"--d-buffers", HX_OPT_INT, &c->d_buffers, HX_OPT_D_BUFFERS_LO, HX_OPT_D_BUFFERS_HI, .why = "expected 1 or 2"},
        /* a 32-bit size_t holds at most 2^31 - 1 of the table's range */
        {"--scratch-bytes", HX_OPT_SIZE, &c->scratch_bytes, HX_OPT_SCRATCH_BYTES_LO,
         (long long)(SIZE_MAX > 0xFFFFFFFFu ? HX_OPT_SCRATCH_BYTES_HI : 0x7FFFFFFF), .why = "expected a byte count"},
        {"--warmup", HX_OPT_INT, &c->warmup, HX_OPT_WARMUP_LO, HX_OPT_WARMUP_HI, .why = "expected an integer >= 0"},
        {"--rounds", HX_OPT_INT, &c->rounds, HX_OPT_ROUNDS_LO, HX_OPT_ROUNDS_HI, .why = "expected an integer >= 1"},
        {"--seed", HX_OPT_CUSTOM, &c->seed, .parse = seed_arg, .why = "expected an unsigned integer"},
        {"--wait", HX_OPT_CUSTOM, &c->wait.strategy, .parse = wait_arg, .why = "expected spin or spin-block"},
        {"--spin-ns", HX_OPT_I64, &c->wait.spin_ns, HX_OPT_SPIN_NS_LO, HX_OPT_SPIN_NS_HI,
         .why = "expected ns in [0, 1e9]"},
        {"--antagonist", HX_OPT_INT, &c->antagonists, HX_OPT_ANTAGONIST_LO, HX_OPT_ANTAGONIST_HI,
         .why = "expected an integer in " HX_OPT_ANTAGONIST_RANGE},
        {"--antagonist-bytes", HX_OPT_SIZE, &c->antagonist_bytes, HX_OPT_ANTAGONIST_BYTES_LO,
         HX_OPT_ANTAGONIST_BYTES_HI, .why = "expected a byte count in [1 MiB, 1 GiB]"},
        {"--affinity", HX_OPT_CUSTOM, c, .parse = affinity_arg},
        {"--calibrate", HX_OPT_CUSTOM, c, .parse = calibrate_arg,
         .why = "expected M=us,V=us,D=us with microseconds in [0, 1e7]"},
        {"--early-completion", HX_OPT_ENUM, &c->early_completion, .choices = on_off, .nchoices = 2,
         .why = "expected on or off"},
        {"--check-at-publish", HX_OPT_FLAG, .dst = &c->check_at_publish},
        {"--groups", HX_OPT_CUSTOM, &c->groups, .parse = groups_arg, .why = "expected a comma list of A, B, C, D"},
        {"--label", HX_OPT_CUSTOM, c, .parse = label_arg, .why = "expected KEY=VALUE (at most 16)"},
        {"--checkpoints", HX_OPT_INT, &c->checkpoints, HX_OPT_CHECKPOINTS_LO, HX_OPT_CHECKPOINTS_HI,
         .why = "expected an integer in " HX_OPT_CHECKPOINTS_RANGE},
        {"--inject-conflict", HX_OPT_CUSTOM, &c->inject, .parse = inject_arg,
         .why = "expected V-out-aliases-M-out or D-dst-aliases-V-scratch"},
        {"--preempt-at-trial", HX_OPT_I64, &c->preempt_at_trial, HX_OPT_PREEMPT_AT_TRIAL_LO, HX_OPT_PREEMPT_AT_TRIAL_HI,
         .why = "expected a trial index >= 0"},
    };
    memcpy(t, all, sizeof all);
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

/* The wording hxrun's errors have always had: "OPT: why (got 'VALUE')";
 * integers in C's notations (0x.., 0..). */
static const hx_opt_style STYLE = {
    .unknown = "%s: unknown option (got '%s')",
    .missing = "%s: missing value (got '')",
    .stray = "%s: unexpected argument (got '%s')",
    .base = 0,
};

int hx_parse_args(int argc, char **argv, hx_config *c, char *err, size_t n) {
    hx_opt t[HX_NOPTS];
    set_defaults(c);
    options(t, c);
    int rc = hx_opts_parse(t, HX_NOPTS, &STYLE, argc, argv, err, n);
    if (rc) return rc;
    if (!c->out_path) return fail(err, n, "--out", "is required", "");
    return finish(c, err, n);
}
