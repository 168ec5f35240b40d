/* What every runner's JSON Lines output shares (hxrun, hxgraph, hxserve):
 * the file written to FILE.tmp and renamed only when complete, the machine
 * state around the run in the meta and end records, the end record's
 * opening, and the seeded shuffle that orders each round's trials. */
#ifndef HX_RECORD_H
#define HX_RECORD_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct hx_out {
    FILE *f;
    const char *prog; /* "hxrun", ...: the prefix of its messages */
    const char *path;
    char tmp[4096];
} hx_out;

/* Opens path.tmp for writing: a crash or a kill never leaves a file that
 * looks like a result.  Returns 0, or -1 after printing why. */
int hx_out_open(hx_out *o, const char *prog, const char *path);
/* Closes the file.  rc 1 (the run failed) or a write error: prints err (or
 * the write error), removes path.tmp and returns 1.  Otherwise renames it to
 * path and returns rc (1 if the rename fails, with a message). */
int hx_out_close(hx_out *o, int rc, const char *err);

/* The record helpers take the JSON writer (json.h) by pointer only, so a
 * unit that only opens the output or shuffles (hxrun's protocol) does not
 * see the writer. */
struct hx_json;

/* The meta record's load_average_before and other_busy_cores_before (the
 * latter idles 200 ms to measure); hx_record_after: the end record's
 * load_average_after, other_busy_cores_after and steal_share (the share of
 * the cores' time since hx_record_before that the hypervisor took,
 * hx_steal_ns; null where unreadable). */
void hx_record_before(struct hx_json *j);
void hx_record_after(struct hx_json *j);
/* Opens the end record (record count and digest, hx_json_begin_end_record)
 * and writes its status. */
void hx_record_end_begin(struct hx_json *j, FILE *f, const char *status);

/* The end record's clock_drift: the core clock calibrated at start and at
 * the end (cycles per us, platform.h), their relative change and whether it
 * exceeds HX_CLOCK_DRIFT_TOL (2%: the DCVS vote fixes the clock, so a larger
 * change is throttling, and every CPU time of the run rests on the start
 * value).  null where the platform calibrates nothing (start or end 0). */
/* "emulated": whether this build's timings are functional emulation
 * (HX_EMULATED: qemu, the simulator, the loopback stand-in), never
 * performance. */
void hx_record_emulated(struct hx_json *j);

#define HX_CLOCK_DRIFT_TOL 0.02
void hx_record_clock_drift(struct hx_json *j, double start, double end);

/* Fisher-Yates over a[0..n) from the splitmix64 stream *state: the order of
 * a round's trials (hxrun, hxgraph) or of a repetition's policies (hxserve),
 * interleaved so slow drift of the machine falls on all alike. */
void hx_shuffle(int *a, int n, uint64_t *state);
#endif
