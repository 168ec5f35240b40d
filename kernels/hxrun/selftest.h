/* hxrun --selftest: the first-day ladder (selftest.c; docs in
 * kernels/hexagon/README.md, "First day").
 *
 * Steps run one at a time in a fixed order; each is logged and flushed to the
 * output file before it starts and when it ends, and a watchdog thread names
 * a step that does not finish within its timeout.  A step is implemented by
 * the platform (selftest_posix.c, hexagon/selftest_qurt.c), by the kernel
 * backend (hexagon/selftest_hvx.c, selftest_host.c) or by selftest.c
 * itself through platform.h; a step nobody implements on a target is
 * reported as "not available on this target", never as passed. */
#ifndef HX_SELFTEST_H
#define HX_SELFTEST_H
#include <stddef.h>
#include "ladder.h"

/* A step's result: the ladder log's statuses (ladder.h). */
enum { HX_ST_PASS = HX_LADDER_PASS, HX_ST_FAIL = HX_LADDER_FAIL, HX_ST_NA = HX_LADDER_NA };

/* Runs one step: returns HX_ST_PASS, HX_ST_FAIL or HX_ST_NA and says what it
 * saw (numbers, return codes) in detail. */
typedef int (*hx_st_fn)(char *detail, size_t len);
typedef struct hx_st_step {
    const char *name;
    hx_st_fn fn;
} hx_st_step;

/* Tables terminated by {NULL, NULL}: the platform's steps and the backend's. */
extern const hx_st_step hx_st_platform_steps[];
extern const hx_st_step hx_st_backend_steps[];

/* Sleeps at least ms milliseconds (the watchdog's tick, a planted hang). */
void hx_st_sleep_ms(unsigned ms);
/* One progress line where a person can see it (stderr; FARF on the cDSP). */
void hx_st_log(const char *line);

/* hxrun --selftest --out FILE [--selftest-step-timeout S]
 *   [--selftest-hang STEP] (test hook: STEP sleeps for ever, so that the
 *   watchdog must name it).  Exit 0: every available step passed; 1: a step
 *   failed; 5: a step hung (the watchdog ended the run); 2: bad arguments. */
int hx_selftest_main(int argc, char **argv);
#endif
