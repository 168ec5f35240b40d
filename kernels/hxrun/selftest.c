/* hxrun --selftest: the ladder, its log and its watchdog (see selftest.h).
 *
 * Why a ladder: on a first contact with a phone the likely breaks are, in
 * order, load, launch, VTCM, a start-up hang, silently zero CPU time, HMX and
 * file I/O.  A hang or a crash inside a normal run prints nothing that names
 * the step; here every step is written and flushed to the output file before
 * it starts, so the last "running" record names the step even after a crash
 * that takes the process down, and the watchdog names a step that hangs. */
#include "selftest.h"
#include "ladder.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "json.h"
#include "platform.h"

/* The ladder, in order (the issue of what breaks first comes first). */
static const char *const ladder[] = {
    "arch",           "hw_threads",       "hvx_units", "vtcm_query",      "compute_res_caps", "clock",
    "pcycles_per_us", "thread_cpu_time",  "threads",   "affinity",        "power_votes",      "vtcm_64k",
    "vtcm_full",      "hvx_locks",        "hvx_vrmpy", "dma_model",       "dma_4k",           "dma_chain",
    "dma_order",      "dma_back_to_back", "hmx_tile",  "hexkl_footprint", "file_io",
};
enum { NSTEPS = sizeof ladder / sizeof ladder[0] };

static const char *ladder_name(int i) { return ladder[i]; }

/* The log and the watchdog: ladder.c. */
static hx_ladder L = {
    .log_prefix = "hxrun: selftest: ",
    .name_width = 16,
    .lists_na = 1,
    .hung_in_not_run = 1,
    .n = NSTEPS,
    .name = ladder_name,
    .log = hx_st_log,
    .sleep_ms = hx_st_sleep_ms,
};
static const char *out_path;

/* ---- steps every target has, through platform.h ---- */

static int st_arch(char *d, size_t n) {
    char model[256];
    hx_cpu_model(model, sizeof model);
    snprintf(d, n, "target %s, %s", hx_platform_name(), model);
    return HX_ST_PASS;
}

static int st_hw_threads(char *d, size_t n) {
    int c = hx_online_cores(), r = hx_max_ready_threads();
    int k = snprintf(d, n, "%d %s (the runner's %s)", c, hx_cores_words(), hx_cores_key());
    /* where threads are not time-sliced, the count every run is checked against */
    if (r > 0 && k > 0 && (size_t)k < n)
        snprintf(d + k, n - (size_t)k,
                 "; runs refuse more than %d ready threads (host + engines + antagonists) and --wait spin", r);
    return c > 0 ? HX_ST_PASS : HX_ST_FAIL;
}

static int st_clock(char *d, size_t n) {
    uint64_t a = hx_now_ns(), b = a;
    for (long i = 0; i < 200000000L && b - a < 2000000u; i++) b = hx_now_ns(); /* bounded */
    snprintf(d, n, "%s advanced %llu ns (resolution %llu ns)", hx_clock_source(), (unsigned long long)(b - a),
             (unsigned long long)hx_clock_resolution_ns());
    return b - a >= 2000000u ? HX_ST_PASS : HX_ST_FAIL;
}

static int st_thread_cpu(char *d, size_t n) {
    uint64_t c0 = hx_thread_cpu_ns(), w0 = hx_now_ns(), w1 = w0;
    volatile uint64_t sink = 0;
    while (w1 - w0 < 20000000u) { /* 20 ms of work */
        for (int i = 0; i < 10000; i++) sink += (uint64_t)i * i;
        w1 = hx_now_ns();
    }
    uint64_t c1 = hx_thread_cpu_ns();
    snprintf(d, n, "thread CPU time advanced %llu ns over %llu ns of busy wall time%s", (unsigned long long)(c1 - c0),
             (unsigned long long)(w1 - w0),
             c1 > c0 ? "" : ": it does not advance here, so cpu_ns and parallelism would be meaningless");
    return c1 > c0 ? HX_ST_PASS : HX_ST_FAIL;
}

static uint32_t woke;
static void worker(void *arg) {
    (void)arg;
    __atomic_store_n(&woke, 1u, __ATOMIC_RELEASE);
    hx_word_wake_all(&woke);
}

static int st_threads(char *d, size_t n) {
    char err[300] = "";
    woke = 0;
    hx_thread *t = hx_thread_start(worker, NULL, "st_worker", -1, err, sizeof err);
    if (!t) {
        snprintf(d, n, "thread start failed: %s", err);
        return HX_ST_FAIL;
    }
    while (!__atomic_load_n(&woke, __ATOMIC_ACQUIRE)) hx_word_wait(&woke, 0);
    hx_thread_join(t);
    snprintf(d, n, "thread start, futex wake/wait, join");
    return HX_ST_PASS;
}

/* The file I/O the runner relies on (through the DSP's file proxy on a
 * phone): write, read back, rename, remove, next to the output file. */
static int st_file_io(char *d, size_t n) {
    char a[4200], b[4210];
    snprintf(a, sizeof a, "%s.probe", out_path);
    snprintf(b, sizeof b, "%s.renamed", a);
    const char msg[] = "hxfuse selftest probe\n";
    char got[64] = "";
    FILE *f = fopen(a, "w");
    if (!f || fputs(msg, f) < 0 || fclose(f) != 0) {
        snprintf(d, n, "cannot write %.300s", a);
        return HX_ST_FAIL;
    }
    if (rename(a, b) != 0) {
        snprintf(d, n, "cannot rename %.300s (the runner renames FILE.tmp to FILE at the end)", a);
        remove(a);
        return HX_ST_FAIL;
    }
    f = fopen(b, "r");
    int ok = f && fgets(got, sizeof got, f) && !strcmp(got, msg);
    if (f) fclose(f);
    int gone = remove(b) == 0;
    snprintf(d, n, "write, rename, read back%s, remove%s", ok ? "" : " FAILED", gone ? "" : " FAILED");
    return ok && gone ? HX_ST_PASS : HX_ST_FAIL;
}

static const hx_st_step common_steps[] = {
    {"arch", st_arch},       {"hw_threads", st_hw_threads}, {"clock", st_clock}, {"thread_cpu_time", st_thread_cpu},
    {"threads", st_threads}, {"file_io", st_file_io},       {NULL, NULL},
};

/* Platform first, then backend, then the common version. */
static hx_st_fn find(const char *name) {
    const hx_st_step *tables[] = {hx_st_platform_steps, hx_st_backend_steps, common_steps};
    for (int t = 0; t < 3; t++)
        for (const hx_st_step *s = tables[t]; s->name; s++)
            if (!strcmp(s->name, name)) return s->fn;
    return NULL;
}

static int parse(int argc, char **argv, const char **hang) {
    double timeout_s = 10.0;
    for (int i = 1; i < argc; i++) {
        long long v;
        if (!strcmp(argv[i], "--selftest")) continue;
        if (i + 1 >= argc) return -1;
        if (!strcmp(argv[i], "--out")) out_path = argv[++i];
        else if (!strcmp(argv[i], "--selftest-hang")) *hang = argv[++i];
        else if (!strcmp(argv[i], "--selftest-step-timeout") && !hx_parse_ll(argv[i + 1], 10, 1, 3600, &v))
            timeout_s = (double)v, i++;
        else if (!strcmp(argv[i], "--label")) i++; /* device.sh adds the phone's serial */
        else return -1;
    }
    L.timeout_ns = (uint64_t)(timeout_s * 1e9);
    return out_path ? 0 : -1;
}

static void run_step(int i, const char *hang) {
    hx_st_fn fn = find(ladder[i]);
    char detail[400] = "";
    if (!fn) {
        L.status[i] = HX_ST_NA;
        hx_ladder_record(&L, i, hx_ladder_status_name(HX_ST_NA), NULL, -1);
        return;
    }
    hx_ladder_begin(&L, i);
    if (hang && !strcmp(hang, ladder[i]))
        for (;;) hx_st_sleep_ms(1000); /* planted hang (test hook) */
    hx_ladder_end(&L, i, fn(detail, sizeof detail), detail);
}

int hx_selftest_main(int argc, char **argv) {
    const char *hang = NULL;
    if (parse(argc, argv, &hang) != 0) {
        fprintf(stderr, "hxrun: error: usage: hxrun --selftest --out FILE [--selftest-step-timeout S]\n");
        return 2;
    }
    /* Written in place, not FILE.tmp: a crash must leave the steps so far. */
    if (!(L.out = fopen(out_path, "w"))) {
        fprintf(stderr, "hxrun: error: cannot open %s for writing\n", out_path);
        return 1;
    }
    char err[300] = "";
    hx_thread *wd = hx_ladder_start(&L, err, sizeof err);
    if (!wd) {
        char line[400];
        snprintf(line, sizeof line, "hxrun: selftest: no watchdog thread (%s): a hanging step will not be named", err);
        hx_st_log(line);
    }
    for (int i = 0; i < NSTEPS; i++) run_step(i, hang);
    return hx_ladder_finish(&L, wd);
}
