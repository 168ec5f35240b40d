/* Interference evidence per trial: what the runner can observe of other work
 * on its cores while a trial runs (docs/runner.md, `interference`).  The host
 * samples before the trial's timed interval and after it, so the samples do
 * not enter makespan_ns. */
#ifndef HX_INTERFERENCE_H
#define HX_INTERFERENCE_H
#include <stdint.h>
#include "config.h"
#include "json.h"

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
/* meta.interference: the cores, the source, its resolution and the cost of one reading. */
void hx_interf_write_meta(hx_json *j, const hx_interf *p);
/* trial.interference: the deltas between the two readings. */
void hx_interf_write_trial(hx_json *j, const hx_interf_sample *a, const hx_interf_sample *b);
#endif
