/* hxrun: runs one sweep point (see docs/runner.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec.h"
#include "protocol.h"
#include "record.h"
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
    hx_out out;
    if (hx_out_open(&out, "hxrun", cfg.out_path)) {
        hx_exec_teardown(&x);
        return 1;
    }
    rc = hx_protocol_run(&x, out.f, err, sizeof err);
    hx_exec_teardown(&x);
    rc = hx_out_close(&out, rc, err);
    if (rc == 4) fprintf(stderr, "hxrun: error: checksum mismatch in some trials (see %s)\n", cfg.out_path);
    if (rc == 6) fprintf(stderr, "hxrun: error: %s (%s)\n", err, cfg.out_path);
    return rc;
}
