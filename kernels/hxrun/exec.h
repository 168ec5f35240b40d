/* The executor: tasks, their engines, the fused entry, and the host-side
 * submission of groups A-D.  Device side: exec_device.c.  Host side:
 * exec_host.c.  Task data, preparation and work: tasks.c.  Clock and
 * checkpoints: ckpt.c. */
#ifndef HX_EXEC_H
#define HX_EXEC_H
#include "antagonist.h"
#include "arena.h"
#include "config.h"
#include "engine.h"
#include "interference.h"
#include "kernels.h"
#include "ranges.h"

struct hx_exec;

/* Arena slots: one per task (indexed by task id), then D's second window. */
enum { HX_SLOT_D2 = HX_NTASKS, HX_NSLOTS };

/* One thread's part of a task: the whole task for M and D, one row chunk of
 * V per vector worker.  cpu_ns is that thread's CPU time over [begin, end];
 * cpu_begin/cpu_end the core it ran on then (-1: the platform cannot tell). */
/* Progress checkpoints: the runner's clock (hx_exec_now) read after each
 * block of the thread's work, with the work done by then (ckpt_done, in the
 * task's own units: M rows of C, V rows, D bytes) out of the task's whole
 * work (ckpt_total).  ckpt[0] is the start of the work (ckpt_done[0] = 0).
 * A clock is the one progress measure every platform has: per-thread CPU
 * counters count occupancy (a thread stalled on a DMA counts as busy) or do
 * not advance at all in some protection domains. */
#define HX_CKPT_CAP (HX_MAX_CKPT + 1)
typedef struct hx_worker_rec {
    const char *engine;
    uint64_t begin, end, cpu_ns;
    int cpu_begin, cpu_end;
    int64_t switches; /* involuntary context switches over [begin, end]; -1: not measured */
    int nckpt;
    uint64_t ckpt_total;
    uint64_t ckpt[HX_CKPT_CAP], ckpt_done[HX_CKPT_CAP];
} hx_worker_rec;

typedef struct hx_task {
    int id;
    struct hx_exec *x;
    hx_engine *engine;
    int ready; /* inputs prepared (checked by the fused entry) */
    int empty; /* this trial runs zero work */
    uint64_t calib_ns;
    uint32_t slot_mask; /* its scratch slot in the arena plan */
    uint32_t lazy_mask; /* slots its work reserves itself (D's second window); released with slot_mask */
    /* per-trial record, written by the engine, read by the host after the
     * task's completion has been published (acquire) */
    uint64_t launch; /* handed to its engine: host submit (A, B, alone) or the entry's push (C, D) */
    uint64_t begin, end, host_seen;
    uint64_t cpu_ns;  /* summed over workers */
    int64_t switches; /* involuntary switches, summed over workers; -1: not measured */
    int cpu_begin, cpu_end;
    int nworkers;
    hx_worker_rec workers[HX_MAX_VWORKERS];
    hx_worker_rec *rec;           /* the running thread's record, where hx_task_work stamps checkpoints */
    uint64_t checksum_at_publish; /* --check-at-publish: read by the host right after the acquire */
    const char *ran_on;
    hx_event dev_done;  /* engine -> fused entry (eM, eD) */
    hx_event published; /* completion visible to the host */
    hx_job request_job; /* standalone request (groups A, B, alone) */
    hx_job launch_job;  /* async launch from the fused entry */
    /* outputs, for poisoning and checksums */
    int nout;
    void *out[3];
    size_t out_bytes[3];
    hx_range_set ranges;
} hx_task;

typedef struct hx_wait_rec {
    const char *who, *on;
    uint64_t begin, end;
} hx_wait_rec;

#define HX_MAX_WAITS 32

typedef struct hx_vchunk {
    hx_job job;
    struct hx_exec *x;
    int r0, r1;
    hx_worker_rec rec; /* written by the worker before `done` (release) */
    hx_event done;
} hx_vchunk;

typedef struct hx_fused_req {
    hx_job job;
    struct hx_exec *x;
    uint32_t mask;
    int barrier; /* 1: group C (full barrier after each task); 0: group D */
    uint64_t entry_begin, entry_end;
    int failed;
    char error[512];
    hx_event done;
} hx_fused_req;

typedef struct hx_exec {
    const hx_config *cfg;
    const hx_kernels *kern; /* the kernel table (cfg->k is the GEMM's K) */
    hx_engine vec, mx, dma;
    int nvworkers; /* extra vector workers beyond the entry thread */
    hx_engine vworker[HX_MAX_VWORKERS];
    hx_vchunk vchunk[HX_MAX_VWORKERS + 1];
    hx_task task[HX_NTASKS];
    hx_arena arena;
    hx_antagonists bw;
    int allowed[HX_MAX_CORES]; /* the process's cores before any pinning */
    int nallowed;              /* -1: the platform cannot tell */
    hx_interf interf;
    hx_counter host_channel; /* bumped on every publish: early completion */
    hx_fused_req fused;
    hx_wait_rec waits[HX_MAX_WAITS];
    uint32_t nwaits;
    uint64_t epoch;

    /* task data (tasks.c) */
    struct {
        void *A, *B; /* logical inputs (kept for the .npy dump) */
        void *prep;  /* prepared layout */
        size_t prep_bytes;
        void *C;
        uint64_t prep_ns;
    } m;
    struct {
        void *x, *y, *rowsum, *rowmax;
        int in_scratch;
        /* the stream variant's fp32 kernel: the backend's, else the reference's */
        void (*stream_f32)(const float *, float *, float *, float *, int, int, int, int);
        int stream_is_ref;
    } v;
    struct {
        uint8_t *src, *dst; /* dst: scratch window (buffer 0) */
        uint8_t *out;       /* the buffer that holds the last window */
        size_t src_bytes, dst_bytes;
        int dst_stride, ndesc, per_window;
        int per_block; /* descriptors per checkpoint block (a chain never crosses one) */
        hx_copy_desc *chain;
    } d;
} hx_exec;

/* A task's per-trial record cleared before a trial: the in-process host
 * (hx_run_group), the DSP skel (its trial begin) and the AP's mirror all
 * start every trial from this state. */
static inline void hx_task_reset_record(hx_task *t, int empty) {
    t->empty = empty;
    t->launch = t->begin = t->end = t->host_seen = t->checksum_at_publish = t->cpu_ns = 0;
    t->cpu_begin = t->cpu_end = -1;
    t->switches = -1;
    t->nworkers = 0;
    t->ran_on = NULL;
    hx_event_reset(&t->dev_done);
    hx_event_reset(&t->published);
}

/* exec.c: prepare the tasks, start the engines; stop them, free the tasks. */
int hx_exec_setup(hx_exec *x, const hx_config *cfg, const hx_kernels *kern, char *err, size_t errlen);
void hx_exec_teardown(hx_exec *x);

/* Where the executor is split across a boundary (hxrun-ap: the protocol on
 * the application processor, the executor on the cDSP; ap/exec_ap.c), the
 * records need the other side's view.  The in-process executor (exec.c)
 * implements these with its own platform:
 *   write_device_meta: meta's "device" and "transport" (in-process: nothing);
 *   fetch_data: brings the tasks' inputs and outputs in `mask` where the
 *     .npy dump reads them (in-process: they are there; 0);
 *   finish: after the last trial, before the end record; a failure status
 *     for the end record ("clock_unaligned") with err filled, or NULL;
 *   write_clock_drift, write_resources: the end record's clock_drift and
 *   resources, of the side that ran the engines;
 *   clock_source, clock_resolution_ns: the clock hx_exec_now reads, every
 *     record's time base (meta.clock; in-process the platform's). */
struct hx_json;
void hx_exec_write_device_meta(struct hx_json *j, const hx_exec *x);
int hx_exec_fetch_data(hx_exec *x, uint32_t mask, char *err, size_t errlen);
const char *hx_exec_finish(hx_exec *x, char *err, size_t errlen);
void hx_exec_write_clock_drift(struct hx_json *j, hx_exec *x);
void hx_exec_write_resources(struct hx_json *j, hx_exec *x);
const char *hx_exec_clock_source(void);
uint64_t hx_exec_clock_resolution_ns(void);
/* Whether the engines' per-thread CPU counters advance (platform.h's
 * hx_thread_cpu_available, asked of the side that ran them). */
int hx_exec_thread_cpu_available(const hx_exec *x);

/* tasks.c */
/* Plans the scratch arena, allocates and fills every task's data, declares
 * its ranges and checks them: -3 for a plan that cannot work (scratch too
 * small, conflicting ranges), -1 for other failures. */
int hx_tasks_prepare(hx_exec *x, char *err, size_t errlen);
void hx_tasks_free(hx_exec *x);
void hx_task_work(hx_task *t); /* the task's computation (or empty / calibration) on this thread */
/* V's rows [r0, r1) on this thread, with checkpoints in rec. */
void hx_task_work_v_rows(hx_exec *x, int r0, int r1, hx_worker_rec *rec);
void hx_task_poison(hx_task *t); /* overwrite outputs so skipped work cannot pass */
uint64_t hx_task_checksum(const hx_task *t);

/* ckpt.c (hxrun-ap's driver: ap/exec_ap.c) */
uint64_t hx_exec_now(const hx_exec *x); /* ns since the run's epoch */
/* Checkpoints: stamps one (now, done of total); the units per block that
 * split `units` (in multiples of align) into at most `blocks` blocks
 * (blocks <= 0: one block). */
void hx_ckpt(hx_exec *x, hx_worker_rec *w, uint64_t done, uint64_t total);
int hx_ckpt_block(int units, int align, int blocks);

/* exec_device.c */
void hx_exec_note_wait(hx_exec *x, const char *who, const char *on, uint64_t b, uint64_t e);
void hx_task_init_jobs(hx_task *t);
void hx_fused_init(hx_fused_req *f, hx_exec *x);
int hx_plan_check(hx_exec *x, uint32_t mask, char *err, size_t errlen);

/* exec_host.c: one trial of a group; fills the record fields of the tasks and
 * the host timestamps. */
typedef struct hx_host_times {
    uint64_t submit_begin, submit_end, wait_begin, wait_end;
    uint64_t submit_ns, wait_ns; /* summed over the group's requests */
    uint64_t submits[HX_NTASKS]; /* each request's submit duration */
    int requests;
    int cpu; /* core of the host thread at the first submit, -1 unknown */
} hx_host_times;
int hx_run_group(hx_exec *x, int group, uint32_t mask, int empty, hx_host_times *h, char *err, size_t errlen);
#endif
