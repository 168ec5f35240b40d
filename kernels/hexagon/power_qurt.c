/* Power and clock votes for the run (see vtcm_qurt.h).
 *
 * STATUS: written against the documented Hexagon SDK API (HAP_power.h),
 * compile-checked with the open toolchain (make sdk-check), not yet run on a
 * simulator or phone.
 *
 * Without votes the cDSP runs at whatever DCVS picks for a bursty client and
 * HMX is unpowered.  The sequence is the one public HVX/HMX code uses
 * (Apache TVM's Hexagon power manager, llama.cpp's HTP backend): compute
 * client class; DCVS v3 with DCVS off, core and bus pinned to the maximum
 * corner, sleep disabled; HVX on; HMX on: before v75 HAP_power_set_HMX
 * (power only: no separate HMX clock), from v75 HAP_power_set_HMX_v2 with
 * power and the HMX clock at the maximum corner in high-performance mode, as
 * llama.cpp's ggml/src/ggml-hexagon/htp/main.c does (its users traced an
 * AEE 0x80000414 to this vote, and the HMX clock vote alone moved its
 * prompt throughput by about a third).  A refused HMX clock vote does not end
 * the run: HMX is then powered without it, and both the refusal (with its
 * code) and what was granted are in the run's resources record
 * (power_votes, power_votes_refused): a run without its clock vote is a run
 * at an unknown HMX clock, and says so. */
#include <stdio.h>
#include <string.h>
#include <HAP_power.h>
#include "vtcm_qurt.h"

/* The vote's context: any stable address identifies this client. */
static int power_ctx;
static const char *done[8];
static int ndone;
static struct {
    const char *what;
    int rc;
} refused[8];
static int nrefused;

static int vote(HAP_power_request_t *r, const char *what, char *err, size_t errlen) {
    int rc = HAP_power_set((void *)&power_ctx, r);
    if (rc != 0 && nrefused < (int)(sizeof refused / sizeof refused[0]))
        refused[nrefused].what = what, refused[nrefused++].rc = rc;
    if (rc != 0) {
        snprintf(err, errlen, "power vote %s: HAP_power_set failed (rc 0x%x)", what, (unsigned)rc);
        return -1;
    }
    if (ndone < (int)(sizeof done / sizeof done[0])) done[ndone++] = what;
    return 0;
}

int hx_power_vote(int hmx, char *err, size_t errlen) {
    HAP_power_request_t r;
    ndone = 0, nrefused = 0;
    memset(&r, 0, sizeof r);
    r.type = HAP_power_set_apptype;
    r.apptype = HAP_POWER_COMPUTE_CLIENT_CLASS;
    if (vote(&r, "apptype=compute", err, errlen)) return -1;

    memset(&r, 0, sizeof r);
    r.type = HAP_power_set_DCVS_v3;
    r.dcvs_v3.set_dcvs_enable = 1;
    r.dcvs_v3.dcvs_enable = 0;
    r.dcvs_v3.set_core_params = 1;
    r.dcvs_v3.core_params.min_corner = HAP_DCVS_VCORNER_MAX;
    r.dcvs_v3.core_params.max_corner = HAP_DCVS_VCORNER_MAX;
    r.dcvs_v3.core_params.target_corner = HAP_DCVS_VCORNER_MAX;
    r.dcvs_v3.set_bus_params = 1;
    r.dcvs_v3.bus_params.min_corner = HAP_DCVS_VCORNER_MAX;
    r.dcvs_v3.bus_params.max_corner = HAP_DCVS_VCORNER_MAX;
    r.dcvs_v3.bus_params.target_corner = HAP_DCVS_VCORNER_MAX;
    r.dcvs_v3.set_sleep_disable = 1;
    r.dcvs_v3.sleep_disable = 1;
    if (vote(&r, "dcvs_v3=off,core=max,bus=max,sleep=off", err, errlen)) return -1;

    memset(&r, 0, sizeof r);
    r.type = HAP_power_set_HVX;
    r.hvx.power_up = 1;
    if (vote(&r, "hvx=on", err, errlen)) return -1;

    if (hmx) {
#if defined(__HVX_ARCH__) && __HVX_ARCH__ >= 75
        memset(&r, 0, sizeof r);
        r.type = HAP_power_set_HMX_v2;
        r.hmx_v2.set_power = 1;
        r.hmx_v2.power_up = 1;
        r.hmx_v2.set_clock = 1;
        r.hmx_v2.target_corner = HAP_DCVS_EXP_VCORNER_MAX;
        r.hmx_v2.min_corner = HAP_DCVS_EXP_VCORNER_MAX;
        r.hmx_v2.max_corner = HAP_DCVS_EXP_VCORNER_MAX;
        r.hmx_v2.perf_mode = HAP_CLK_PERF_HIGH;
        char ignore[200];
        if (vote(&r, "hmx_v2=on,clock=max", ignore, sizeof ignore) == 0) return 0;
        /* the clock refused: power alone, so the run says what it ran at */
        memset(&r, 0, sizeof r);
        r.type = HAP_power_set_HMX_v2;
        r.hmx_v2.set_power = 1;
        r.hmx_v2.power_up = 1;
        if (vote(&r, "hmx_v2=on", err, errlen)) return -1;
#else
        memset(&r, 0, sizeof r);
        r.type = HAP_power_set_HMX;
        r.hmx.power_up = 1;
        if (vote(&r, "hmx=on", err, errlen)) return -1;
#endif
    }
    return 0;
}

int hx_power_refused(const char *const **what, const int **rc) {
    static const char *w[8];
    static int c[8];
    for (int i = 0; i < nrefused; i++) w[i] = refused[i].what, c[i] = refused[i].rc;
    *what = w, *rc = c;
    return nrefused;
}

void hx_power_release(void) {
    HAP_power_request_t r;
    for (int i = ndone - 1; i >= 0; i--) {
        memset(&r, 0, sizeof r);
        if (!strcmp(done[i], "hmx=on")) {
            r.type = HAP_power_set_HMX;
            r.hmx.power_up = 0;
        } else if (!strncmp(done[i], "hmx_v2", 6)) {
            r.type = HAP_power_set_HMX_v2;
            r.hmx_v2.set_power = 1;
            r.hmx_v2.power_up = 0;
        } else if (!strcmp(done[i], "hvx=on")) {
            r.type = HAP_power_set_HVX;
            r.hvx.power_up = 0;
        } else if (!strncmp(done[i], "dcvs_v3", 7)) {
            r.type = HAP_power_set_DCVS_v3;
            r.dcvs_v3.set_dcvs_enable = 1;
            r.dcvs_v3.dcvs_enable = 1;
            r.dcvs_v3.set_sleep_disable = 1;
            r.dcvs_v3.sleep_disable = 0;
        } else {
            continue;
        }
        HAP_power_set((void *)&power_ctx, &r);
    }
}

int hx_power_votes(const char *const **votes) {
    *votes = done;
    return ndone;
}
