/* The DSP side of hxrun-ap: the `hxfuse` FastRPC interface's skel, written
 * by hand in the shape qaic generates (one invoke entry point that
 * dispatches on the method number of the scalars word), and the dspqueue
 * packet handlers of the timed path.  It holds the executor (exec.c,
 * exec_device.c, tasks.c) and runs its jobs exactly as the in-process host
 * does (exec_host.c): the difference is only who submits and who waits.
 *
 * Only platform.h, the hx_* executor/engine/event calls and the FastRPC
 * and dspqueue names of sdk_decls are used, so the same file builds for the
 * host loopback (POSIX platform, cdsprpc_loopback.c) and for the cDSP (QuRT
 * platform, the SDK's libraries).  It writes no files and never runs the
 * protocol: that is the AP's (protocol.c in hxrun-ap).
 *
 * Failures explain themselves to the AP: a user PD's stderr goes nowhere
 * the AP sees, so every refusal is answered in the method's reply (the
 * status and error text of hx_wire_status / hx_wire_setup_resp, with the
 * failing DSP call's AEE code in dsp_code) and logged with FARF (the DSP
 * log, logcat on a phone).  Nothing here calls exit(): in a user PD it
 * ends the PD, and the AP would see only a dead session. */
#include <stdio.h>
#include <string.h>
#include "AEEStdErr.h"
#include "HAP_farf.h"
#include "dspqueue.h"
#include "remote.h"
#include "../hxrun/exec.h"
#include "json.h"
#include "platform.h"
#include "wire.h"

#define MAX_ARGS         256
/* The blocking reply write waits this long for the AP to make room: the
 * ring holds only a few replies, the AP reads them as they come. */
#define REPLY_TIMEOUT_US 10000000u

typedef struct queue_ctx {
    int index; /* HX_WIRE_Q_* */
} queue_ctx;

/* One session per process: the skel runs one sweep point at a time, like
 * hxrun.  The executor is large: static, never on a DSP thread's stack. */
static struct session {
    int open;
    remote_handle64 handle;
    int set_up, started, released;
    hx_config cfg;
    hx_wire_xform xf;
    /* hx_parse_args keeps pointers into argv (out path, labels): the blob
     * lives as long as the configuration does */
    char argv_blob[HX_WIRE_BULK_MAX / 16];
    char *argv[MAX_ARGS + 1];
    dspqueue_t q[HX_WIRE_QUEUES];
    queue_ctx qctx[HX_WIRE_QUEUES];
} S;
static hx_exec X;
static uint64_t next_handle = 0x68780000u;

static uint64_t dsp_now(void) { return hx_wire_xform_apply(&S.xf, hx_now_ns()); }
static uint64_t exec_to_dsp(uint64_t t) { return t ? hx_wire_xform_apply(&S.xf, X.epoch + t) : 0; }

/* Copies at most n - 1 bytes and terminates: messages are cut to the wire's
 * fields on purpose (a plain loop: no strnlen on every libc). */
static void copy_text(char *dst, size_t n, const char *src) {
    size_t k = 0;
    if (src)
        while (k + 1 < n && src[k]) k++;
    if (k) memcpy(dst, src, k);
    dst[k] = 0;
}

/* The scalars word must be exactly the method's in wire.h's table (the
 * IDL's, as qaic generates it), attributes aside. */
static int scalars_are(uint32_t sc, uint32_t method) {
    static const hx_wire_method t[HX_WIRE_NMETHODS] = HX_WIRE_METHODS;
    if (method >= HX_WIRE_NMETHODS) return 0;
    const hx_wire_method *d = &t[method];
    uint32_t want = REMOTE_SCALARS_MAKEX(0, d->id, d->in_bufs, d->out_bufs, d->in_handles, d->out_handles);
    return (sc & 0x1fffffffu) == (want & 0x1fffffffu);
}

/* The primIn buffer (pra[0]) of a method with n sequences, and each
 * sequence's buffer at least as long as its length says, as qaic's skel
 * checks (its lengths, then the buffers pra[1..n]).  Fills len[0..n);
 * returns 0, or -1. */
static int seq_lengths(const remote_arg *pra, int n, int32_t *len) {
    if (pra[0].buf.pv == NULL || pra[0].buf.nLen < (size_t)n * sizeof(int32_t)) return -1;
    memcpy(len, pra[0].buf.pv, (size_t)n * sizeof(int32_t));
    for (int i = 0; i < n; i++)
        if (len[i] < 0 || pra[1 + i].buf.nLen < (size_t)len[i] || (len[i] > 0 && pra[1 + i].buf.pv == NULL)) return -1;
    return 0;
}

static void set_status(hx_wire_status *s, int status, int dsp_code, const char *msg) {
    memset(s, 0, sizeof *s);
    s->status = status;
    s->dsp_code = dsp_code;
    copy_text(s->error, sizeof s->error, msg);
    if (status) FARF(ERROR, "hxfuse skel: %s (AEE 0x%x)", s->error, (unsigned)dsp_code);
}

/* ---- the reply side of the timed path ---------------------------------- */

static void reply_common(hx_wire_resp *r, uint32_t op, uint64_t seq, uint64_t recv) {
    uint64_t asked = 0;
    r->magic = HX_WIRE_MAGIC;
    r->op = op;
    r->seq = seq;
    r->dsp_recv = recv;
    r->scratch_peak_bytes = S.set_up ? hx_arena_peak(&X.arena) : 0;
    r->release_asked = hx_release_asked(&asked) ? hx_wire_xform_apply(&S.xf, asked ? asked : 1) : 0;
}

static void send_reply(dspqueue_t q, hx_wire_resp *r) {
    r->dsp_send = dsp_now(); /* the last thing before the write */
    int rc = dspqueue_write(q, 0, 0, NULL, (uint32_t)sizeof *r, (const uint8_t *)r, REPLY_TIMEOUT_US);
    /* Nobody to tell but the log: the AP's wait for this reply times out. */
    if (rc != AEE_SUCCESS)
        FARF(ERROR, "hxfuse skel: reply seq %llu not written (AEE 0x%x)", (unsigned long long)r->seq, (unsigned)rc);
}

/* One reply per thread at a time; the replies are large (every worker's
 * checkpoints), so not on the callback thread's stack either. */
static hx_wire_resp reply_buf[HX_WIRE_QUEUES];

static void send_error(dspqueue_t q, int qi, uint32_t op, uint64_t seq, uint32_t task, uint64_t recv, const char *msg) {
    hx_wire_resp *r = &reply_buf[qi];
    memset(r, 0, sizeof *r);
    reply_common(r, op, seq, recv);
    r->status = 1;
    r->task = task;
    copy_text(r->error, sizeof r->error, msg);
    send_reply(q, r);
}

static void send_task_done(dspqueue_t q, int qi, const hx_task *t, uint64_t seq, uint64_t recv) {
    hx_wire_resp *r = &reply_buf[qi];
    memset(r, 0, sizeof *r);
    reply_common(r, HX_RESP_TASK_DONE, seq, recv);
    r->task = (uint32_t)t->id;
    hx_wire_pack_task(&r->rec, t, &X, &S.xf);
    send_reply(q, r);
}

/* HX_PKT_TASK: exec_host.c's submit and host_wait for one task, with the
 * reply as the completion the AP sees. */
static void run_task(dspqueue_t q, int qi, const hx_wire_req *req, uint64_t recv) {
    hx_task *t = &X.task[req->task_or_mask];
    t->launch = hx_exec_now(&X);
    if (hx_engine_push(t->engine, &t->request_job) != 0) {
        send_error(q, qi, HX_RESP_TASK_DONE, req->seq, (uint32_t)t->id, recv, "engine queue full");
        return;
    }
    hx_event_wait(&t->published, &X.cfg->wait);
    send_task_done(q, qi, t, req->seq, recv);
}

/* HX_PKT_FUSED: the fused entry on vec, its tasks forwarded as each is
 * published (exec_host.c's early-completion wait), then the entry's return. */
static void run_fused(dspqueue_t q, int qi, const hx_wire_req *req, uint64_t recv) {
    hx_fused_req *f = &X.fused;
    f->mask = req->task_or_mask;
    f->barrier = !!(req->flags & HX_PKTF_BARRIER);
    f->failed = 0;
    f->error[0] = 0;
    f->entry_begin = f->entry_end = 0;
    hx_event_reset(&f->done);
    if (hx_engine_push(&X.vec, &f->job) != 0) {
        send_error(q, qi, HX_RESP_ENTRY_DONE, req->seq, 0, recv, "vec queue full");
        return;
    }
    uint32_t pending = f->mask;
    for (;;) {
        uint32_t seen = hx_counter_load(&X.host_channel);
        /* the return is signalled after every publish: read it first */
        int returned = hx_event_is_set(&f->done);
        /* Tasks published since the last look, replied to in the order
         * they ended: when this thread woke late and finds several, the AP
         * still learns of them in completion order, not in task order. */
        hx_task *now[HX_NTASKS];
        int n = 0;
        for (int i = 0; i < HX_NTASKS; i++) {
            if ((pending & HX_BIT(i)) && hx_event_is_set(&X.task[i].published)) {
                int k = n++;
                for (; k > 0 && now[k - 1]->end > X.task[i].end; k--) now[k] = now[k - 1];
                now[k] = &X.task[i];
                pending &= ~HX_BIT(i);
            }
        }
        for (int k = 0; k < n; k++) send_task_done(q, qi, now[k], req->seq, recv);
        if (returned) break;
        hx_counter_wait_change(&X.host_channel, seen, &X.cfg->wait);
    }
    hx_wire_resp *r = &reply_buf[qi];
    memset(r, 0, sizeof *r);
    reply_common(r, HX_RESP_ENTRY_DONE, req->seq, recv);
    r->entry_begin = exec_to_dsp(f->entry_begin);
    r->entry_end = exec_to_dsp(f->entry_end);
    uint32_t nw = __atomic_load_n(&X.nwaits, __ATOMIC_ACQUIRE);
    r->nwaits = nw < HX_MAX_WAITS ? nw : HX_MAX_WAITS;
    for (uint32_t i = 0; i < r->nwaits; i++) {
        copy_text(r->waits[i].who, sizeof r->waits[i].who, X.waits[i].who);
        copy_text(r->waits[i].on, sizeof r->waits[i].on, X.waits[i].on);
        r->waits[i].begin = exec_to_dsp(X.waits[i].begin);
        r->waits[i].end = exec_to_dsp(X.waits[i].end);
    }
    if (f->failed) {
        r->status = 1;
        copy_text(r->error, sizeof r->error, f->error);
    }
    send_reply(q, r);
}

/* Checks what the packet asks against which queue carries it: a task's
 * packet on that task's own queue (its callback is then the only thread
 * that touches its record), the fused entry on the entry's queue. */
static const char *packet_problem(int qi, const uint8_t *msg, uint32_t len) {
    const hx_wire_req *req = (const hx_wire_req *)msg;
    if (len != sizeof *req) return "packet of the wrong length";
    if (req->magic != HX_WIRE_MAGIC) return "bad magic";
    if (!S.started) return "no session started";
    if (req->op == HX_PKT_TASK) {
        if (req->task_or_mask >= HX_NTASKS) return "no such task";
        if ((int)req->task_or_mask != qi) return "task packet on another task's queue";
        return NULL;
    }
    if (req->op == HX_PKT_FUSED) {
        if (qi != HX_WIRE_Q_ENTRY) return "fused packet off the entry's queue";
        if (req->task_or_mask == 0 || (req->task_or_mask & ~((1u << HX_NTASKS) - 1))) return "bad task mask";
        return NULL;
    }
    return "unknown packet op";
}

/* The framework calls this (one thread per queue) when packets are there:
 * read every one, run it, reply. */
static void packet_callback(dspqueue_t q, AEEResult error, void *context) {
    (void)error;
    int qi = ((const queue_ctx *)context)->index;
    /* one message longer than any request, so a wrong-length packet is read
     * (and answered) rather than left to block the queue */
    uint64_t buf[64];
    for (;;) {
        uint32_t flags = 0, nbufs = 0, len = 0;
        int rc = dspqueue_read_noblock(q, &flags, 0, &nbufs, NULL, (uint32_t)sizeof buf, &len, (uint8_t *)buf);
        if (rc == AEE_EWOULDBLOCK) return;
        if (rc != AEE_SUCCESS) {
            /* an oversize packet stays in the ring: say so once and stop */
            send_error(q, qi, HX_RESP_ENTRY_DONE, 0, 0, dsp_now(), "unreadable packet (too long, or buffer refs)");
            return;
        }
        uint64_t recv = dsp_now();
        const hx_wire_req *req = (const hx_wire_req *)buf;
        const char *bad = packet_problem(qi, (const uint8_t *)buf, len);
        uint64_t seq = len >= sizeof *req ? req->seq : 0;
        uint32_t op = len >= sizeof *req && req->op == HX_PKT_TASK ? HX_RESP_TASK_DONE : HX_RESP_ENTRY_DONE;
        if (bad) send_error(q, qi, op, seq, len >= sizeof *req ? req->task_or_mask : 0, recv, bad);
        else if (req->op == HX_PKT_TASK) run_task(q, qi, req, recv);
        else run_fused(q, qi, req, recv);
    }
}

static void error_callback(dspqueue_t q, AEEResult error, void *context) {
    (void)q;
    FARF(ERROR, "hxfuse skel: queue %d error (AEE 0x%x)", ((const queue_ctx *)context)->index, (unsigned)error);
}

/* ---- methods ------------------------------------------------------------ */

static int release_if_asked(void) {
    if (!hx_release_asked(NULL)) return 0;
    if (!S.released) hx_release_resources();
    S.released = 1;
    return 1;
}

static void close_queues(void) {
    for (int i = 0; i < HX_WIRE_QUEUES; i++) {
        if (S.q[i]) dspqueue_close(S.q[i]);
        S.q[i] = NULL;
    }
    S.started = 0;
}

/* Unpacks argc NUL-terminated strings into S.argv; -1 if they do not parse. */
static int unpack_argv(const char *blob, uint32_t bytes, uint32_t argc) {
    if (argc == 0 || argc > MAX_ARGS || bytes > sizeof S.argv_blob || bytes == 0 || blob[bytes - 1] != 0) return -1;
    memcpy(S.argv_blob, blob, bytes);
    uint32_t n = 0, at = 0;
    while (at < bytes && n < argc) {
        S.argv[n++] = &S.argv_blob[at];
        at += (uint32_t)strlen(&S.argv_blob[at]) + 1;
    }
    if (n != argc || at != bytes) return -1;
    S.argv[n] = NULL;
    return 0;
}

static int setup(const hx_wire_setup_req *req, uint32_t blob_bytes, hx_wire_setup_resp *r) {
    char err[1024] = "";
    memset(r, 0, sizeof *r);
    r->version = HX_WIRE_VERSION;
#define FAIL(code, ...)                                                                                                \
    do {                                                                                                               \
        r->status = (code);                                                                                            \
        snprintf(r->error, sizeof r->error, __VA_ARGS__);                                                              \
        FARF(ERROR, "hxfuse skel: SETUP refused (status %d): %s", r->status, r->error);                                \
        return AEE_SUCCESS;                                                                                            \
    } while (0)
    if (S.set_up) return AEE_EBADSTATE;
    if (req->version != HX_WIRE_VERSION) FAIL(1, "wire version %u, the skel speaks %u", req->version, HX_WIRE_VERSION);
    if (req->argv_bytes != blob_bytes || unpack_argv((const char *)(req + 1), blob_bytes, req->argc) != 0)
        FAIL(1, "argv blob does not hold %u NUL-terminated strings in %u bytes", req->argc, req->argv_bytes);
    int rc = hx_parse_args((int)req->argc, S.argv, &S.cfg, err, sizeof err);
    if (rc > 0) FAIL(2, "--help: the AP prints the usage, the DSP runs points");
    if (rc < 0) FAIL(2, "%s", err);
    const hx_kernels *k = hx_kernels_fast();
    int tiled = S.cfg.precision == HX_FP32 ? k->gemm_f32_run_kc != NULL : k->gemm_u8i8_run_kc != NULL;
    if (S.cfg.m_tile_set && !tiled)
        FAIL(2, "--m-tile: the %s backend's GEMM blocking is fixed (got '%d')", k->name, S.cfg.m_tile);
    if (S.cfg.check_at_publish)
        FAIL(2, "--check-at-publish: the AP cannot read DSP memory at the moment of publication");
    /* Antagonists stress the AP's memory system and run there. */
    S.cfg.antagonists = 0;
    rc = hx_exec_setup(&X, &S.cfg, k, err, sizeof err);
    if (rc != 0) {
        hx_exec_teardown(&X);
        FAIL(rc == -3 ? 3 : 1, "%s", err);
    }
#undef FAIL
    S.xf = (hx_wire_xform){req->test_clock_offset_ns, req->test_clock_drift_ppm, hx_now_ns()};
    S.set_up = 1;
    S.released = 0;
    hx_wire_fill_setup(r, &X, &S.xf);
    return AEE_SUCCESS;
}

static int start(const hx_wire_start_req *req, hx_wire_status *s) {
    if (!S.set_up || S.started) return AEE_EBADSTATE;
    if (req->nqueues != HX_WIRE_QUEUES) {
        set_status(s, 1, AEE_EBADPARM, "START: wrong number of queues");
        return AEE_SUCCESS;
    }
    for (int i = 0; i < HX_WIRE_QUEUES; i++) {
        S.qctx[i].index = i;
        int rc = dspqueue_import(req->queue_id[i], packet_callback, error_callback, &S.qctx[i], &S.q[i]);
        if (rc != AEE_SUCCESS) {
            char msg[128];
            snprintf(msg, sizeof msg, "dspqueue_import of queue %d failed", i);
            S.q[i] = NULL;
            close_queues();
            set_status(s, 1, rc, msg);
            return AEE_SUCCESS;
        }
    }
    S.started = 1;
    set_status(s, 0, 0, NULL);
    return AEE_SUCCESS;
}

/* The buffers protocol.c's dump_npy writes, with its sizes. */
static const void *read_buffer(uint64_t which, size_t *bytes) {
    const hx_config *c = X.cfg;
    int f32 = c->precision == HX_FP32;
    size_t mk = (size_t)c->m * c->k, kn = (size_t)c->k * c->n, mn = (size_t)c->m * c->n;
    size_t vn = (size_t)c->v_rows * c->v_cols, rows = (size_t)c->v_rows;
    size_t dwin = (size_t)c->d_rows * c->d_src_stride;
    switch (which) {
    case HX_BUF_M_A: *bytes = mk * (f32 ? 4 : 1); return X.m.A;
    case HX_BUF_M_B: *bytes = kn * (f32 ? 4 : 1); return X.m.B;
    case HX_BUF_M_C: *bytes = mn * 4; return X.m.C;
    case HX_BUF_V_X: *bytes = vn * (f32 ? 4 : 2); return X.v.x;
    case HX_BUF_V_Y: *bytes = vn * (f32 ? 4 : 2); return X.v.y;
    case HX_BUF_V_ROWSUM: *bytes = rows * 4; return X.v.rowsum;
    case HX_BUF_V_ROWMAX: *bytes = rows * (f32 ? 4 : 2); return X.v.rowmax;
    case HX_BUF_D_SRC: /* the last window, the one the scratch must hold */
        *bytes = dwin;
        return X.d.src ? X.d.src + (size_t)(c->d_repeat - 1) * dwin : NULL;
    case HX_BUF_D_OUT: *bytes = (size_t)c->d_rows * (size_t)X.d.dst_stride; return X.d.out;
    default: *bytes = 0; return NULL;
    }
}

/* BEGIN_TRIAL: hx_run_group's per-trial reset, for every task. */
static void begin_trial(int empty) {
    X.nwaits = 0;
    for (int i = 0; i < HX_NTASKS; i++) hx_task_reset_record(&X.task[i], empty);
    hx_arena_reset_peak(&X.arena);
}

static int end_json(char *out, size_t cap, uint64_t *len) {
    hx_json j;
    hx_json_begin_buf(&j, out, cap);
    hx_platform_resources(&j);
    double c0 = hx_clock_calibration_start(), c1 = hx_clock_calibrate();
    if (c0 > 0) hx_json_f64(&j, "core_cycles_per_us_start", c0);
    else hx_json_null(&j, "core_cycles_per_us_start");
    if (c1 > 0) hx_json_f64(&j, "core_cycles_per_us_end", c1);
    else hx_json_null(&j, "core_cycles_per_us_end");
    hx_json_end(&j);
    *len = j.len;
    return j.truncated ? -1 : 0;
}

static int control(const hx_wire_ctl_req *req, hx_wire_ctl_resp *r, uint8_t *bulk, size_t bulk_cap) {
    memset(r, 0, sizeof *r);
    if (!S.set_up) return AEE_EBADSTATE;
    int task_op = req->op == HX_CTL_POISON || req->op == HX_CTL_CHECKSUM || req->op == HX_CTL_CKPT;
    if (task_op && req->task >= HX_NTASKS) {
        r->status = 1;
        snprintf(r->error, sizeof r->error, "no task %u", req->task);
    } else if (req->op == HX_CTL_PING) {
        r->value = dsp_now();
    } else if (req->op == HX_CTL_BEGIN_TRIAL) {
        begin_trial(req->arg != 0);
        if (release_if_asked()) {
            r->status = 6;
            snprintf(r->error, sizeof r->error, "preempted");
        }
    } else if (req->op == HX_CTL_POISON) {
        hx_task_poison(&X.task[req->task]);
    } else if (req->op == HX_CTL_CHECKSUM) {
        r->value = hx_task_checksum(&X.task[req->task]);
    } else if (req->op == HX_CTL_READ) {
        size_t total = 0;
        const uint8_t *p = read_buffer(req->arg, &total);
        if (!p || req->offset > total) {
            r->status = 1;
            snprintf(r->error, sizeof r->error, "READ: no buffer %llu, or offset %llu past its %zu bytes",
                     (unsigned long long)req->arg, (unsigned long long)req->offset, total);
        } else {
            uint64_t n = total - req->offset;
            if (n > req->length) n = req->length;
            if (n > HX_WIRE_BULK_MAX) n = HX_WIRE_BULK_MAX;
            if (n > bulk_cap) n = bulk_cap;
            if (n) memcpy(bulk, p + req->offset, n);
            r->value = total;
            r->bulk_bytes = n;
        }
    } else if (req->op == HX_CTL_CKPT) {
        /* the task's checkpoints of this trial, after it (the replies carry
         * only their counts: wire.h) */
        if (bulk_cap < sizeof(hx_wire_ckpts)) {
            r->status = 1;
            snprintf(r->error, sizeof r->error, "CKPT: a bulk buffer of %zu bytes, %zu needed", bulk_cap,
                     sizeof(hx_wire_ckpts));
        } else {
            static hx_wire_ckpts c; /* 9 KB: not on the FastRPC thread's stack; bulk may be unaligned */
            hx_wire_pack_ckpts(&c, &X.task[req->task], &X, &S.xf);
            memcpy(bulk, &c, sizeof c);
            r->bulk_bytes = sizeof c;
        }
    } else if (req->op == HX_CTL_END && bulk_cap == 0) {
        r->status = 1;
        snprintf(r->error, sizeof r->error, "END: no bulk buffer for the resources text");
    } else if (req->op == HX_CTL_END) {
        if (end_json((char *)bulk, bulk_cap, &r->bulk_bytes) != 0) {
            r->status = 1;
            snprintf(r->error, sizeof r->error, "END: the resources text does not fit in %zu bytes", bulk_cap);
        }
    } else {
        r->status = 1;
        snprintf(r->error, sizeof r->error, "unknown control op %u", req->op);
    }
    r->dsp_time = dsp_now();
    return AEE_SUCCESS;
}

static int stop(hx_wire_status *s) {
    if (!S.set_up) return AEE_EBADSTATE;
    release_if_asked();
    close_queues();
    hx_exec_teardown(&X);
    S.set_up = 0;
    set_status(s, 0, 0, NULL);
    return AEE_SUCCESS;
}

/* Method 0, open: the shape qaic generates for a remote_handle64
 * interface's open and the one the loader calls (quic/fastrpc
 * src/mod_table.c, open_mod_handle_open: REMOTE_SCALARS_MAKEX(0, 0, 2, 0, 0,
 * 1)): in buffer 0 holds the URI's length as an int32 counting its NUL, in
 * buffer 1 the URI, and the session's handle goes to out handle 0, pra[2].
 * The generated skel checks the same: an int32 length, a URI at least that
 * long and NUL-terminated at that length. */
static int open_session(const remote_arg *pra, remote_handle64 *h) {
    int32_t len = 0;
    if (pra[0].buf.pv == NULL || pra[0].buf.nLen < sizeof len) return AEE_EBADPARM;
    memcpy(&len, pra[0].buf.pv, sizeof len);
    const char *uri = pra[1].buf.pv;
    if (!uri || len <= 0 || pra[1].buf.nLen < (size_t)len || uri[len - 1] != 0) return AEE_EBADPARM;
    if (S.open) return AEE_EBADSTATE;
    memset(&S, 0, sizeof S);
    S.open = 1;
    S.handle = ++next_handle;
    *h = S.handle;
    return AEE_SUCCESS;
}

static int close_session(remote_handle64 h) {
    if (!S.open || h != S.handle) return AEE_EBADPARM;
    if (S.set_up) { /* the AP went away without STOP: leave nothing running */
        hx_wire_status s;
        stop(&s);
    }
    S.open = 0;
    return AEE_SUCCESS;
}

/* The one exported symbol (the URI names it): every other name of the skel
 * and its executor stays inside the library. */
__attribute__((visibility("default"))) int hxfuse_skel_handle_invoke(remote_handle64 h, uint32_t sc, remote_arg *pra) {
    uint32_t m = REMOTE_SCALARS_METHOD(sc);
    if (m == HX_METHOD_OPEN) {
        if (!scalars_are(sc, m)) return AEE_EBADPARM;
        return open_session(pra, &pra[2].h64);
    }
    /* Method 1, close: the handle as in handle 0 (mod_table.c,
     * open_mod_handle_close: REMOTE_SCALARS_MAKEX(0, 1, 0, 0, 1, 0)). */
    if (m == HX_METHOD_CLOSE) {
        if (!scalars_are(sc, m)) return AEE_EBADPARM;
        return close_session(pra[0].h64);
    }
    if (!S.open || h != S.handle) return AEE_EBADPARM;
    if (!scalars_are(sc, m)) return m < HX_WIRE_NMETHODS ? AEE_EBADPARM : AEE_EUNSUPPORTED;
    int32_t len[3];
    /* pra[0] is primIn (the sequences' lengths), then the sequences */
    switch (m) {
    case HX_METHOD_SETUP:
        if (seq_lengths(pra, 2, len) || len[0] < (int32_t)sizeof(hx_wire_setup_req) ||
            len[1] != (int32_t)sizeof(hx_wire_setup_resp))
            return AEE_EBADPARM;
        return setup(pra[1].buf.pv, (uint32_t)len[0] - (uint32_t)sizeof(hx_wire_setup_req), pra[2].buf.pv);
    case HX_METHOD_START:
        if (seq_lengths(pra, 2, len) || len[0] != (int32_t)sizeof(hx_wire_start_req) ||
            len[1] != (int32_t)sizeof(hx_wire_status))
            return AEE_EBADPARM;
        return start(pra[1].buf.pv, pra[2].buf.pv);
    case HX_METHOD_CONTROL:
        if (seq_lengths(pra, 3, len) || len[0] != (int32_t)sizeof(hx_wire_ctl_req) ||
            len[1] != (int32_t)sizeof(hx_wire_ctl_resp))
            return AEE_EBADPARM;
        return control(pra[1].buf.pv, pra[2].buf.pv, pra[3].buf.pv, (size_t)len[2]);
    case HX_METHOD_STOP:
        if (seq_lengths(pra, 1, len) || len[0] != (int32_t)sizeof(hx_wire_status)) return AEE_EBADPARM;
        return stop(pra[1].buf.pv);
    default: return AEE_EUNSUPPORTED;
    }
}
