/* hxserve: the service mode (docs/serve.md).  A trace of requests arrives in
 * real time; each request is compute-heavy (a prefill-like GEMM on the matrix
 * engine) or bandwidth-heavy (a decode-like GEMV on the vector engine plus a
 * copy into a scratch window on the DMA engine).  A dispatcher thread admits
 * the arrivals and hands their tasks to the engines under one policy:
 *   A  FIFO serial: one request at a time, one task at a time;
 *   B  every task to its engine's queue on arrival (the backend's own
 *      concurrency);
 *   D  fused pairing: one fused entry at a time, launching a compute and a
 *      bandwidth request together when both are ready, else the oldest alone
 *      once it has waited the pairing window w.
 * Files: serve.c (command line, output), serve_trace.c (trace reader),
 * serve_work.c (inputs, the tasks' work, checksums, .npy dumps),
 * serve_policy.c (the dispatcher). */
#ifndef HX_SERVE_H
#define HX_SERVE_H
#include <stddef.h>
#include <stdint.h>
#include "engine.h"
#include "event.h"
#include "kernels.h"

enum { SV_COMPUTE = 0, SV_BANDWIDTH = 1, SV_NKINDS };
enum { SV_POL_A = 0, SV_POL_B, SV_POL_D, SV_NPOL };
/* Task kinds: the GEMM (matrix engine), the GEMV (vector), the copy (DMA). */
enum { SV_T_GEMM = 0, SV_T_GEMV, SV_T_COPY };
#define SV_MAX_REQUESTS 100000
#define SV_MAX_SIZES    16 /* distinct sizes per kind: each has its own inputs */
#define SV_MAX_POOL     16
#define SV_MAX_SIZE     4096

extern const char *const sv_kind_names[SV_NKINDS];
extern const char *const sv_policy_names[SV_NPOL];

typedef struct sv_trace_req {
    uint64_t arrival_ns; /* since the replay's origin */
    int kind;
    int size;             /* compute: GEMM rows; bandwidth: GEMV rows = copied rows */
    uint64_t deadline_ns; /* latency budget from arrival */
} sv_trace_req;

typedef struct sv_trace {
    int n;
    sv_trace_req *req;
    uint64_t digest; /* FNV-1a 64 of the file's bytes */
} sv_trace;

/* Reads a CSV trace (header arrival_ns,kind,size,deadline_ns).  Returns 0,
 * or -1 with a message naming the file, line and field at fault. */
int sv_trace_read(const char *path, sv_trace *t, char *err, size_t errlen);
void sv_trace_free(sv_trace *t);

typedef struct sv_params {
    int gemm_n, gemm_k;  /* compute: C[size][n] = A[size][k] B[k][n] */
    int gemv_cols;       /* bandwidth: y[size] = W[size][cols] x[cols] */
    int copy_row_bytes;  /* bandwidth: size rows of this many bytes copied */
    int copy_src_stride; /* source row pitch (>= row bytes): a 2-D copy */
    int pool;            /* distinct inputs per (kind, size) */
    uint64_t seed;
    uint64_t window_ns; /* D: pairing window w */
} sv_params;

/* Inputs of one (kind, size, pool index): prepared once, read-only. */
typedef struct sv_input {
    int kind, size, pool;
    void *a, *b;  /* compute: logical A, B (for the dump); bandwidth: W, x */
    void *prep;   /* compute: prepared layout */
    uint8_t *src; /* bandwidth: copy source, size rows at copy_src_stride */
} sv_input;

struct sv_run;
struct sv_req;

typedef struct sv_task {
    hx_job job;
    struct sv_run *s;
    struct sv_req *r;
    int kind; /* SV_T_* */
    hx_engine *engine;
    uint64_t push, begin, end, cpu_ns; /* ns since the replay's origin */
    hx_event done;
} sv_task;

typedef struct sv_req {
    int id, kind, size;
    const sv_input *in;
    uint64_t arrival, deadline;
    /* outputs: compute C; bandwidth y and the copy's scratch window */
    void *out0, *out1;
    size_t out0_bytes, out1_bytes;
    int ntasks;
    sv_task task[2];
    /* per replay */
    int next_task; /* policy A: tasks already launched */
    int tasks_done;
    uint64_t admit, launch, start, end, pairing_wait;
    int paired_with; /* -1: none */
    int done;
    uint64_t checksum;
} sv_req;

typedef struct sv_run {
    const sv_params *p;
    const hx_kernels *k;
    const sv_trace *trace;
    int ninputs;
    sv_input inputs[SV_NKINDS * SV_MAX_SIZES * SV_MAX_POOL];
    sv_req *req;
    hx_engine mx, vec, dma;
    hx_counter doorbell; /* bumped by every task completion */
    uint64_t origin;     /* hx_now_ns() of the replay's time 0 */
    hx_wait_policy engine_wait;
} sv_run;

/* serve_work.c */
int sv_setup(sv_run *s, const sv_params *p, const sv_trace *t, char *err, size_t errlen);
void sv_teardown(sv_run *s);
void sv_poison_outputs(sv_run *s);
uint64_t sv_req_checksum(const sv_req *r);
/* One .npy set per input: inputs and the outputs of request `r`. */
int sv_dump_input(const sv_run *s, const sv_req *r, const char *dir, char *name, size_t namelen, char *err,
                  size_t errlen);
uint64_t sv_now(const sv_run *s);

/* serve_policy.c: replays the whole trace under one policy.  Returns 0 or -1
 * (an engine queue refused a push: a bug, reported). */
typedef struct sv_replay_stats {
    uint64_t makespan_ns;
    uint64_t max_admit_lag_ns; /* how late the dispatcher saw an arrival */
    uint64_t entries;          /* D: fused entries launched */
    uint64_t pairs;            /* D: entries that carried a pair */
} sv_replay_stats;
int sv_replay(sv_run *s, int policy, sv_replay_stats *st, char *err, size_t errlen);
#endif
