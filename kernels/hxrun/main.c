/* hxrun: runs one sweep point (see docs/runner.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec.h"
#include "protocol.h"
#include "selftest.h"

int main(int argc, char **argv) {
    hx_config cfg;
    char err[1024] = "";
    /* The first-day ladder: its own options, no sweep point. */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--selftest")) return hx_selftest_main(argc, argv);
    int rc = hx_parse_args(argc, argv, &cfg, err, sizeof err);
    if (rc > 0) {
        hx_usage(stdout);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "hxrun: error: %s\n", err);
        hx_usage(stderr);
        return 2;
    }
    /* A tile the backend cannot take is a bad argument: say so before any work. */
    const hx_kernels *k = hx_kernels_fast();
    int tiled = cfg.precision == HX_FP32 ? k->gemm_f32_run_kc != NULL : k->gemm_u8i8_run_kc != NULL;
    if (cfg.m_tile_set && !tiled) {
        fprintf(stderr, "hxrun: error: --m-tile: the %s backend's GEMM blocking is fixed (got '%d')\n", k->name,
                cfg.m_tile);
        return 2;
    }
    static hx_exec x; /* large: keep it off the stack */
    rc = hx_exec_setup(&x, &cfg, k, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "hxrun: error: %s\n", err);
        hx_exec_teardown(&x);
        return rc == -3 ? 3 : 1;
    }
    /* The host pins itself after the engines exist: a floating engine would
     * otherwise inherit the host's core. */
    int host = cfg.affinity[HX_ENG_HOST];
    if (host >= 0 && hx_pin_self(host) != 0) {
        if (!cfg.spread) {
            fprintf(stderr, "hxrun: error: --affinity: cannot pin host to core %d\n", host);
            hx_exec_teardown(&x);
            return 2;
        }
        /* spread asked for a pin the platform refuses (QuRT has no user
         * affinity): the host floats, and the metadata says so. */
        cfg.affinity[HX_ENG_HOST] = -1;
        cfg.host_pin_refused = 1;
    }
    /* Write to FILE.tmp and rename on completion: a crash or a kill never
     * leaves a file that looks like a result. */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", cfg.out_path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        fprintf(stderr, "hxrun: error: cannot open %s for writing\n", tmp);
        hx_exec_teardown(&x);
        return 1;
    }
    rc = hx_protocol_run(&x, out, err, sizeof err);
    hx_exec_teardown(&x);
    if (fclose(out) != 0 && rc == 0) {
        snprintf(err, sizeof err, "write error on %.900s", tmp);
        rc = 1;
    }
    if (rc == 1) {
        fprintf(stderr, "hxrun: error: %s\n", err);
        remove(tmp);
        return 1;
    }
    if (rename(tmp, cfg.out_path) != 0) {
        fprintf(stderr, "hxrun: error: cannot rename %s to %s\n", tmp, cfg.out_path);
        return 1;
    }
    if (rc == 4) fprintf(stderr, "hxrun: error: checksum mismatch in some trials (see %s)\n", cfg.out_path);
    return rc;
}
