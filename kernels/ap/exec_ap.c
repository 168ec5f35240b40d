/* The AP executor: exec.h's executor, split across the boundary.  The
 * protocol (protocol.c, unchanged) runs here on a mirror of hx_exec whose
 * task records come from the DSP's replies; the skel runs the engines.
 *
 *   FastRPC methods (stub.c): SETUP, START, CONTROL (ping, begin-trial,
 *     poison, checksum, read, end), STOP: untimed, between trials.
 *   dspqueue packets: the timed path.  One queue per engine; each queue's
 *     packet callback reads every reply with dspqueue_read_noblock, stamps
 *     host_seen at the read and signals the waiting request's event.  Never
 *     a blocking dspqueue_read there: libcdsprpc runs the callback holding
 *     the queue's non-recursive packet mutex, which dspqueue_read takes
 *     (quic/fastrpc src/dspqueue/dspqueue_cpu.c,
 *     dspqueue_packet_callback_thread and dspqueue_read; inc/dspqueue.h:
 *     "Clients cannot use blocking read calls if a packet callback has been
 *     set"), so the first reply would deadlock the callback thread.
 *
 * Every DSP time is mapped onto the AP clock with the start fit of the
 * clock alignment (clock_align.h) and written as ns since the mirror's
 * epoch, so the records have hxrun's schema and one time base.  Every wait
 * on the DSP has a timeout (--ap-timeout-s): a lost reply ends the run with
 * an error naming what was awaited, never a hang. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock_align.h"
#include "exec_ap.h"
#include "json.h"
#include "platform.h"
#include "record.h"
#include "rpc.h"

#define PINGS 32

static const char *const queue_names[HX_WIRE_QUEUES] = {"M", "V", "D"}; /* by HX_WIRE_Q_*: the task it serves */
static const int task_order[HX_NTASKS] = {HX_M, HX_D, HX_V};            /* exec_host.c's fixed order */

/* One task's reply of the current trial, as the callback left it. */
typedef struct reply_slot {
    hx_wire_task rec;
    uint64_t host_seen; /* hx_exec_now at the read */
    int32_t status;
    char error[256];
} reply_slot;

/* A B submitter: one persistent thread per queue, released with the others
 * by one bump of `go`, so B's packets enter their queues at once. */
typedef struct submitter {
    struct ap_state *st;
    int task;
    hx_thread *thread;
    uint64_t seq;        /* the request to write, for the release `for_gen` */
    uint32_t for_gen;    /* the value of `go` this request is for (0: none) */
    uint64_t begin, end; /* hx_exec_now around its write */
    int cpu;
    int rc;
    hx_event written;
} submitter;

typedef struct queue_ctx {
    struct ap_state *st;
    int q;
} queue_ctx;

typedef struct ap_state {
    hx_ap_options opt;
    hx_exec *x;
    hx_rpc_lib lib;
    hx_rpc_session s;
    int loaded, set_up, started, stopped;
    dspqueue_t q[HX_WIRE_QUEUES];
    uint64_t qid[HX_WIRE_QUEUES];
    queue_ctx qctx[HX_WIRE_QUEUES];
    uint64_t timeout_ns;
    hx_clock_fit fit_start, fit_end;
    int have_end;
    /* the set-up reply, kept for meta.device */
    hx_wire_setup_resp setup;
    /* END's bulk: resources and the core clock at the end */
    char end_json[16384];
    char resources[16384];
    double cycles_end;
    int have_end_json;

    /* routing of the current trial's replies */
    uint64_t seq;                 /* last request number used */
    uint64_t task_seq[HX_NTASKS]; /* the request each task's reply must echo (0: none expected) */
    uint64_t entry_seq;           /* the fused request of this trial (0: none) */
    reply_slot slot[HX_NTASKS];   /* written by a callback before the task's `published` (release) */
    hx_wire_resp entry;           /* ENTRY_DONE, before x->fused.done */
    hx_wire_resp waits_src;       /* A, B: the reply with the most DSP waits (cumulative since BEGIN_TRIAL) */
    uint64_t peak;                /* max scratch peak over the trial's replies */
    pthread_mutex_t lock;         /* callbacks of different queues may run at once */
    char transport_err[512];      /* first transport failure: the run ends */
    int transport_failed;

    /* B's submitters */
    submitter sub[HX_NTASKS];
    int nsub;
    hx_counter go;
    uint32_t stop_subs;

    /* AP-owned copies of the DSP's buffers for the .npy dump */
    void *buf[HX_NBUFS];
    const char *failure; /* hx_exec_finish's status, NULL: none */
    char wait_names[HX_MAX_WAITS][2][8];
} ap_state;

static ap_state ap;

void hx_ap_set_options(const hx_ap_options *o) { ap.opt = *o; }

/* The AP clock the DSP shares where it can (clock_align.h). */
uint64_t hx_exec_now(const hx_exec *x) { return hx_clock_ap_now() - x->epoch; }

void hx_exec_note_wait(hx_exec *x, const char *who, const char *on, uint64_t b, uint64_t e) {
    uint32_t i = __atomic_fetch_add(&x->nwaits, 1u, __ATOMIC_RELAXED);
    if (i < HX_MAX_WAITS) x->waits[i] = (hx_wait_rec){who, on, b, e};
}

/* The first transport failure wins; every later wait sees it and ends. */
static void transport_fail(ap_state *st, const char *fmt, const char *what, const char *queue, int code, int at) {
    char e[1024];
    hx_aee_explain(code, at, e, sizeof e);
    pthread_mutex_lock(&st->lock);
    if (!st->transport_failed) {
        snprintf(st->transport_err, sizeof st->transport_err, fmt, what, queue, e);
        __atomic_store_n(&st->transport_failed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&st->lock);
    hx_counter_bump(&st->x->host_channel);
}

static int failed(const ap_state *st) { return __atomic_load_n(&st->transport_failed, __ATOMIC_ACQUIRE); }

static uint64_t map_dsp(void *ctx, uint64_t t) {
    ap_state *st = (ap_state *)ctx;
    return hx_clock_map(&st->fit_start, st->x->epoch, t);
}

/* --- replies ------------------------------------------------------------ */

static void note_common(ap_state *st, const hx_wire_resp *r) {
    if (r->scratch_peak_bytes > st->peak) st->peak = r->scratch_peak_bytes;
    /* a higher-priority client asked the DSP for its resources: the
     * protocol ends the run at the next boundary */
    if (r->release_asked) hx_release_ask();
}

static void route(ap_state *st, const hx_wire_resp *r, uint64_t seen, int q) {
    hx_exec *x = st->x;
    if (r->magic != HX_WIRE_MAGIC) {
        transport_fail(st, "%s on queue %s: a reply without the hxfuse magic (%s)", "dspqueue_read", queue_names[q],
                       AEE_EBADPARM, HX_AT_QUEUE_READ);
        return;
    }
    pthread_mutex_lock(&st->lock);
    if (r->op == HX_RESP_TASK_DONE && r->task < HX_NTASKS && st->task_seq[r->task] && r->seq == st->task_seq[r->task]) {
        reply_slot *s = &st->slot[r->task];
        s->rec = r->rec;
        s->host_seen = seen;
        s->status = r->status;
        snprintf(s->error, sizeof s->error, "%.*s", (int)sizeof r->error, r->error);
        note_common(st, r);
        if (r->nwaits > st->waits_src.nwaits) st->waits_src = *r;
        st->task_seq[r->task] = 0; /* one reply per request */
        pthread_mutex_unlock(&st->lock);
        hx_event_signal(&x->task[r->task].published);
    } else if (r->op == HX_RESP_ENTRY_DONE && st->entry_seq && r->seq == st->entry_seq) {
        st->entry = *r;
        st->entry.error[sizeof st->entry.error - 1] = 0;
        note_common(st, r);
        st->entry_seq = 0;
        pthread_mutex_unlock(&st->lock);
        hx_event_signal(&x->fused.done);
    } else {
        /* a reply to no request of this trial: a late one after a failure
         * (the run is ending) or a skel bug; either way not this trial's */
        pthread_mutex_unlock(&st->lock);
    }
    hx_counter_bump(&x->host_channel);
}

/* dspqueue's packet callback: read every reply now in the queue, without
 * blocking (see the top of this file), until the queue is empty. */
static void packet_cb(dspqueue_t queue, AEEResult error, void *context) {
    queue_ctx *c = (queue_ctx *)context;
    ap_state *st = c->st;
    static __thread hx_wire_resp r; /* large: off the callback's stack */
    if (error != AEE_SUCCESS) {
        transport_fail(st, "%s on queue %s: %s", "dspqueue packet callback", queue_names[c->q], error, HX_AT_QUEUE);
        return;
    }
    for (;;) {
        uint32_t flags = 0, nbufs = 0, len = 0;
        int rc = st->lib.dq_read_noblock(queue, &flags, 0, &nbufs, NULL, sizeof r, &len, (uint8_t *)&r);
        uint64_t seen = hx_exec_now(st->x);
        if (rc == AEE_EWOULDBLOCK) return; /* drained */
        if (rc != AEE_SUCCESS) {
            transport_fail(st, "%s on queue %s: %s", "dspqueue_read_noblock", queue_names[c->q], rc, HX_AT_QUEUE_READ);
            return;
        }
        if (len < offsetof(hx_wire_resp, entry_begin)) {
            transport_fail(st, "%s on queue %s: a reply shorter than its header (%s)", "dspqueue_read",
                           queue_names[c->q], AEE_EBADPARM, HX_AT_QUEUE_READ);
            return;
        }
        if (len < sizeof r) memset((uint8_t *)&r + len, 0, sizeof r - len);
        route(st, &r, seen, c->q);
    }
}

static void error_cb(dspqueue_t queue, AEEResult error, void *context) {
    (void)queue;
    queue_ctx *c = (queue_ctx *)context;
    transport_fail(c->st, "%s on queue %s: %s", "dspqueue error callback", queue_names[c->q], error, HX_AT_QUEUE);
}

/* --- waiting ------------------------------------------------------------ */

/* Sleeps until the host channel moves past `seen` or the deadline passes
 * (the wait policy's spin first, as hx_counter_wait_change).  Returns 0, or
 * -1 at the deadline. */
static int wait_change(hx_exec *x, uint32_t seen, uint64_t deadline) {
    hx_counter *c = &x->host_channel;
    const hx_wait_policy *p = &x->cfg->wait;
    uint64_t spin_end = hx_now_ns() + (p->strategy == HX_WAIT_SPIN ? UINT64_MAX / 4 : p->spin_ns);
    for (unsigned i = 1;; i++) {
        if (hx_counter_load(c) != seen) return 0;
        uint64_t now = hx_now_ns();
        if (now >= deadline) return -1;
        if (now < spin_end) {
            hx_cpu_relax();
            if ((i & 63) == 0) hx_yield();
            continue;
        }
        __atomic_fetch_add(&c->waiters, 1u, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&c->value, __ATOMIC_SEQ_CST) == seen) hx_word_wait_timeout(&c->value, seen, deadline - now);
        __atomic_fetch_sub(&c->waiters, 1u, __ATOMIC_SEQ_CST);
    }
}

static void what_pending(const ap_state *st, uint32_t pending, int want_entry, char *buf, size_t n) {
    int k = snprintf(buf, n, "%s", want_entry ? "ENTRY_DONE" : "");
    for (int i = 0; i < HX_NTASKS && k > 0 && (size_t)k < n; i++)
        if (pending & HX_BIT(i))
            k += snprintf(buf + k, n - k, "%sTASK_DONE of %s (seq %llu)", k ? ", " : "", hx_task_names[i],
                          (unsigned long long)st->task_seq[i]);
}

/* Waits for the replies of the tasks in `mask` and, if want_entry, the
 * fused entry's return (a failed entry sends no more: its return ends the
 * wait).  Stamps host_seen as exec_host.c does: with early completion at
 * each reply's read, without it when the last awaited one came.  Returns 0,
 * or -1 with err (transport failure, timeout). */
static int host_wait(ap_state *st, uint32_t mask, int want_entry, hx_host_times *h, char *err, size_t errlen) {
    hx_exec *x = st->x;
    uint64_t b = hx_exec_now(x);
    uint64_t deadline = hx_now_ns() + st->timeout_ns;
    uint32_t pending = mask;
    for (;;) {
        uint32_t seen = hx_counter_load(&x->host_channel);
        int returned = want_entry && hx_event_is_set(&x->fused.done);
        for (int i = 0; i < HX_NTASKS; i++)
            if ((pending & HX_BIT(i)) && hx_event_is_set(&x->task[i].published)) pending &= ~HX_BIT(i);
        if (failed(st)) {
            snprintf(err, errlen, "%s", st->transport_err);
            return -1;
        }
        int entry_failed = returned && st->entry.status != 0;
        if ((!want_entry || returned) && (pending == 0 || entry_failed)) break;
        if (wait_change(x, seen, deadline)) {
            char what[256];
            what_pending(st, pending, want_entry && !returned, what, sizeof what);
            snprintf(err, errlen, "timed out after %g s waiting for the DSP's %s (--ap-timeout-s)",
                     st->timeout_ns / 1e9, what);
            return -1;
        }
    }
    uint64_t e = hx_exec_now(x);
    for (int i = 0; i < HX_NTASKS; i++) {
        if (!(mask & HX_BIT(i)) || !hx_event_is_set(&x->task[i].published)) continue;
        hx_task *t = &x->task[i];
        uint64_t launch = t->launch; /* A, B: the AP's submit, already set */
        hx_wire_unpack_task(t, &st->slot[i].rec, x, map_dsp, st);
        if (!want_entry) t->launch = launch;
        t->host_seen = x->cfg->early_completion ? st->slot[i].host_seen : e;
    }
    hx_exec_note_wait(x, "host",
                      want_entry ? "req" : (mask == (mask & -mask) ? hx_task_names[__builtin_ctz(mask)] : "all"), b, e);
    if (!h->wait_begin) h->wait_begin = b;
    h->wait_end = e;
    h->wait_ns += e - b;
    for (int i = 0; i < HX_NTASKS; i++)
        if ((mask & HX_BIT(i)) && hx_event_is_set(&x->task[i].published) && st->slot[i].status != 0) {
            snprintf(err, errlen, "the DSP failed task %s: %s", hx_task_names[i], st->slot[i].error);
            return -1;
        }
    return 0;
}

/* --- requests ----------------------------------------------------------- */

static int write_packet(ap_state *st, int q, const hx_wire_req *req) {
    uint32_t us = st->timeout_ns / 1000 > 0xfffffffeu ? 0xfffffffeu : (uint32_t)(st->timeout_ns / 1000);
    return st->lib.dq_write(st->q[q], 0, 0, NULL, sizeof *req, (const uint8_t *)req, us);
}

static int packet_error(char *err, size_t errlen, int q, int rc) {
    char e[1024];
    snprintf(err, errlen, "dspqueue_write on queue %s failed: %s", queue_names[q],
             hx_aee_explain(rc, HX_AT_QUEUE_WRITE, e, sizeof e));
    return -1;
}

/* Writes one packet from the host thread, timed as exec_host.c's submit. */
static int submit(ap_state *st, int q, const hx_wire_req *req, hx_task *t, hx_host_times *h, char *err, size_t errlen) {
    hx_exec *x = st->x;
    if (!h->requests) h->cpu = hx_current_cpu();
    uint64_t b = hx_exec_now(x);
    if (t) t->launch = b;
    int rc = write_packet(st, q, req);
    uint64_t end = hx_exec_now(x);
    if (rc != AEE_SUCCESS) return packet_error(err, errlen, q, rc);
    if (!h->submit_begin) h->submit_begin = b;
    h->submit_end = end;
    h->submit_ns += end - b;
    h->submits[h->requests++] = end - b;
    return 0;
}

static void submitter_main(void *arg) {
    submitter *s = (submitter *)arg;
    ap_state *st = s->st;
    /* Spin, then sleep, whatever --wait says: a submitter that spun between
     * trials would take a core from the engines (the loopback runs them on
     * this machine's cores).  All wake on the same bump, so they still write
     * together. */
    hx_wait_policy pol = {HX_WAIT_SPIN_BLOCK, st->x->cfg->wait.spin_ns};
    uint32_t gen = hx_counter_load(&st->go);
    for (;;) {
        /* B's release: every submitter wakes on the same bump */
        gen = hx_counter_wait_change(&st->go, gen, &pol);
        if (__atomic_load_n(&st->stop_subs, __ATOMIC_ACQUIRE)) return;
        /* Only a request made for this very release: a submitter outside a
         * trial's mask may wake late, after the host has already set its
         * request for a later trial, and must neither write that one early
         * nor write it twice. */
        if (__atomic_load_n(&s->for_gen, __ATOMIC_ACQUIRE) != gen) continue;
        hx_wire_req req = {HX_WIRE_MAGIC, HX_PKT_TASK, (uint32_t)s->task, 0, s->seq};
        s->cpu = hx_current_cpu();
        s->begin = hx_exec_now(st->x);
        s->rc = write_packet(st, s->task, &req);
        s->end = hx_exec_now(st->x);
        hx_event_signal(&s->written);
        hx_counter_bump(&st->x->host_channel);
    }
}

/* Group B: every task's packet from its own submitter, released at once. */
static int run_b(ap_state *st, uint32_t mask, hx_host_times *h, char *err, size_t errlen) {
    hx_exec *x = st->x;
    /* The host alone bumps `go` (and teardown, after the last trial). */
    uint32_t next = hx_counter_load(&st->go) + 1;
    for (int i = 0; i < HX_NTASKS; i++) {
        submitter *s = &st->sub[i];
        if (!(mask & HX_BIT(i))) continue;
        hx_event_reset(&s->written);
        s->seq = st->task_seq[i];
        __atomic_store_n(&s->for_gen, next, __ATOMIC_RELEASE); /* publishes seq */
    }
    h->cpu = hx_current_cpu();
    hx_counter_bump(&st->go);
    /* the submits are recorded once every submitter has written */
    uint64_t deadline = hx_now_ns() + st->timeout_ns;
    for (int i = 0; i < HX_NTASKS; i++) {
        if (!(mask & HX_BIT(i))) continue;
        while (!hx_event_is_set(&st->sub[i].written)) {
            uint32_t seen = hx_counter_load(&x->host_channel);
            if (hx_event_is_set(&st->sub[i].written)) break;
            if (failed(st)) {
                snprintf(err, errlen, "%s", st->transport_err);
                return -1;
            }
            if (wait_change(x, seen, deadline)) {
                snprintf(err, errlen, "timed out after %g s waiting for the B submitter of queue %s",
                         st->timeout_ns / 1e9, queue_names[i]);
                return -1;
            }
        }
    }
    /* a packet that was not written has no reply to wait for */
    for (int i = 0; i < HX_NTASKS; i++)
        if ((mask & HX_BIT(i)) && st->sub[i].rc != AEE_SUCCESS) return packet_error(err, errlen, i, st->sub[i].rc);
    int rc = host_wait(st, mask, 0, h, err, errlen);
    for (int j = 0; j < HX_NTASKS; j++) {
        submitter *s = &st->sub[task_order[j]];
        if (!(mask & HX_BIT(s->task))) continue;
        x->task[s->task].launch = s->begin;
        if (!h->submit_begin || s->begin < h->submit_begin) h->submit_begin = s->begin;
        if (s->end > h->submit_end) h->submit_end = s->end;
        h->submit_ns += s->end - s->begin;
        h->submits[h->requests++] = s->end - s->begin;
    }
    return rc;
}

/* --- controls ----------------------------------------------------------- */

static int control(ap_state *st, uint32_t op, uint32_t task, uint64_t arg, uint64_t off, uint64_t len,
                   hx_wire_ctl_resp *resp, void *bulk, size_t cap, char *err, size_t errlen) {
    static const char *const names[] = {"?", "PING", "BEGIN_TRIAL", "POISON", "CHECKSUM", "READ", "END", "CKPT"};
    hx_wire_ctl_req req = {op, task, arg, off, len};
    memset(resp, 0, sizeof *resp);
    int rc = hxfuse_control(&st->s, &req, resp, bulk, cap);
    if (rc != AEE_SUCCESS) {
        char e[1024];
        snprintf(err, errlen, "hxfuse CONTROL %s failed: %s", names[op <= HX_CTL_CKPT ? op : 0],
                 hx_aee_explain(rc, HX_AT_INVOKE, e, sizeof e));
        return -1;
    }
    if (resp->status != 0) {
        resp->error[sizeof resp->error - 1] = 0;
        snprintf(err, errlen, "hxfuse CONTROL %s: the DSP refused: %s", names[op <= HX_CTL_CKPT ? op : 0], resp->error);
        return -1;
    }
    return 0;
}

/* A control failure where the hook returns nothing (poison, checksum):
 * kept, and the next trial or the end reports it. */
static void keep_error(ap_state *st, const char *e) {
    pthread_mutex_lock(&st->lock);
    if (!st->transport_failed) {
        snprintf(st->transport_err, sizeof st->transport_err, "%s", e);
        __atomic_store_n(&st->transport_failed, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&st->lock);
}

static int ping_once(void *ctx, uint64_t *dsp, char *err, size_t errlen) {
    hx_wire_ctl_resp r;
    if (control((ap_state *)ctx, HX_CTL_PING, 0, 0, 0, 0, &r, NULL, 0, err, errlen)) return -1;
    *dsp = r.value;
    return 0;
}

static int ping_fit(ap_state *st, hx_clock_fit *fit, char *err, size_t errlen) {
    return hx_clock_measure(fit, PINGS, ping_once, st, err, errlen);
}

void hx_task_poison(hx_task *t) {
    char e[512];
    hx_wire_ctl_resp r;
    if (!failed(&ap) && control(&ap, HX_CTL_POISON, (uint32_t)t->id, 0, 0, 0, &r, NULL, 0, e, sizeof e))
        keep_error(&ap, e);
}

uint64_t hx_task_checksum(const hx_task *t) {
    char e[512];
    hx_wire_ctl_resp r;
    if (failed(&ap) || control(&ap, HX_CTL_CHECKSUM, (uint32_t)t->id, 0, 0, 0, &r, NULL, 0, e, sizeof e)) {
        if (!failed(&ap)) keep_error(&ap, e);
        return 0;
    }
    return r.value;
}

/* --- set-up and teardown ------------------------------------------------ */

static size_t argv_blob(const hx_ap_options *o, char *blob, size_t cap) {
    size_t n = 0;
    for (int i = 0; i < o->argc; i++) {
        size_t l = strlen(o->argv[i]) + 1;
        if (n + l > cap) return (size_t)-1;
        memcpy(blob + n, o->argv[i], l);
        n += l;
    }
    return n;
}

/* Set-up, in steps (exec_ap.h: the self-test ladder runs them one by one
 * and names the first that fails; hx_exec_setup runs them all).  Each
 * returns 0 with what it saw in `d`, or hxrun's set-up codes (-1, -2 bad
 * option on the DSP, -3 plan cannot work) with the error in `d`. */
static void step_begin(hx_exec *x, const hx_config *cfg) {
    ap_state *st = &ap;
    memset(x, 0, sizeof *x);
    hx_ap_options opt = st->opt;
    memset(st, 0, sizeof *st);
    st->opt = opt;
    st->x = x;
    pthread_mutex_init(&st->lock, NULL);
    st->timeout_ns = (uint64_t)((opt.timeout_s > 0 ? opt.timeout_s : HX_AP_TIMEOUT_DEFAULT_S) * 1e9);
    x->cfg = cfg;
    x->epoch = hx_clock_ap_now();
    x->nallowed = hx_allowed_cores(x->allowed, HX_MAX_CORES);
}

static int step_library(ap_state *st, char *d, size_t n) {
    if (hx_rpc_load(&st->lib, st->opt.cdsprpc, d, n)) return -1;
    st->loaded = 1;
    snprintf(d, n, "%s loaded%s%s", st->lib.path, st->lib.stand_in_text ? "; loopback stand-in: " : "",
             st->lib.stand_in_text ? st->lib.stand_in_text : "");
    return 0;
}

static int step_session(ap_state *st, char *d, size_t n) {
    if (hxfuse_open(&st->s, &st->lib, d, n)) return -1;
    snprintf(d, n, "unsigned PD granted, %s opened, latency QoS %s", HX_SKEL_LIB,
             st->s.latency_qos ? "accepted" : "refused (recorded; the control path is slower, not wrong)");
    return 0;
}

static int step_setup(ap_state *st, char *d, size_t n) {
    static char blob[65536];
    size_t nb = argv_blob(&st->opt, blob, sizeof blob);
    if (nb == (size_t)-1) {
        snprintf(d, n, "the options for the DSP exceed %zu bytes", sizeof blob);
        return -1;
    }
    hx_wire_setup_req req = {HX_WIRE_VERSION,        (uint32_t)st->opt.argc, (uint32_t)nb, 0,
                             st->opt.test_offset_ns, st->opt.test_drift_ppm};
    int rc = hxfuse_setup(&st->s, &req, blob, &st->setup);
    if (rc != AEE_SUCCESS) {
        char e[1024];
        snprintf(d, n, "hxfuse SETUP failed: %s", hx_aee_explain(rc, HX_AT_INVOKE, e, sizeof e));
        return -1;
    }
    hx_wire_setup_resp *sr = &st->setup;
    sr->error[sizeof sr->error - 1] = 0;
    sr->device_json[sizeof sr->device_json - 1] = 0;
    if (sr->status != 0) {
        const char *hint = hx_setup_hint(sr->error);
        snprintf(d, n, "%s%s%s", sr->error, hint ? "; hint: " : "", hint ? hint : "");
        return sr->status == 2 ? -2 : sr->status == 3 ? -3 : -1;
    }
    st->set_up = 1; /* the skel holds an executor now: STOP at teardown, whatever fails next */
    if (hx_wire_apply_setup(st->x, sr, d, n)) return -1;
    snprintf(d, n, "the DSP built its executor: kernels %s, %d extra vector workers, scratch %llu bytes%s",
             st->x->kern->name, st->x->nvworkers, (unsigned long long)st->x->arena.capacity,
             st->x->arena.on_chip ? " on chip" : "");
    return 0;
}

static int step_queues(ap_state *st, char *d, size_t n) {
    hx_exec *x = st->x;
    for (int i = 0; i < HX_NTASKS; i++) {
        hx_event_reset(&x->task[i].published);
        st->sub[i] = (submitter){.st = st, .task = i};
    }
    for (int q = 0; q < HX_WIRE_QUEUES; q++) {
        st->qctx[q] = (queue_ctx){st, q};
        int rc = st->lib.dq_create(CDSP_DOMAIN_ID, 0, HX_WIRE_QUEUE_BYTES, HX_WIRE_QUEUE_BYTES, packet_cb, error_cb,
                                   &st->qctx[q], &st->q[q]);
        if (rc != AEE_SUCCESS) {
            st->q[q] = NULL;
            char e[1024];
            snprintf(d, n, "dspqueue_create for queue %s failed: %s", queue_names[q],
                     hx_aee_explain(rc, HX_AT_QUEUE, e, sizeof e));
            return -1;
        }
        rc = st->lib.dq_export(st->q[q], &st->qid[q]);
        if (rc != AEE_SUCCESS) {
            char e[1024];
            snprintf(d, n, "dspqueue_export of queue %s failed: %s", queue_names[q],
                     hx_aee_explain(rc, HX_AT_QUEUE, e, sizeof e));
            return -1;
        }
    }
    hx_wire_start_req sreq = {HX_WIRE_QUEUES, 0, {0}};
    for (int q = 0; q < HX_WIRE_QUEUES; q++) sreq.queue_id[q] = st->qid[q];
    hx_wire_status ss;
    memset(&ss, 0, sizeof ss);
    int rc = hxfuse_start(&st->s, &sreq, &ss);
    if (rc != AEE_SUCCESS || ss.status != 0) {
        ss.error[sizeof ss.error - 1] = 0;
        char e[1024];
        if (rc != AEE_SUCCESS) snprintf(d, n, "hxfuse START failed: %s", hx_aee_explain(rc, HX_AT_INVOKE, e, sizeof e));
        else if (ss.dsp_code)
            snprintf(d, n, "hxfuse START: the DSP refused: %s: %s", ss.error,
                     hx_aee_explain(ss.dsp_code, HX_AT_QUEUE, e, sizeof e));
        else snprintf(d, n, "hxfuse START: the DSP refused: %s", ss.error);
        return -1;
    }
    st->started = 1;
    snprintf(d, n, "%d queues of %u bytes each way created, exported and imported by the DSP", HX_WIRE_QUEUES,
             HX_WIRE_QUEUE_BYTES);
    return 0;
}

static int step_ping(ap_state *st, char *d, size_t n) {
    if (ping_fit(st, &st->fit_start, d, n)) return -1;
    snprintf(d, n, "DSP clock offset %lld ns +- %llu ns by the %s (minimum round trip %llu ns of %d pings)",
             (long long)st->fit_start.offset_ns, (unsigned long long)st->fit_start.uncertainty_ns,
             st->fit_start.method == HX_CLOCK_SHARED_COUNTER ? "shared counter" : "ping-pong",
             (unsigned long long)st->fit_start.rtt_ns, st->fit_start.samples);
    return 0;
}

/* B's submitters and the antagonists: the AP's own threads. */
static int step_threads(ap_state *st, char *d, size_t n) {
    for (int i = 0; i < HX_NTASKS; i++) {
        char name[16];
        snprintf(name, sizeof name, "submit-%s", queue_names[i]);
        st->sub[i].thread = hx_thread_start(submitter_main, &st->sub[i], name, -1, d, n);
        if (!st->sub[i].thread) return -1;
        st->nsub = i + 1;
    }
    /* the antagonists load the AP's memory system, where hxrun-ap runs */
    if (hx_antagonists_start(&st->x->bw, st->x->cfg, d, n)) return -1;
    snprintf(d, n, "%d B submitters, %d antagonists started", st->nsub, st->x->bw.n);
    return 0;
}

typedef int (*step_fn)(ap_state *st, char *d, size_t n);
static const step_fn steps[HX_AP_NSTEPS] = {step_library, step_session, step_setup,
                                            step_queues,  step_ping,    step_threads};
const char *const hx_ap_step_names[HX_AP_NSTEPS] = {"library", "session", "setup", "queues", "ping", "threads"};

void hx_ap_begin(hx_exec *x, const hx_config *cfg) { step_begin(x, cfg); }

int hx_ap_step(int step, char *detail, size_t len) { return steps[step](&ap, detail, len); }

int hx_exec_setup(hx_exec *x, const hx_config *cfg, const hx_kernels *kern, char *err, size_t errlen) {
    (void)kern; /* the DSP's backend runs the tasks: the mirror's table comes from SETUP */
    step_begin(x, cfg);
    for (int i = 0; i < HX_AP_NSTEPS; i++) {
        int rc = steps[i](&ap, err, errlen);
        if (rc) return rc;
    }
    err[0] = 0;
    return 0;
}

/* Where teardown is now, for a teardown that does not return (the self-test
 * names the call it is stuck in). */
static const char *teardown_stage = "not started";
static void stage(const char *what) { __atomic_store_n(&teardown_stage, what, __ATOMIC_RELEASE); }
const char *hx_ap_teardown_stage(void) { return __atomic_load_n(&teardown_stage, __ATOMIC_ACQUIRE); }

void hx_exec_teardown(hx_exec *x) {
    static const char *const close_stage[HX_WIRE_QUEUES] = {"dspqueue_close of queue M", "dspqueue_close of queue V",
                                                            "dspqueue_close of queue D"};
    ap_state *st = &ap;
    if (st->x != x) return; /* set-up never began */
    stage("stopping the antagonists and the B submitters");
    hx_antagonists_stop(&x->bw);
    __atomic_store_n(&st->stop_subs, 1u, __ATOMIC_RELEASE);
    hx_counter_bump(&st->go);
    for (int i = 0; i < st->nsub; i++) hx_thread_join(st->sub[i].thread);
    st->nsub = 0;
    if ((st->set_up || st->started) && !st->stopped) {
        hx_wire_status ss;
        stage("hxfuse STOP (the DSP closes its queues and tears its executor down)");
        hxfuse_stop(&st->s, &ss); /* best effort: the session closes anyway */
        st->stopped = 1;
    }
    for (int q = 0; q < HX_WIRE_QUEUES; q++)
        if (st->q[q]) stage(close_stage[q]), st->lib.dq_close(st->q[q]), st->q[q] = NULL;
    stage("remote_handle64_close (the skel's close)");
    hxfuse_close(&st->s);
    stage("unloading the FastRPC library");
    if (st->loaded) hx_rpc_unload(&st->lib), st->loaded = 0;
    for (int b = 0; b < HX_NBUFS; b++) free(st->buf[b]), st->buf[b] = NULL;
    stage("done");
}

/* --- one trial ---------------------------------------------------------- */

/* The DSP's waits of this trial, names copied into the mirror's storage. */
static void add_dsp_waits(ap_state *st, const hx_wire_resp *r) {
    uint32_t n = r->nwaits < HX_MAX_WAITS ? r->nwaits : HX_MAX_WAITS;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = __atomic_load_n(&st->x->nwaits, __ATOMIC_RELAXED);
        if (k >= HX_MAX_WAITS) return;
        snprintf(st->wait_names[k][0], 8, "%.*s", 7, r->waits[i].who);
        snprintf(st->wait_names[k][1], 8, "%.*s", 7, r->waits[i].on);
        hx_exec_note_wait(st->x, st->wait_names[k][0], st->wait_names[k][1], map_dsp(st, r->waits[i].begin),
                          map_dsp(st, r->waits[i].end));
    }
}

/* The request task's reply must echo (the callbacks read it under the lock). */
static void expect(ap_state *st, int task, uint64_t seq) {
    pthread_mutex_lock(&st->lock);
    st->task_seq[task] = seq;
    pthread_mutex_unlock(&st->lock);
}

/* After the trial, untimed: each task's checkpoints (the replies carried
 * only their counts, to keep the timed path's messages small: wire.h). */
static int fetch_checkpoints(ap_state *st, uint32_t mask, char *err, size_t errlen) {
    static hx_wire_ckpts c;
    for (int i = 0; i < HX_NTASKS; i++) {
        hx_task *t = &st->x->task[i];
        if (!(mask & HX_BIT(i)) || !hx_event_is_set(&t->published)) continue;
        int any = 0;
        for (int w = 0; w < t->nworkers; w++) any |= t->workers[w].nckpt > 0;
        if (!any) continue;
        hx_wire_ctl_resp r;
        if (control(st, HX_CTL_CKPT, (uint32_t)i, 0, 0, 0, &r, &c, sizeof c, err, errlen)) return -1;
        if (r.bulk_bytes != sizeof c) {
            snprintf(err, errlen, "hxfuse CONTROL CKPT of task %s: %llu bytes, %zu expected", hx_task_names[i],
                     (unsigned long long)r.bulk_bytes, sizeof c);
            return -1;
        }
        hx_wire_unpack_ckpts(t, &c, map_dsp, st);
    }
    return 0;
}

int hx_run_group(hx_exec *x, int group, uint32_t mask, int empty, hx_host_times *h, char *err, size_t errlen) {
    ap_state *st = &ap;
    memset(h, 0, sizeof *h);
    if (failed(st)) {
        snprintf(err, errlen, "%s", st->transport_err);
        return -1;
    }
    /* untimed: the DSP resets its records, events, waits and scratch peak */
    hx_wire_ctl_resp cr;
    if (control(st, HX_CTL_BEGIN_TRIAL, 0, (uint64_t)empty, 0, 0, &cr, NULL, 0, err, errlen)) return -1;
    x->nwaits = 0;
    pthread_mutex_lock(&st->lock);
    st->peak = 0;
    st->waits_src.nwaits = 0;
    st->entry_seq = 0;
    memset(&st->entry, 0, offsetof(hx_wire_resp, rec));
    for (int i = 0; i < HX_NTASKS; i++) {
        hx_task_reset_record(&x->task[i], empty);
        st->task_seq[i] = 0;
        st->slot[i].status = 0;
    }
    hx_event_reset(&x->fused.done);
    x->fused.entry_begin = x->fused.entry_end = 0;
    pthread_mutex_unlock(&st->lock);

    int rc = 0;
    switch (group) {
    case HX_G_A:
    case HX_G_ALONE:
        for (int j = 0; j < HX_NTASKS && !rc; j++) {
            hx_task *t = &x->task[task_order[j]];
            if (!(mask & HX_BIT(t->id))) continue;
            hx_wire_req req = {HX_WIRE_MAGIC, HX_PKT_TASK, (uint32_t)t->id, 0, ++st->seq};
            expect(st, t->id, req.seq);
            rc = submit(st, t->id, &req, t, h, err, errlen);
            if (!rc) rc = host_wait(st, HX_BIT(t->id), 0, h, err, errlen);
        }
        if (!rc) add_dsp_waits(st, &st->waits_src);
        break;
    case HX_G_B:
        for (int i = 0; i < HX_NTASKS; i++)
            if (mask & HX_BIT(i)) expect(st, i, ++st->seq);
        rc = run_b(st, mask, h, err, errlen);
        if (!rc) add_dsp_waits(st, &st->waits_src);
        break;
    case HX_G_C:
    case HX_G_D: {
        hx_wire_req req = {HX_WIRE_MAGIC, HX_PKT_FUSED, mask, group == HX_G_C ? HX_PKTF_BARRIER : 0u, ++st->seq};
        pthread_mutex_lock(&st->lock);
        for (int i = 0; i < HX_NTASKS; i++)
            if (mask & HX_BIT(i)) st->task_seq[i] = req.seq;
        st->entry_seq = req.seq;
        pthread_mutex_unlock(&st->lock);
        rc = submit(st, HX_WIRE_Q_ENTRY, &req, NULL, h, err, errlen);
        if (!rc) rc = host_wait(st, mask, 1, h, err, errlen);
        if (rc) break;
        if (st->entry.status != 0) {
            snprintf(err, errlen, "fused entry rejected the plan: %s", st->entry.error);
            return -1;
        }
        x->fused.entry_begin = map_dsp(st, st->entry.entry_begin);
        x->fused.entry_end = map_dsp(st, st->entry.entry_end);
        /* the DSP's waits happened inside the host's: theirs first, as in-process */
        uint32_t host_waits = x->nwaits;
        hx_wait_rec hw[HX_MAX_WAITS];
        memcpy(hw, x->waits, sizeof hw);
        x->nwaits = 0;
        add_dsp_waits(st, &st->entry);
        for (uint32_t i = 0; i < host_waits && i < HX_MAX_WAITS; i++)
            hx_exec_note_wait(x, hw[i].who, hw[i].on, hw[i].begin, hw[i].end);
        break;
    }
    default: snprintf(err, errlen, "unknown group %d", group); return -1;
    }
    if (!rc) rc = fetch_checkpoints(st, mask, err, errlen);
    x->arena.peak_bytes = st->peak;
    return rc ? -1 : 0;
}

/* --- data for the .npy dump --------------------------------------------- */

static int read_buf(ap_state *st, int task, int which, uint64_t off, uint64_t len, void *dst, char *err,
                    size_t errlen) {
    hx_wire_ctl_resp r;
    for (uint64_t done = 0; done < len;) {
        uint64_t n = len - done < HX_WIRE_BULK_MAX ? len - done : HX_WIRE_BULK_MAX;
        if (control(st, HX_CTL_READ, (uint32_t)task, (uint64_t)which, off + done, n, &r, (uint8_t *)dst + done, n, err,
                    errlen))
            return -1;
        if (r.bulk_bytes != n) {
            snprintf(err, errlen, "hxfuse CONTROL READ of buffer %d: %llu bytes asked, %llu returned", which,
                     (unsigned long long)n, (unsigned long long)r.bulk_bytes);
            return -1;
        }
        done += n;
    }
    return 0;
}

int hx_exec_fetch_data(hx_exec *x, uint32_t mask, char *err, size_t errlen) {
    ap_state *st = &ap;
    const hx_config *c = x->cfg;
    size_t me = c->precision == HX_FP32 ? 4 : 1, ve = hx_elem_bytes_v(c);
    size_t win = (size_t)c->d_rows * c->d_src_stride, last = (size_t)(c->d_repeat - 1) * win;
    struct {
        int task, buf;
        size_t bytes; /* what the AP's copy holds */
        size_t at;    /* where in the copy the DSP's buffer (read from its start) lands */
    } b[] = {
        {HX_M, HX_BUF_M_A, (size_t)c->m * c->k * me, 0},
        {HX_M, HX_BUF_M_B, (size_t)c->k * c->n * me, 0},
        {HX_M, HX_BUF_M_C, (size_t)c->m * c->n * 4, 0},
        {HX_V, HX_BUF_V_X, (size_t)c->v_rows * c->v_cols * ve, 0},
        {HX_V, HX_BUF_V_Y, (size_t)c->v_rows * c->v_cols * ve, 0},
        {HX_V, HX_BUF_V_ROWSUM, (size_t)c->v_rows * 4, 0},
        {HX_V, HX_BUF_V_ROWMAX, (size_t)c->v_rows * ve, 0},
        /* The DSP's D_SRC is the last source window (the one the scratch must
         * hold; skel.c), and dump_npy reads it at d.src + (d_repeat-1) *
         * window: the copy spans every window and only the last is filled
         * (calloc: the rest stays unbacked). */
        {HX_D, HX_BUF_D_SRC, last + win, last},
        {HX_D, HX_BUF_D_OUT, (size_t)c->d_rows * x->d.dst_stride, 0},
    };
    for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
        if (!(mask & HX_BIT(b[i].task))) continue;
        if (!st->buf[b[i].buf]) st->buf[b[i].buf] = calloc(b[i].bytes ? b[i].bytes : 1, 1);
        if (!st->buf[b[i].buf]) {
            snprintf(err, errlen, "cannot allocate %zu bytes for the copy of buffer %d", b[i].bytes, b[i].buf);
            return -1;
        }
        if (read_buf(st, b[i].task, b[i].buf, 0, b[i].bytes - b[i].at, (uint8_t *)st->buf[b[i].buf] + b[i].at, err,
                     errlen))
            return -1;
    }
    /* where dump_npy reads them: the mirror's task-data pointers */
    x->m.A = st->buf[HX_BUF_M_A], x->m.B = st->buf[HX_BUF_M_B], x->m.C = st->buf[HX_BUF_M_C];
    x->v.x = st->buf[HX_BUF_V_X], x->v.y = st->buf[HX_BUF_V_Y];
    x->v.rowsum = st->buf[HX_BUF_V_ROWSUM], x->v.rowmax = st->buf[HX_BUF_V_ROWMAX];
    x->d.src = (uint8_t *)st->buf[HX_BUF_D_SRC], x->d.out = (uint8_t *)st->buf[HX_BUF_D_OUT];
    return 0;
}

/* --- the end ------------------------------------------------------------ */

/* The value of "key" in JSON text (written by hx_json on the DSP): its
 * start and length, balanced over brackets and strings; NULL if absent. */
static const char *json_find(const char *text, const char *key, size_t *len) {
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    const char *q = p;
    int depth = 0, in_str = 0;
    for (; *q; q++) {
        if (in_str) {
            if (*q == '\\' && q[1]) q++;
            else if (*q == '"') in_str = 0;
            continue;
        }
        if (*q == '"') in_str = 1;
        else if (*q == '{' || *q == '[') depth++;
        else if (*q == '}' || *q == ']') {
            if (depth == 0) break;
            if (--depth == 0) {
                q++;
                break;
            }
        } else if (*q == ',' && depth == 0) break;
    }
    *len = (size_t)(q - p);
    return p;
}

static double json_number(const char *text, const char *key) {
    size_t n;
    const char *v = json_find(text, key, &n);
    return v && strncmp(v, "null", 4) ? strtod(v, NULL) : 0.0;
}

static const char *finish_failure(const char *status) {
    ap.failure = status;
    return status;
}

const char *hx_ap_failure(void) { return ap.failure; }

/* The engines ran on the DSP: its counters decide whether CPU times mean anything. */
int hx_exec_thread_cpu_available(const hx_exec *x) {
    (void)x;
    return hx_wire_thread_cpu_available();
}

const char *hx_exec_finish(hx_exec *x, char *err, size_t errlen) {
    (void)x;
    ap_state *st = &ap;
    if (failed(st)) {
        snprintf(err, errlen, "%s", st->transport_err);
        return finish_failure("transport_error");
    }
    if (ping_fit(st, &st->fit_end, err, errlen)) return finish_failure("transport_error");
    st->have_end = 1;
    hx_wire_ctl_resp r;
    if (control(st, HX_CTL_END, 0, 0, 0, 0, &r, st->end_json, sizeof st->end_json - 1, err, errlen))
        return finish_failure("transport_error");
    st->end_json[r.bulk_bytes < sizeof st->end_json ? r.bulk_bytes : sizeof st->end_json - 1] = 0;
    size_t n;
    const char *res = json_find(st->end_json, "resources", &n);
    if (res && n < sizeof st->resources) {
        memcpy(st->resources, res, n);
        st->resources[n] = 0;
    }
    st->cycles_end = json_number(st->end_json, "core_cycles_per_us_end");
    st->have_end_json = 1;
    uint64_t bound = st->opt.clock_bound_ns;
    hx_clock_verdict v;
    hx_clock_assess(&st->fit_start, &st->fit_end, bound, &v);
    if (!v.aligned) {
        hx_clock_refusal(&v, bound, err, errlen);
        return finish_failure("clock_unaligned");
    }
    return NULL;
}

void hx_exec_write_device_meta(hx_json *j, const hx_exec *x) {
    const ap_state *st = &ap;
    const hx_config *c = x->cfg;
    hx_json_raw(j, "device", st->setup.device_json[0] ? st->setup.device_json : "null");
    hx_json_obj(j, "transport");
    hx_json_str(j, "mode", "ap");
    hx_json_str(j, "library", st->lib.path);
    hx_json_bool(j, "stand_in", st->lib.stand_in_text != NULL);
    hx_json_str(j, "stand_in_text", st->lib.stand_in_text);
    hx_json_bool(j, "unsigned_pd", st->s.unsigned_pd);
    hx_json_bool(j, "latency_qos", st->s.latency_qos);
    hx_json_i64(j, "queues", HX_WIRE_QUEUES);
    hx_json_u64(j, "queue_bytes", HX_WIRE_QUEUE_BYTES);
    hx_json_obj(j, "groups");
    hx_json_str(j, "A",
                "one TASK packet per task on its engine's dspqueue (fixed order M, D, V); the AP waits for its "
                "TASK_DONE reply before writing the next");
    hx_json_str(j, "B",
                "one TASK packet per task on its engine's own dspqueue, written at once by one AP submitter thread "
                "per queue, released together; the AP waits for every TASK_DONE");
    hx_json_str(j, "C",
                "one FUSED packet with the barrier flag on the vec queue to the DSP's fused entry; a TASK_DONE "
                "reply per task as it publishes, then ENTRY_DONE");
    hx_json_str(j, "D",
                c->window ? "one FUSED packet without the barrier flag on the vec queue (the DSP bounds its "
                            "tasks in flight by --window); a TASK_DONE per task, then ENTRY_DONE"
                          : "one FUSED packet without the barrier flag on the vec queue; a TASK_DONE per task as "
                            "it publishes, then ENTRY_DONE");
    hx_json_close(j, '}');
    hx_json_obj(j, "clock_alignment");
    hx_clock_write_start(j, &st->fit_start, st->opt.clock_bound_ns);
    hx_json_close(j, '}');
    if (st->opt.test_clock) {
        /* a test hook: the skel gave its clock this offset and drift on purpose */
        hx_json_obj(j, "test_clock");
        hx_json_str(j, "what", "test hook (--test-dsp-clock-*): the DSP clock was given this offset and drift");
        hx_json_i64(j, "offset_ns", st->opt.test_offset_ns);
        hx_json_f64(j, "drift_ppm", st->opt.test_drift_ppm);
        hx_json_close(j, '}');
    } else {
        hx_json_null(j, "test_clock");
    }
    hx_json_close(j, '}');
}

void hx_exec_write_clock_drift(hx_json *j, hx_exec *x) {
    (void)x;
    const ap_state *st = &ap;
    /* the DSP's core clock, where its CPU times come from */
    double start = json_number(st->setup.device_json, "core_cycles_per_us");
    hx_record_clock_drift(j, start, st->have_end_json ? st->cycles_end : 0.0);
    if (!st->have_end) {
        hx_json_null(j, "clock_alignment_end");
        return;
    }
    hx_json_obj(j, "clock_alignment_end");
    hx_clock_write_end(j, &st->fit_start, &st->fit_end, st->opt.clock_bound_ns);
    hx_json_close(j, '}');
}

void hx_exec_write_resources(hx_json *j, hx_exec *x) {
    (void)x;
    const ap_state *st = &ap;
    hx_json_raw(j, "resources", st->resources[0] ? st->resources : "null");
}
