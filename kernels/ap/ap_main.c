/* hxrun-ap: runs one sweep point from the application processor, with the
 * executor on the cDSP (docs/runner.md; the boundary: ap/wire.h).  The
 * structure is hxrun's main.c: validate every argument before any work, set
 * the executor up, pin the host, run the protocol, and exit with hxrun's
 * codes (0, 1, 2, 3, 4, 6), plus 7 when the DSP's clock could not be
 * aligned with the AP's within the bound (end status clock_unaligned). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock_align.h"
#include "cli.h"
#include "../hxrun/exec.h"
#include "exec_ap.h"
#include "../hxrun/protocol.h"
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
        "                              than N ns over the run (default 5000; exit 7, status clock_unaligned)\n"
        "  --ap-timeout-s S            every wait on the DSP ends the run with an error after S s (default 60)\n"
        "  --test-dsp-clock-offset-ns N, --test-dsp-clock-drift-ppm P\n"
        "                              test hook: the skel gives its clock this offset and drift\n"
        "  not available: --check-at-publish (the AP cannot read DSP memory at publication), --selftest\n",
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

int main(int argc, char **argv) {
    hx_config cfg;
    char err[1024] = "";
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--selftest")) {
            fprintf(stderr, "hxrun-ap --selftest is not implemented yet: use hxrun --selftest (dsp-only)\n");
            return 2;
        }
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
