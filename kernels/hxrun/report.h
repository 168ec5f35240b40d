/* The protocol's reporter: what a run found, as plain structs, and the one
 * interface that turns them into records (docs/runner.md).  protocol.c
 * measures and fills the structs; a reporter writes them.  The JSON Lines
 * reporter (report_jsonl.c) is the only one today and the only unit of the
 * protocol that writes JSON: a new output format is a new reporter, and the
 * protocol does not change.  The meta record reads the configuration and
 * the prepared executor (hx_exec) directly: they do not change during a
 * run. */
#ifndef HX_REPORT_H
#define HX_REPORT_H
#include <stdint.h>
#include <stdio.h>
#include "exec.h"

/* One warning of the meta record: a stable code for programs and a text for
 * people (docs/runner.md, `warnings` and `warning_codes`).  Five conditions
 * can warn (protocol.c, collect_warnings); the bound leaves room for more. */
typedef struct hx_warning {
    const char *code, *text;
} hx_warning;
#define HX_MAX_WARNINGS 8

/* What the meta record needs beyond the configuration and the executor. */
typedef struct hx_meta_facts {
    int cores;                  /* online cores (hardware threads on the cDSP) */
    int engines_used;           /* device engine threads of the workloads */
    uint64_t clock_overhead_ns; /* median cost of two back-to-back clock reads */
    int nwarnings;
    hx_warning warnings[HX_MAX_WARNINGS];
    char texts[2][200]; /* the warnings' texts that carry numbers */
} hx_meta_facts;

/* One .npy file of the verification round, relative to --npy-dir. */
typedef struct hx_npy_file {
    const char *name; /* M_A, ...: the key it is listed under */
    char rel[128];
} hx_npy_file;
#define HX_MAX_NPY_FILES 9

/* One workload's verification round (group D). */
typedef struct hx_verify_result {
    uint32_t mask;                /* its tasks */
    int checked;                  /* 0: a calibration run, outputs are not checked (checksums null) */
    uint64_t checksum[HX_NTASKS]; /* by task, for the tasks in mask */
    int dumped;                   /* the inputs and outputs went to --npy-dir: files lists them */
    int nfiles;
    hx_npy_file files[HX_MAX_NPY_FILES];
} hx_verify_result;

/* One trial: what the host saw, and each task's record (hx_task, filled by
 * the executor) with its checksum. */
typedef struct hx_trial_result {
    int64_t round; /* < 0: a warm-up round */
    int seq;       /* its place in the round's shuffled order */
    int group;     /* HX_G_*, HX_G_ALONE: one task alone */
    uint32_t mask; /* its tasks */
    int empty;     /* zero work */
    const hx_host_times *host;
    const hx_task *tasks; /* by task id: the executor's records of this trial */
    int cpu_unknown;      /* the per-thread CPU counters do not advance: CPU times are unknown */
    int checked;          /* outputs checked: checksum holds each task's (else null) */
    uint64_t checksum[HX_NTASKS];
    uint64_t entry_begin, entry_end; /* the fused entry's (groups C and D) */
    const hx_wait_rec *waits;
    uint32_t nwaits;
    uint64_t scratch_peak_bytes, makespan_ns;
    hx_interf_sample before, after; /* just outside the timed interval */
    int checksums_ok;               /* every checked task matched the verification round */
    int preempted;                  /* a release request came during this trial */
} hx_trial_result;

/* The run's end: counts, outliers, a release request. */
typedef struct hx_end_result {
    const char *status; /* ok, checksum_mismatch, preempted, or the executor's failure */
    int trials, mismatches, outliers, handover;
    int outliers_by[HX_NGROUPS + 1]; /* by group; HX_G_ALONE last */
    uint64_t submit_outlier_ns;      /* the threshold of an outlier */
    uint64_t wall_ns;
    /* a release request (asked_ns 0: none); trial and round -1: it came
     * during the verification round */
    uint64_t asked_ns, released_ns, release_bound_ns;
    int64_t preempted_trial, preempted_round;
    /* what the antagonists applied (antagonists 0: none ran) */
    int antagonists;
    uint64_t antagonist_bytes, antagonist_active_ns;
} hx_end_result;

/* A reporter: one call per record, in the order they are written (meta,
 * a verify per workload, the trials, end).  end may ask the executor for
 * its side's clock drift and resources (hence not const). */
typedef struct hx_reporter {
    FILE *out;
    void (*meta)(struct hx_reporter *r, const hx_exec *x, const hx_meta_facts *m);
    void (*verify)(struct hx_reporter *r, const hx_exec *x, const hx_verify_result *v);
    void (*trial)(struct hx_reporter *r, const hx_exec *x, const hx_trial_result *t);
    void (*end)(struct hx_reporter *r, hx_exec *x, const hx_end_result *e);
} hx_reporter;

/* The JSON Lines reporter (report_jsonl.c), writing to out. */
void hx_reporter_jsonl(hx_reporter *r, FILE *out);
#endif
