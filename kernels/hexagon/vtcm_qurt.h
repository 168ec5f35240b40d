/* The cDSP resources a run holds (vtcm_qurt.c, power_qurt.c).
 *
 * STATUS: written against the documented Hexagon SDK API (HAP_compute_res.h,
 * HAP_power.h), compile-checked with the open toolchain (make sdk-check), not
 * yet run on a simulator or phone.
 *
 * Start-up (the first hx_scratch_alloc, i.e. while the executor plans its
 * arena, before any task is prepared or engine started):
 *   1. power votes: compute client class, DCVS off with core and bus at the
 *      maximum corner and sleep disabled, HVX on, HMX on (HexKL builds);
 *   2. one HAP_compute_res context: the whole VTCM as one page, plus the HMX
 *      attribute in HexKL builds:
 *        [ scratch arena (V's on-chip working set, D's destination) | HMX region ]
 * Any of these that fails stops the run with a message naming what could not
 * be had; nothing falls back to DDR or to HVX unless the build says so
 * (HX_ALLOW_FALLBACK=1, counted in the run's resources record). */
#ifndef HX_VTCM_QURT_H
#define HX_VTCM_QURT_H
#include <stddef.h>
#include <stdint.h>

#ifndef HX_ALLOW_FALLBACK
#define HX_ALLOW_FALLBACK 0
#endif
#if defined(HX_WITH_HEXKL) && HX_WITH_HEXKL
#define HX_HMX_BUILD 1
#else
#define HX_HMX_BUILD 0
#endif
/* M's private VTCM tile space (HexKL builds only). */
#ifndef HX_HMX_REGION_BYTES
#define HX_HMX_REGION_BYTES (1u << 20)
#endif

/* Power (power_qurt.c).  Returns 0, or -1 with the failing vote in err. */
int hx_power_vote(int hmx, char *err, size_t errlen);
void hx_power_release(void);
/* The votes that succeeded, in order, as short strings ("hvx=on", ...), and
 * those refused, with HAP_power_set's return code (a refused HMX clock vote
 * on v75+ is recorded, and HMX powered without it). */
int hx_power_votes(const char *const **votes);
int hx_power_refused(const char *const **what, const int **rc);

/* Acquires VTCM for an arena of arena_bytes plus an HMX region of hmx_bytes
 * (0: no HMX attribute).  Idempotent.  Returns 0, or -1 with a message in err. */
int hx_vtcm_init(size_t arena_bytes, size_t hmx_bytes, char *err, size_t errlen);
void hx_vtcm_release(void);
/* NULL before hx_vtcm_init. */
uint8_t *hx_vtcm_arena(size_t *bytes);
uint8_t *hx_vtcm_hmx_region(size_t *bytes);
/* VTCM the DSP reports, the amount acquired, and how often another client
 * asked this run to give it back (the first request ends the run at the next
 * trial boundary, see platform.h). */
size_t hx_vtcm_defined_bytes(void);
size_t hx_vtcm_acquired_bytes(void);
unsigned hx_vtcm_release_requests(void);
/* After hx_release_resources (platform.h) gave the context back on the
 * resource manager's request: when (hx_now_ns) and what was held; 0 when
 * nothing was given back early. */
uint64_t hx_vtcm_given_back(uint8_t **base, size_t *bytes, size_t *arena, size_t *hmx);
/* 1 when the scratch arena went to DDR (HX_ALLOW_FALLBACK=1 builds only). */
unsigned hx_vtcm_ddr_fallbacks(void);

/* HMX lock on the VTCM context, taken by the thread that runs HMX (the `mx`
 * engine, at its first GEMM) and held by it across runs, as llama.cpp's HMX
 * queue keeps it across ops: a per-GEMM lock/unlock pair would sit inside
 * M's timed work.  Given back on that thread (hx_engine_release_self: at
 * thread exit, or on the executor's suspend job before a release on request).
 * hx_hmx_lock: 0 (taken, or already held by this thread), -1 (no HMX region
 * or HAP_compute_res_hmx_lock failed), -2 (held by another thread).
 * hx_hmx_unlock: 0, or -1 when another thread holds it (nothing done).
 * hx_hmx_left_locked: locks hx_vtcm_release found held by another thread. */
int hx_hmx_lock(void);
int hx_hmx_unlock(void);
int hx_hmx_held_here(void);
unsigned hx_hmx_left_locked(void);

/* A 128-byte HVX context for the calling thread, or -1 (last try-lock code in
 * *rc) after timeout_us: qurt_hvx_lock would block for as long as another
 * process holds every context, and the starter would wait with it. */
#ifndef HX_HVX_LOCK_TIMEOUT_US
#define HX_HVX_LOCK_TIMEOUT_US 200000u
#endif
int hx_hvx_lock_within(unsigned timeout_us, int *rc);
#endif
