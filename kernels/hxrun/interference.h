/* Interference evidence per trial: what the runner can observe of other work
 * on its cores while a trial runs (docs/runner.md, `interference`).  The host
 * samples before the trial's timed interval and after it, so the samples do
 * not enter makespan_ns. */
#ifndef HX_INTERFERENCE_H
#define HX_INTERFERENCE_H
#include <stdint.h>
#include "config.h"

#define HX_MAX_CORES 1024

/* The runner's cores: every core one of its threads is pinned to, or, when
 * any thread floats, every core the process may use. */
typedef struct hx_interf {
    int cores[HX_MAX_CORES];
    int ncores; /* 0: unknown (the platform cannot tell) */
    uint64_t read_cost_ns;
} hx_interf;

/* One reading: -1 in a field the platform cannot read. */
typedef struct hx_interf_sample {
    int64_t self_ns, busy_ns, switches;
    uint64_t at;
} hx_interf_sample;

/* allowed: the process's cores before any thread was pinned (n < 0: unknown). */
void hx_interf_init(hx_interf *p, const hx_config *c, int nvworkers, const int *allowed, int nallowed);
void hx_interf_read(const hx_interf *p, hx_interf_sample *s);
/* The records' meta.interference and trial.interference (the deltas between
 * the two readings): the reporter's (report_jsonl.c). */
#endif
