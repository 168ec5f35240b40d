/* VTCM and HMX through HAP_compute_res (see vtcm_qurt.h).
 *
 * STATUS: written against the documented Hexagon SDK API, not yet run on
 * hardware.  Builds only with the Hexagon SDK (HAP_compute_res.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <HAP_compute_res.h>
#include "../src/platform.h"
#include "vtcm_qurt.h"

#ifndef HX_VTCM_TIMEOUT_US
#define HX_VTCM_TIMEOUT_US 1000000u
#endif

static struct {
    unsigned int ctx;     /* compute-resource context, 0 = none */
    uint8_t *base;
    size_t acquired, defined;
    size_t arena_bytes, hmx_bytes;
    int hmx;              /* HMX attribute requested */
    int arena_taken;
} g;

int hx_vtcm_init(size_t arena_bytes, size_t hmx_bytes, char *err, size_t errlen) {
    if (g.ctx) return 0;
    unsigned int defined = 0;
    if (HAP_compute_res_query_VTCM(0, &defined, NULL, NULL, NULL) != 0 || defined == 0) {
        snprintf(err, errlen, "HAP_compute_res_query_VTCM failed: no VTCM on this DSP");
        return -1;
    }
    g.defined = defined;
    /* HMX tiles want 2 KiB alignment inside the region: round the arena. */
    size_t arena = (arena_bytes + 4095) & ~(size_t)4095;
    size_t want = arena + hmx_bytes;
    if (want > defined) {
        snprintf(err, errlen,
                 "VTCM: arena %zu + HMX region %zu bytes exceed the %u bytes this DSP defines; "
                 "lower --scratch-bytes", arena, hmx_bytes, defined);
        return -1;
    }
    compute_res_attr_t attr;
    HAP_compute_res_attr_init(&attr);
    HAP_compute_res_attr_set_serialize(&attr, 0);
    /* One contiguous block (min page size = the request) so that offsets
     * are plain pointer arithmetic; all of it is required. */
    HAP_compute_res_attr_set_vtcm_param_v2(&attr, (unsigned int)want, (unsigned int)want, (unsigned int)want);
    if (hmx_bytes) HAP_compute_res_attr_set_hmx_param(&attr, 1);
    g.ctx = HAP_compute_res_acquire(&attr, HX_VTCM_TIMEOUT_US);
    if (!g.ctx) {
        snprintf(err, errlen, "HAP_compute_res_acquire(VTCM %zu bytes%s) failed: another client holds "
                 "VTCM/HMX, or the PD is not allowed to (unsigned PD needs cDSP)", want,
                 hmx_bytes ? ", HMX" : "");
        return -1;
    }
    void *p = NULL;
    unsigned int got = 0;
    if (HAP_compute_res_attr_get_vtcm_ptr_v2(&attr, &p, &got) != 0 || !p || got < want) {
        HAP_compute_res_release(g.ctx);
        g.ctx = 0;
        snprintf(err, errlen, "HAP_compute_res_attr_get_vtcm_ptr_v2 returned %u of %zu bytes", got, want);
        return -1;
    }
    g.base = (uint8_t *)p;
    g.acquired = got;
    g.arena_bytes = arena;
    g.hmx_bytes = hmx_bytes;
    g.hmx = hmx_bytes != 0;
    return 0;
}

void hx_vtcm_release(void) {
    if (g.ctx) HAP_compute_res_release(g.ctx);
    memset(&g, 0, sizeof g);
}

uint8_t *hx_vtcm_arena(size_t *bytes) {
    if (bytes) *bytes = g.ctx ? g.arena_bytes : 0;
    return g.ctx ? g.base : NULL;
}

uint8_t *hx_vtcm_hmx_region(size_t *bytes) {
    if (bytes) *bytes = g.ctx ? g.hmx_bytes : 0;
    return g.ctx && g.hmx_bytes ? g.base + g.arena_bytes : NULL;
}

size_t hx_vtcm_defined_bytes(void) { return g.defined; }
size_t hx_vtcm_acquired_bytes(void) { return g.acquired; }

int hx_hmx_lock(void) {
    if (!g.ctx || !g.hmx) return -1;
    return HAP_compute_res_hmx_lock(g.ctx) == 0 ? 0 : -1;
}

void hx_hmx_unlock(void) {
    if (g.ctx && g.hmx) HAP_compute_res_hmx_unlock(g.ctx);
}

#ifndef HX_HMX_REGION_BYTES
#define HX_HMX_REGION_BYTES (1u << 20)
#endif

void *hx_scratch_alloc(size_t bytes, int *in_vtcm) {
    char err[256];
    if (!g.arena_taken && hx_vtcm_init(bytes, HX_HMX_REGION_BYTES, err, sizeof err) == 0 &&
        bytes <= g.arena_bytes) {
        g.arena_taken = 1;
        if (in_vtcm) *in_vtcm = 1;
        return g.base;
    }
    if (in_vtcm) *in_vtcm = 0;
    return hx_alloc(bytes, 128);
}

void hx_scratch_free(void *p) {
    if (p && g.ctx && p == (void *)g.base) {
        g.arena_taken = 0;
        return; /* VTCM stays held until hx_vtcm_release() at exit */
    }
    hx_free(p);
}
