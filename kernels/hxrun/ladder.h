/* A first-day ladder's log (hxrun --selftest, hxrun-ap --selftest): each
 * step is written and flushed to the output file before it starts and when
 * it ends, so the last "running" record names the step even after a crash
 * that takes the process down; a watchdog thread names a step that does not
 * return within the timeout, writes the summary and ends the process
 * (exit 5).  The ladders themselves (their steps, their options) are
 * selftest.c's and ap/ap_main.c's. */
#ifndef HX_LADDER_H
#define HX_LADDER_H
#include <stdint.h>
#include <stdio.h>

#define HX_LADDER_MAX 32
/* A step's status: -1 not run (yet), 0 pass, 1 fail, 2 not available on this target. */
enum { HX_LADDER_NOT_RUN = -1, HX_LADDER_PASS = 0, HX_LADDER_FAIL = 1, HX_LADDER_NA = 2 };

typedef struct hx_ladder {
    /* set by the ladder before hx_ladder_start */
    FILE *out;
    const char *log_prefix; /* of the progress lines, e.g. "hxrun: selftest: " */
    int name_width;         /* the step name's column in them */
    const char *mode;       /* the summary's "mode" (NULL: none) */
    int lists_na;           /* the summary lists not_available */
    int hung_in_not_run;    /* a hung step also stays in the summary's not_run (hxrun's summary) */
    int n;                  /* steps, at most HX_LADDER_MAX */
    const char *(*name)(int i);
    void (*log)(const char *line); /* one progress line where a person sees it */
    void (*sleep_ms)(unsigned ms); /* the watchdog's tick */
    uint64_t timeout_ns;
    /* the ladder's state */
    int status[HX_LADDER_MAX];
    uint32_t lock; /* the output file: one record at a time */
    int current;   /* the step running now, -1 none (atomic: the watchdog reads it) */
    uint64_t t0;   /* when it started */
    int done;      /* the ladder is over: the watchdog stops */
} hx_ladder;

/* Every step not run; the watchdog thread started (NULL, with err, when the
 * platform gives none: a hang is then not named). */
struct hx_thread *hx_ladder_start(hx_ladder *l, char *err, size_t errlen);
/* Records step i as running and starts its clock; hx_ladder_end records
 * its status (and the ms since hx_ladder_begin), detail may be NULL. */
void hx_ladder_begin(hx_ladder *l, int i);
void hx_ladder_end(hx_ladder *l, int i, int status, const char *detail);
/* One step record without a clock (a step not available: ms absent). */
void hx_ladder_record(hx_ladder *l, int i, const char *status, const char *detail, double ms);
/* Stops the watchdog (wd from hx_ladder_start), writes the summary, closes
 * the file; returns 0 when no step failed and the file closed, else 1. */
int hx_ladder_finish(hx_ladder *l, struct hx_thread *wd);
const char *hx_ladder_status_name(int status);
#endif
