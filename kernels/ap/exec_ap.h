/* hxrun-ap's executor (exec_ap.c): the hx_exec hooks of exec.h implemented
 * across the AP/cDSP boundary.  ap_main.c hands it the AP-only options and
 * the hxrun options the DSP parses, before hx_exec_setup. */
#ifndef HX_AP_EXEC_AP_H
#define HX_AP_EXEC_AP_H
#include <stddef.h>
#include <stdint.h>
#include "../hxrun/exec.h"

typedef struct hx_ap_options {
    const char *cdsprpc;     /* NULL: HX_CDSPRPC_LIB, else libcdsprpc.so */
    uint64_t clock_bound_ns; /* --clock-bound-ns */
    double timeout_s;        /* --ap-timeout-s: every wait on the DSP ends with an error after this */
    int test_clock;          /* a --test-dsp-clock-* option was given */
    int64_t test_offset_ns;
    double test_drift_ppm;
    int argc; /* the options the DSP parses (hxrun's, argv[0] first) */
    char **argv;
} hx_ap_options;

#define HX_AP_TIMEOUT_DEFAULT_S 60.0

void hx_ap_set_options(const hx_ap_options *o);
/* After hx_protocol_run returned 7: the end record's failure status
 * ("clock_unaligned", or "transport_error" for a boundary that failed after
 * the last trial), NULL if none. */
const char *hx_ap_failure(void);

/* Set-up in steps, for the self-test ladder (hx_exec_setup runs them all in
 * this order): load the library; the session (unsigned PD, open, latency
 * QoS); SETUP (the DSP builds its executor, the mirror is filled); the
 * queues (create, export, START); the clock ping-pong; the AP's threads.
 * hx_ap_begin first; each step returns 0 with what it saw in detail, or
 * hx_exec_setup's codes with the error there.  hx_exec_teardown after. */
enum {
    HX_AP_STEP_LIBRARY,
    HX_AP_STEP_SESSION,
    HX_AP_STEP_SETUP,
    HX_AP_STEP_QUEUES,
    HX_AP_STEP_PING,
    HX_AP_STEP_THREADS,
    HX_AP_NSTEPS
};
extern const char *const hx_ap_step_names[HX_AP_NSTEPS];
void hx_ap_begin(hx_exec *x, const hx_config *cfg);
int hx_ap_step(int step, char *detail, size_t len);
/* The call hx_exec_teardown is in now ("done" when it returned). */
const char *hx_ap_teardown_stage(void);
#endif
