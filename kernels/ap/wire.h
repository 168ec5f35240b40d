/* What crosses the application-processor / cDSP boundary (docs/ap-host.md).
 *
 * The AP driver (hxrun-ap) runs the trial protocol; the DSP skel
 * (libhxfuse_skel.so) holds the executor, its engines and the task data.
 * Two channels connect them:
 *   - FastRPC methods of the hand-written `hxfuse` interface (synchronous,
 *     untimed: set-up, queue start, control operations, stop);
 *   - dspqueue packets (the timed path: one packet per request, replies per
 *     task for early completion).
 * Every struct here is plain data with fixed-width fields, the same layout
 * on aarch64 and hexagon (both little-endian, 8-byte aligned u64).  Every
 * timestamp that crosses is the DSP's absolute clock (hx_now_ns on the DSP,
 * after the skel's test transform, below); the AP maps it onto its own clock
 * with the measured offset (clock_align.h).  0 stays 0: "never stamped". */
#ifndef HX_AP_WIRE_H
#define HX_AP_WIRE_H
#include <stdint.h>
#include "../hxrun/exec.h"

#define HX_WIRE_VERSION 2           /* 2: compact replies, checkpoints by CONTROL CKPT; primIn on every method */
#define HX_WIRE_MAGIC   0x68786675u /* "hxfu" */

/* The skel library and its invoke symbol (the FastRPC URI names both). */
#define HX_SKEL_LIB    "libhxfuse_skel.so"
#define HX_SKEL_INVOKE "hxfuse_skel_handle_invoke"
#define HX_SKEL_URI    "file:///" HX_SKEL_LIB "?" HX_SKEL_INVOKE "&_modver=1.0"

/* FastRPC methods (REMOTE_SCALARS_METHOD), as declared in ap/hxfuse.idl.
 * 0 and 1 are open and close, as in qaic-generated remote_handle64
 * interfaces and as the loader calls them (quic/fastrpc src/mod_table.c,
 * open_mod_handle_open / open_mod_handle_close): open gets the URI's length
 * (int32, counting the NUL) as in buffer 0 and the URI as in buffer 1, and
 * returns the handle as out handle 0 (pra[2].h64); close gets the handle as
 * in handle 0 (pra[0].h64). */
enum {
    HX_METHOD_OPEN = 0,
    HX_METHOD_CLOSE = 1,
    /* in: hx_wire_setup_req + argv blob (one sequence); out: hx_wire_setup_resp */
    HX_METHOD_SETUP = 2,
    /* in: hx_wire_start_req; out: hx_wire_status */
    HX_METHOD_START = 3,
    /* in: hx_wire_ctl_req; out: hx_wire_ctl_resp, then a bulk buffer (may be empty) */
    HX_METHOD_CONTROL = 4,
    /* in: nothing; out: hx_wire_status.  Stops the queues, tears the executor down. */
    HX_METHOD_STOP = 5,
};

/* The method table, as qaic generates it from ap/hxfuse.idl: each
 * method's id and its scalars word's counts (REMOTE_SCALARS_MAKEX(0, id,
 * in_bufs, out_bufs, in_handles, out_handles)).  qaic puts every in scalar
 * and the int32 length of every sequence argument (in or rout) into one
 * leading in buffer ("primIn"), then one in buffer per in sequence and one
 * out buffer per rout sequence, in declaration order (quic/fastrpc's
 * generated stubs, e.g. src/dspqueue/dspqueue_rpc_stub.c; method 0's primIn
 * is the URI's length: src/mod_table.c open_mod_handle_open).  stub.c and
 * skel.c build and check every call from this table; test_ap_idl.py checks
 * it against the IDL. */
typedef struct hx_wire_method {
    const char *name;
    uint8_t id, in_bufs, out_bufs, in_handles, out_handles;
} hx_wire_method;
#define HX_WIRE_METHODS                                                                                                \
    {                                                                                                                  \
        {"open", HX_METHOD_OPEN, 2, 0, 0, 1},       {"close", HX_METHOD_CLOSE, 0, 0, 1, 0},                            \
        {"setup", HX_METHOD_SETUP, 2, 1, 0, 0},     {"start", HX_METHOD_START, 2, 1, 0, 0},                            \
        {"control", HX_METHOD_CONTROL, 2, 2, 0, 0}, {"stop", HX_METHOD_STOP, 1, 1, 0, 0},                              \
    }
#define HX_WIRE_NMETHODS 6
/* The primIn buffers of methods 2-5: the lengths of the sequences, in
 * declaration order. */
typedef struct hx_wire_prim2 {
    int32_t len[2];
} hx_wire_prim2; /* setup, start: req, resp/status */
typedef struct hx_wire_prim3 {
    int32_t len[3];
} hx_wire_prim3; /* control: req, resp, bulk */
typedef struct hx_wire_prim1 {
    int32_t len[1];
} hx_wire_prim1; /* stop: status */

/* The queues: one per engine, and the fused entry rides the vec queue (the
 * entry thread is vec).  Index = the task the queue's engine runs. */
enum { HX_WIRE_Q_M = HX_M, HX_WIRE_Q_V = HX_V, HX_WIRE_Q_D = HX_D, HX_WIRE_QUEUES = HX_NTASKS };
#define HX_WIRE_Q_ENTRY     HX_WIRE_Q_V
#define HX_WIRE_QUEUE_BYTES (256u * 1024u) /* request and response side each */

typedef struct hx_wire_status {
    int32_t status;   /* 0 ok; else an error, named in error */
    int32_t dsp_code; /* the AEE code of the DSP call that failed, as the DSP returned it (0: none) */
    char error[512];
} hx_wire_status;

/* SETUP.  The argv blob follows this header in the same buffer: argc
 * NUL-terminated strings, argv[0] first (the DSP parses the same options as
 * hxrun, with hx_parse_args).  The test transform lets the loopback tests
 * give the "DSP" clock a known offset and drift from the AP's (both read the
 * same clock there): dsp_time = t + offset + drift_ppm * (t - t0) / 1e6,
 * with t0 the skel's clock at SETUP.  0 and 0 on a phone (hxrun-ap's
 * --test-dsp-clock-* options, recorded in meta.transport). */
typedef struct hx_wire_setup_req {
    uint32_t version; /* HX_WIRE_VERSION */
    uint32_t argc;
    uint32_t argv_bytes;
    uint32_t pad;
    int64_t test_clock_offset_ns;
    double test_clock_drift_ppm;
} hx_wire_setup_req;

#define HX_WIRE_NAME        32
#define HX_WIRE_DEVICE_JSON 4096

/* What the AP's mirror of the executor needs (wire_ap.c applies it) and the
 * DSP's own description, as JSON text the AP writes into meta.device. */
typedef struct hx_wire_setup_resp {
    int32_t status; /* 0; else hxrun's exit code for the failure: 2 bad option, 3 plan cannot work, 1 other */
    uint32_t version;
    char error[1024];
    uint64_t dsp_epoch;                                       /* the DSP executor's epoch, DSP clock */
    char kernels[HX_WIRE_NAME], kernels_choice[HX_WIRE_NAME]; /* choice "" = none */
    int32_t nvworkers;
    /* hx_thread_cpu_available() on the DSP: 0 where its per-thread CPU
     * counters do not advance (an unsigned PD may read 0 pcycles); the AP's
     * records then say null, as hxrun's do there */
    int32_t thread_cpu_available;
    char vworker_name[HX_MAX_VWORKERS][16];
    char engine_name[HX_NTASKS][16]; /* the engine each task's requests run on (vec, mx, dma) */
    uint64_t arena_capacity;
    int32_t arena_on_chip;
    uint32_t pad1;
    char slot_name[HX_ARENA_SLOTS][16];
    uint64_t slot_bytes[HX_ARENA_SLOTS];
    uint64_t m_prep_bytes, m_prep_ns;
    int32_t d_dst_stride, d_ndesc;
    uint64_t d_dst_bytes;
    int32_t v_in_scratch, v_stream_is_ref;
    uint64_t calib_ns[HX_NTASKS];
    /* an object: target, kernels, compiler, cflags, cpu_model, the
     * parallel-unit key and count, clock {source, resolution_ns,
     * core_cycles_per_us}, thread_cpu_available */
    char device_json[HX_WIRE_DEVICE_JSON];
} hx_wire_setup_resp;

/* START: the AP's exported queue ids, indexed by HX_WIRE_Q_*. */
typedef struct hx_wire_start_req {
    uint32_t nqueues; /* HX_WIRE_QUEUES */
    uint32_t pad;
    uint64_t queue_id[HX_WIRE_QUEUES];
} hx_wire_start_req;

/* CONTROL operations (untimed; between trials). */
enum {
    HX_CTL_PING = 1,        /* value = the DSP clock when the call ran (ping-pong offset) */
    HX_CTL_BEGIN_TRIAL = 2, /* arg = empty: resets every task's record, events, waits and the scratch peak */
    HX_CTL_POISON = 3,      /* task: overwrite its outputs */
    HX_CTL_CHECKSUM = 4,    /* task: value = its output checksum */
    HX_CTL_READ = 5,        /* task, arg = which buffer (HX_BUF_*), offset, length: bulk = the bytes */
    HX_CTL_END = 6,         /* bulk = JSON text of an object: {"resources": {...}, "core_cycles_per_us_end": x|null} */
    HX_CTL_CKPT = 7,        /* task: bulk = its workers' checkpoints of this trial (hx_wire_ckpts) */
};
/* HX_CTL_READ buffers, for the .npy dump of the verification round; offset
 * counts from each buffer's start.  D_SRC is the last source window only
 * (d_rows * d_src_stride bytes: the one the scratch must hold, what the dump
 * writes), not the whole source. */
enum {
    HX_BUF_M_A,
    HX_BUF_M_B,
    HX_BUF_M_C,
    HX_BUF_V_X,
    HX_BUF_V_Y,
    HX_BUF_V_ROWSUM,
    HX_BUF_V_ROWMAX,
    HX_BUF_D_SRC,
    HX_BUF_D_OUT,
    HX_NBUFS
};
#define HX_WIRE_BULK_MAX (1u << 20) /* READ moves at most this per call */

typedef struct hx_wire_ctl_req {
    uint32_t op;
    uint32_t task;
    uint64_t arg;
    uint64_t offset, length;
} hx_wire_ctl_req;

typedef struct hx_wire_ctl_resp {
    int32_t status;
    uint32_t pad;
    uint64_t value;
    uint64_t dsp_time; /* the DSP clock at the reply */
    uint64_t bulk_bytes;
    char error[256];
} hx_wire_ctl_resp;

/* dspqueue packets. */
enum {
    HX_PKT_TASK = 1,  /* run one task as its own request (A, B, alone) */
    HX_PKT_FUSED = 2, /* the fused entry for `mask` (C: flags & HX_PKTF_BARRIER; D: not) */
};
enum { HX_PKTF_BARRIER = 1 };
typedef struct hx_wire_req {
    uint32_t magic; /* HX_WIRE_MAGIC */
    uint32_t op;
    uint32_t task_or_mask;
    uint32_t flags;
    uint64_t seq; /* the AP's request number, echoed in every reply */
} hx_wire_req;

/* A worker's record in a reply: its checkpoints' count, not the
 * checkpoints.  The timed path's replies stay small (about 2 KB instead of
 * about 10 KB with every worker's checkpoints): the AP fetches the
 * checkpoints after the trial with CONTROL HX_CTL_CKPT, untimed. */
typedef struct hx_wire_worker {
    char engine[16];
    uint64_t begin, end, cpu_ns;
    int32_t cpu_begin, cpu_end;
    int64_t switches;
    int32_t nckpt;
    uint32_t pad;
    uint64_t ckpt_total;
} hx_wire_worker;

/* HX_CTL_CKPT's bulk: one task's checkpoints of the last trial, per worker
 * (DSP clock; 0 stays 0). */
typedef struct hx_wire_ckpts {
    uint64_t ckpt[HX_MAX_VWORKERS][HX_CKPT_CAP];
    uint64_t done[HX_MAX_VWORKERS][HX_CKPT_CAP];
} hx_wire_ckpts;

typedef struct hx_wire_task {
    uint32_t id;
    int32_t cpu_begin, cpu_end, nworkers;
    char ran_on[16];
    uint64_t launch, begin, end, cpu_ns;
    int64_t switches;
    hx_wire_worker workers[HX_MAX_VWORKERS];
} hx_wire_task;

enum {
    HX_RESP_TASK_DONE = 1,  /* one task published (early completion) */
    HX_RESP_ENTRY_DONE = 2, /* the fused entry returned (after its tasks' TASK_DONE) */
};
typedef struct hx_wire_resp {
    uint32_t magic;
    uint32_t op;
    int32_t status; /* 0; else error names the failure (the fused entry rejected its plan, ...) */
    uint32_t task;  /* TASK_DONE: the task */
    uint64_t seq;
    uint64_t dsp_recv, dsp_send; /* when the skel read the request and wrote this reply */
    uint64_t scratch_peak_bytes; /* the arena's peak since BEGIN_TRIAL */
    /* a higher-priority client asked the DSP for its resources (the release
     * callback, platform.h): when, DSP clock; 0 = not asked.  The AP ends the
     * run at the next trial boundary; the skel releases at the next
     * BEGIN_TRIAL or STOP, whichever comes first. */
    uint64_t release_asked;
    /* ENTRY_DONE */
    uint64_t entry_begin, entry_end;
    uint32_t nwaits;
    uint32_t pad;
    struct {
        char who[8], on[8];
        uint64_t begin, end;
    } waits[HX_MAX_WAITS];
    char error[256];
    hx_wire_task rec; /* TASK_DONE */
} hx_wire_resp;

/* A DSP clock transform (the skel's test hook above; identity on a phone). */
typedef struct hx_wire_xform {
    int64_t offset_ns;
    double drift_ppm;
    uint64_t t0;
} hx_wire_xform;
uint64_t hx_wire_xform_apply(const hx_wire_xform *xf, uint64_t t);

/* wire_dsp.c (the skel's side): fill from the executor.  Executor times are
 * ns since x->epoch; these write absolute, transformed DSP times (0 stays 0). */
void hx_wire_fill_setup(hx_wire_setup_resp *r, const hx_exec *x, const hx_wire_xform *xf);
void hx_wire_pack_task(hx_wire_task *w, const hx_task *t, const hx_exec *x, const hx_wire_xform *xf);
void hx_wire_pack_ckpts(hx_wire_ckpts *c, const hx_task *t, const hx_exec *x, const hx_wire_xform *xf);

/* wire_ap.c (the driver's side): the mirror executor from the set-up reply,
 * and a task record from a reply.  map(ctx, dsp_time) turns a DSP time into
 * ns since the AP mirror's epoch (0 stays 0); engine names are resolved to
 * the mirror's own strings. */
typedef uint64_t (*hx_wire_map_fn)(void *ctx, uint64_t dsp_time);
int hx_wire_apply_setup(hx_exec *x, const hx_wire_setup_resp *r, char *err, size_t errlen);
/* What the last applied set-up reply said of the DSP's thread CPU counters. */
int hx_wire_thread_cpu_available(void);
void hx_wire_unpack_task(hx_task *t, const hx_wire_task *w, hx_exec *x, hx_wire_map_fn map, void *ctx);
/* The checkpoints fetched after the trial, into the task's workers (their
 * counts came with the reply). */
void hx_wire_unpack_ckpts(hx_task *t, const hx_wire_ckpts *c, hx_wire_map_fn map, void *ctx);
#endif
