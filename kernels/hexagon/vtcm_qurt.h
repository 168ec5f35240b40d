/* VTCM and HMX ownership on the cDSP (vtcm_qurt.c).
 *
 * STATUS: written against the documented Hexagon SDK API (HAP_compute_res.h),
 * not yet run on hardware.  Builds only with the Hexagon SDK.
 *
 * One compute-resource context holds the runner's whole VTCM for the run:
 *   [ scratch arena (V's on-chip working set, D's destination) | HMX region ]
 * The HMX region is M's private tile space (activations, weights, the
 * accumulator read-out and the HMX config block).  The context is acquired
 * with the HMX attribute, so the HMX unit is reserved together with VTCM,
 * and M's thread brackets each GEMM with hx_hmx_lock()/hx_hmx_unlock(). */
#ifndef HX_VTCM_QURT_H
#define HX_VTCM_QURT_H
#include <stddef.h>
#include <stdint.h>

/* Acquires VTCM for an arena of arena_bytes plus an HMX region of hmx_bytes
 * (0: no HMX).  Idempotent.  Returns 0, or -1 with a message in err. */
int hx_vtcm_init(size_t arena_bytes, size_t hmx_bytes, char *err, size_t errlen);
void hx_vtcm_release(void);
/* NULL before hx_vtcm_init. */
uint8_t *hx_vtcm_arena(size_t *bytes);
uint8_t *hx_vtcm_hmx_region(size_t *bytes);
/* Total VTCM the architecture defines and the amount acquired, bytes. */
size_t hx_vtcm_defined_bytes(void);
size_t hx_vtcm_acquired_bytes(void);

int hx_hmx_lock(void);
void hx_hmx_unlock(void);

/* The scratch-arena hook the executor needs on the device (see README:
 * "what the shared code must provide"): the arena base comes from VTCM
 * instead of hx_alloc.  Falls back to DDR (and says so through *in_vtcm)
 * when VTCM cannot be had. */
void *hx_scratch_alloc(size_t bytes, int *in_vtcm);
void hx_scratch_free(void *p);
#endif
