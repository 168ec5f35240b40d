/* Bandwidth antagonists: threads that stream-read a large buffer of their
 * own while the trials run, so a point can be measured with and without
 * memory-bandwidth contention that is not part of the workload.  They are
 * placed like engines (bw0, bw1, ... in --affinity) and count what they read,
 * so the pressure they applied is recorded beside the results. */
#ifndef HX_ANTAGONIST_H
#define HX_ANTAGONIST_H
#include <stddef.h>
#include <stdint.h>
#include "config.h"
#include "platform.h"

typedef struct hx_antagonist {
    struct hx_antagonists *set;
    int index;
    uint64_t *buf;
    size_t words;
    uint64_t bytes; /* read while active; written by this thread only */
    uint64_t sink;  /* keeps the sums alive */
    hx_thread *thread;
} hx_antagonist;

typedef struct hx_antagonists {
    int n;
    uint32_t active; /* 1: stream; 0: sleep (futex word) */
    uint32_t stop;
    uint64_t active_ns, active_since;
    hx_antagonist t[HX_MAX_ANTAGONISTS];
} hx_antagonists;

/* Starts cfg->antagonists sleeping threads (none: nothing to do). */
int hx_antagonists_start(hx_antagonists *s, const hx_config *cfg, char *err, size_t errlen);
/* Streaming starts / pauses (host thread only). */
void hx_antagonists_set_active(hx_antagonists *s, int on);
/* Bytes read so far by every antagonist (call while paused). */
uint64_t hx_antagonists_bytes(const hx_antagonists *s);
void hx_antagonists_stop(hx_antagonists *s);
#endif
