/* hxrun-ap: runs one sweep point from the application processor, with the
 * executor on the cDSP (docs/runner.md; the boundary: ap/wire.h).  The
 * structure is hxrun's main.c: validate every argument before any work, set
 * the executor up, pin the host, run the protocol, and exit with hxrun's
 * codes (0, 1, 2, 3, 4, 6), plus 7 when the DSP's clock could not be
 * aligned with the AP's within the bound (end status clock_unaligned). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock_align.h"
#include "cli.h"
#include "../hxrun/exec.h"
#include "../hxrun/ladder.h"
#include "exec_ap.h"
#include "../hxrun/protocol.h"
#include "platform.h"
#include "record.h"
#include "rpc.h"

static void usage(FILE *f) {
    hx_usage(f);
    fputs(
        "hxrun-ap: the same options, run from the application processor with the executor on the cDSP;\n"
        "and its own:\n"
        "  --cdsprpc PATH              the FastRPC library to load (default: $HX_CDSPRPC_LIB, else " HX_CDSPRPC_DEFAULT
        ")\n"
        "  --clock-bound-ns N          refuse the clock alignment when the DSP clock's offset moves by more\n"
        "                              than N ns beyond the two fits' uncertainty (default 5000; exit 7,\n"
        "                              status clock_unaligned)\n"
        "  --ap-timeout-s S            every wait on the DSP ends the run with an error after S s (default 60)\n"
        "  --test-dsp-clock-offset-ns N, --test-dsp-clock-drift-ppm P\n"
        "                              test hook: the skel gives its clock this offset and drift\n"
        "  --selftest --out FILE [--cdsprpc PATH] [--selftest-step-timeout S]\n"
        "                              the boundary's first-day ladder (library, session, setup, queues,\n"
        "                              ping, threads, one request, one fused entry, teardown); the DSP's:\n"
        "                              hxrun --selftest\n"
        "  not available: --check-at-publish (the AP cannot read DSP memory at publication)\n",
        f);
}

static int bad(const char *opt, const char *why, const char *val) {
    fprintf(stderr, "hxrun-ap: error: %s: %s (got '%s')\n", opt, why, val ? val : "");
    usage(stderr);
    return 2;
}

static int parse_double(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* Takes hxrun-ap's own options out of argv (into o), leaving hxrun's in
 * fwd[0..*nfwd).  Values are skipped as values, so an option name given as
 * another option's value is never taken for an option.  Returns 0, or 2
 * after printing the error. */
static int strip_options(int argc, char **argv, hx_ap_options *o, char **fwd, int *nfwd) {
    int n = 0;
    fwd[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int ours = !strcmp(a, "--cdsprpc") || !strcmp(a, "--clock-bound-ns") || !strcmp(a, "--ap-timeout-s") ||
                   !strcmp(a, "--test-dsp-clock-offset-ns") || !strcmp(a, "--test-dsp-clock-drift-ppm");
        if (!ours) {
            fwd[n++] = argv[i];
            /* hxrun's options take one value, but for these two */
            if (strncmp(a, "--", 2) == 0 && strcmp(a, "--help") && strcmp(a, "--check-at-publish") && i + 1 < argc)
                fwd[n++] = argv[++i];
            continue;
        }
        if (i + 1 >= argc) return bad(a, "missing value", "");
        const char *v = argv[++i];
        long long ll;
        if (!strcmp(a, "--cdsprpc")) {
            if (!*v) return bad(a, "expected a library path", v);
            o->cdsprpc = v;
        } else if (!strcmp(a, "--clock-bound-ns")) {
            if (hx_parse_ll(v, 10, 0, 1000000000000ll, &ll)) return bad(a, "expected ns in [0, 1e12]", v);
            o->clock_bound_ns = (uint64_t)ll;
        } else if (!strcmp(a, "--ap-timeout-s")) {
            if (parse_double(v, 0.001, 86400, &o->timeout_s)) return bad(a, "expected seconds in [0.001, 86400]", v);
        } else if (!strcmp(a, "--test-dsp-clock-offset-ns")) {
            if (hx_parse_ll(v, 10, -1000000000000000ll, 1000000000000000ll, &ll))
                return bad(a, "expected ns within +-1e15", v);
            o->test_offset_ns = ll;
            o->test_clock = 1;
        } else {
            if (parse_double(v, -1e5, 1e5, &o->test_drift_ppm)) return bad(a, "expected ppm within +-1e5", v);
            o->test_clock = 1;
        }
    }
    fwd[n] = NULL;
    *nfwd = n;
    return 0;
}

/* hxrun-ap --selftest: the boundary's first-day ladder.  Each set-up step
 * of the driver (exec_ap.h) runs alone and is recorded, then one empty
 * request (group A, M) and one empty fused entry (group D, mvd) cross the
 * queues, and teardown (STOP, the queues' close, the session's close) runs
 * as the last step, bounded by half the step timeout so that a hung one is
 * named with the call it is stuck in.  Each failure's detail carries the
 * AEE code in hex, decoded, with a hint (rpc.h).  As hxrun --selftest: each step is written and flushed before it
 * starts and when it ends (a crash leaves the step that crashed), and a
 * watchdog names a step that does not return.  A step after a failed one is
 * not run (each needs the one before).  Exit 0: every step passed; 1: one
 * failed; 5: one hung; 2: bad arguments.  The DSP side's own ladder is
 * hxrun --selftest (dsp-only). */
enum { ST_REQUEST = HX_AP_NSTEPS, ST_FUSED, ST_TEARDOWN, ST_N };
static const char *st_name(int i) {
    return i < HX_AP_NSTEPS ? hx_ap_step_names[i] : i == ST_REQUEST ? "request" : i == ST_FUSED ? "fused" : "teardown";
}

static void st_log(const char *line) { fprintf(stderr, "%s\n", line); }
static void st_sleep_ms(unsigned ms) { hx_sleep_ns((uint64_t)ms * 1000000u); }

/* The log and the watchdog: hxrun's (hxrun/ladder.c). */
static hx_ladder L = {
    .log_prefix = "hxrun-ap: selftest: ",
    .name_width = 8,
    .mode = "ap",
    .n = ST_N,
    .name = st_name,
    .log = st_log,
    .sleep_ms = st_sleep_ms,
};

/* One trial of `group` with empty tasks: the boundary's round trip alone. */
static int st_trial(hx_exec *x, int group, uint32_t mask, char *d, size_t n) {
    hx_host_times h;
    if (hx_run_group(x, group, mask, 1, &h, d, n)) return -1;
    snprintf(d, n, "%d request(s), makespan %llu ns (submit %llu ns, wait %llu ns)", h.requests,
             (unsigned long long)(h.wait_end - h.submit_begin), (unsigned long long)h.submit_ns,
             (unsigned long long)h.wait_ns);
    return 0;
}

/* Teardown on a thread of its own, bounded: STOP, the queues' close and
 * the session's close all wait on the DSP, and a DSP stuck (or a PD dead in
 * a way the library does not notice) would hold the process for ever.
 * Returns 0, or -1 with the call it is stuck in named in d (the thread is
 * left behind: the process ends soon after). */
typedef struct teardown_job {
    hx_exec *x;
    int done;
} teardown_job;

static void *teardown_thread(void *arg) {
    teardown_job *j = arg;
    hx_exec_teardown(j->x);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static int bounded_teardown(hx_exec *x, double bound_s, char *d, size_t n) {
    static teardown_job j;
    j = (teardown_job){x, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, teardown_thread, &j) != 0) {
        hx_exec_teardown(x);
        snprintf(d, n, "torn down (unbounded: no thread for the bound)");
        return 0;
    }
    uint64_t deadline = hx_now_ns() + (uint64_t)(bound_s * 1e9);
    while (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE) && hx_now_ns() < deadline) hx_sleep_ns(1000000u);
    if (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE)) {
        pthread_detach(t);
        snprintf(d, n,
                 "teardown did not return within %g s: stuck in %s; hint: a DSP thread does not finish (a hung "
                 "engine, or a DSP process that died without FastRPC noticing); the session cannot be closed from "
                 "here: end this process, and if the next run hangs at once, restart the cDSP session (reboot); "
                 "the DSP's side is in adb logcat -s adsprpc",
                 bound_s, hx_ap_teardown_stage());
        return -1;
    }
    pthread_join(t, NULL);
    snprintf(d, n, "STOP, the queues' close and the session's close returned");
    return 0;
}

static int selftest_main(int argc, char **argv) {
    const char *out = NULL, *hang = NULL;
    double timeout_s = 10;
    hx_ap_options opt = {.clock_bound_ns = HX_CLOCK_BOUND_DEFAULT_NS, .timeout_s = HX_AP_TIMEOUT_DEFAULT_S};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--selftest")) continue;
        if (i + 1 >= argc) return bad(a, "missing value", "");
        const char *v = argv[++i];
        if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--cdsprpc")) opt.cdsprpc = v;
        else if (!strcmp(a, "--selftest-hang")) hang = v; /* test hook: that step sleeps for ever */
        else if (!strcmp(a, "--label")) continue;         /* device.sh adds the phone's serial */
        else if (!strcmp(a, "--selftest-step-timeout")) {
            if (parse_double(v, 0.1, 3600, &timeout_s)) return bad(a, "expected seconds in [0.1, 3600]", v);
        } else return bad(a, "not a --selftest option (--out, --cdsprpc, --selftest-step-timeout)", a);
    }
    if (!out) return bad("--selftest", "needs --out FILE", "");
    /* The DSP builds a small executor: the ladder tests the boundary, not the sizes. */
    static char *dsp_argv[] = {"hxrun",    "--out",     "/dev/null", "--workloads", "mvd",    "--m-shape",
                               "64,64,64", "--v-shape", "64,256",    "--d-shape",   "64,256", NULL};
    static hx_config cfg;
    char err[1024];
    if (hx_parse_args(11, dsp_argv, &cfg, err, sizeof err)) {
        fprintf(stderr, "hxrun-ap: error: the self-test's own options: %s\n", err);
        return 1;
    }
    opt.argc = 11, opt.argv = dsp_argv;
    hx_ap_set_options(&opt);
    /* Written in place, not FILE.tmp: a crash must leave the steps so far. */
    if (!(L.out = fopen(out, "w"))) {
        fprintf(stderr, "hxrun-ap: error: cannot open %s for writing\n", out);
        return 1;
    }
    L.timeout_ns = (uint64_t)(timeout_s * 1e9);
    hx_thread *wd = hx_ladder_start(&L, err, sizeof err);
    static hx_exec x;
    hx_ap_begin(&x, &cfg);
    int failed = 0, torn_down = 0;
    /* teardown's own bound: well inside the watchdog's, so that the step
     * names the call it is stuck in */
    double bound_s = timeout_s / 2;
    for (int i = 0; i < ST_N && !failed; i++) {
        char d[2048] = "";
        hx_ladder_begin(&L, i);
        if (hang && !strcmp(hang, st_name(i)))
            for (;;) hx_sleep_ns(1000000000u);
        int rc = i < HX_AP_NSTEPS  ? hx_ap_step(i, d, sizeof d)
                 : i == ST_REQUEST ? st_trial(&x, HX_G_A, HX_BIT(HX_M), d, sizeof d)
                 : i == ST_FUSED   ? st_trial(&x, HX_G_D, HX_BIT(HX_M) | HX_BIT(HX_V) | HX_BIT(HX_D), d, sizeof d)
                                   : bounded_teardown(&x, bound_s, d, sizeof d);
        torn_down |= i == ST_TEARDOWN;
        failed = rc != 0;
        hx_ladder_end(&L, i, rc ? HX_LADDER_FAIL : HX_LADDER_PASS, d);
    }
    if (!torn_down) {
        /* after a failed step: not a step of the ladder, still bounded */
        char d[2048];
        if (bounded_teardown(&x, bound_s, d, sizeof d)) fprintf(stderr, "hxrun-ap: selftest: %s\n", d);
    }
    return hx_ladder_finish(&L, wd);
}

int main(int argc, char **argv) {
    hx_config cfg;
    char err[1024] = "";
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--selftest")) return selftest_main(argc, argv);
    hx_ap_options opt = {.clock_bound_ns = HX_CLOCK_BOUND_DEFAULT_NS, .timeout_s = HX_AP_TIMEOUT_DEFAULT_S};
    static char *fwd[4096];
    int nfwd = 0;
    if (argc >= (int)(sizeof fwd / sizeof fwd[0])) return bad("argv", "too many arguments", "");
    int rc = strip_options(argc, argv, &opt, fwd, &nfwd);
    if (rc) return rc;
    /* Every argument is checked here, before the library is loaded: the
     * DSP parses the same options with the same parser. */
    rc = hx_parse_args(nfwd, fwd, &cfg, err, sizeof err);
    if (rc > 0) {
        usage(stdout);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "hxrun-ap: error: %s\n", err);
        usage(stderr);
        return 2;
    }
    if (cfg.check_at_publish) {
        fprintf(stderr, "hxrun-ap: error: --check-at-publish: the AP cannot read the DSP's memory at publication "
                        "(use hxrun on the DSP)\n");
        return 2;
    }
    opt.argc = nfwd;
    opt.argv = fwd;
    hx_ap_set_options(&opt);
    static hx_exec x; /* large: keep it off the stack */
    rc = hx_exec_setup(&x, &cfg, NULL, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "hxrun-ap: error: %s\n", err);
        hx_exec_teardown(&x);
        return rc == -2 ? 2 : rc == -3 ? 3 : 1;
    }
    /* As hxrun: the host pins itself after the executor exists. */
    int host = cfg.affinity[HX_ENG_HOST];
    if (host >= 0 && hx_pin_self(host) != 0) {
        if (!cfg.spread) {
            fprintf(stderr, "hxrun-ap: error: --affinity: cannot pin host to core %d\n", host);
            hx_exec_teardown(&x);
            return 2;
        }
        cfg.affinity[HX_ENG_HOST] = -1;
        cfg.host_pin_refused = 1;
    }
    hx_out out;
    if (hx_out_open(&out, "hxrun-ap", cfg.out_path)) {
        hx_exec_teardown(&x);
        return 1;
    }
    rc = hx_protocol_run(&x, out.f, err, sizeof err);
    hx_exec_teardown(&x);
    /* 7 is the alignment's only: a boundary that failed after the last trial
     * is a failed run (the file is removed, as for any rc 1) */
    const char *failure = hx_ap_failure();
    if (rc == 7 && failure && strcmp(failure, "clock_unaligned") != 0) rc = 1;
    rc = hx_out_close(&out, rc, err);
    if (rc == 4) fprintf(stderr, "hxrun-ap: error: checksum mismatch in some trials (see %s)\n", cfg.out_path);
    if (rc == 6 || rc == 7) fprintf(stderr, "hxrun-ap: error: %s (%s)\n", err, cfg.out_path);
    return rc;
}
