/* A scripted libcdsprpc for hxrun-ap's driver tests (test_ap_driver.py):
 * the FastRPC and dspqueue names the driver loads, answered by a fake "DSP"
 * in this process that runs no kernel.  Its replies have the wire layout
 * (kernels/ap/wire.h) and known content, so the tests check what the
 * driver does with them: routing, host times, time mapping, the clock
 * alignment, the transport's failure paths.  It is NOT the loopback
 * stand-in (kernels/loopback/, which runs the real skel); it exists so the
 * driver is testable without it.
 *
 * Knobs (environment): FAKE_REFUSE=unsigned|open|qos, FAKE_SETUP_STATUS=N,
 * FAKE_DROP=1 (never reply to packets), FAKE_FULL=1 (dspqueue_write says
 * AEE_EEXPIRED), FAKE_ENTRY_FAIL=1 (the fused entry rejects its plan),
 * FAKE_TASK_NS (each task's "work", default 200000), FAKE_RELEASE_AFTER=N
 * (replies from the N-th on say a release was asked), FAKE_START_STATUS=N,
 * FAKE_STOP_LOG=FILE (a line per STOP), FAKE_VERSION=N, FAKE_BAD_ENGINE=1,
 * FAKE_BAD_CHECKSUM_AFTER=N, FAKE_NO_THREAD_CPU=1 (the DSP's thread CPU
 * counters do not advance). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dspqueue.h"
#include "remote.h"
#include "wire.h"

/* The driver reads the stand-in's string declared either way (rpc_dl.c);
 * the tests build both. */
#define FAKE_TEXT "fake DSP for the driver tests (tests/runner/ap_fake_cdsprpc.c)"
#ifdef FAKE_STAND_IN_POINTER
const char *const hx_loopback_stand_in = FAKE_TEXT;
#else
const char hx_loopback_stand_in[] = FAKE_TEXT;
#endif

static hx_wire_xform xf;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t hx_wire_xform_apply(const hx_wire_xform *x, uint64_t t) {
    if (!t) return 0;
    return (uint64_t)((int64_t)t + x->offset_ns + (int64_t)(x->drift_ppm * (double)(int64_t)(t - x->t0) / 1e6));
}
static uint64_t dsp_now(void) { return hx_wire_xform_apply(&xf, now_ns()); }

static int knob(const char *name, const char *val) {
    const char *v = getenv(name);
    return v && !strcmp(v, val);
}

int remote_session_control(uint32_t req, void *data, uint32_t datalen) {
    (void)data, (void)datalen;
    if (req == DSPRPC_CONTROL_UNSIGNED_MODULE && knob("FAKE_REFUSE", "unsigned")) return AEE_EUNSUPPORTED;
    return 0;
}

int remote_handle64_open(const char *name, remote_handle64 *ph) {
    if (knob("FAKE_REFUSE", "open") || !strstr(name, "&_dom=cdsp") || !strstr(name, HX_SKEL_LIB)) return AEE_ENOSUCHMOD;
    *ph = 0x5eed;
    return 0;
}

int remote_handle64_close(remote_handle64 h) { return h == 0x5eed ? 0 : AEE_EBADPARM; }

int remote_handle64_control(remote_handle64 h, uint32_t req, void *data, uint32_t datalen) {
    (void)h, (void)data, (void)datalen;
    if (req == DSPRPC_CONTROL_LATENCY && knob("FAKE_REFUSE", "qos")) return AEE_EUNSUPPORTED;
    return 0;
}

/* --- queues ----------------------------------------------------------- */
#define RING 64
struct dspqueue {
    dspqueue_callback_t cb;
    void *ctx;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    hx_wire_req req[RING];
    unsigned req_head, req_tail;
    hx_wire_resp *resp[RING];
    unsigned resp_head, resp_tail;
    pthread_t dsp;
    int stop, started;
};

static uint64_t task_ns(void) {
    const char *v = getenv("FAKE_TASK_NS");
    return v ? strtoull(v, NULL, 10) : 200000;
}

/* The "work" sleeps: a spinning fake would take the driver's core on a
 * small machine and its timings would be the scheduler's. */
static void work_for(uint64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

static uint64_t checkpoints_of_run;
/* D's shape as hxrun's defaults and the options give it (for READ's bounds) */
static int d_rows = 1024, d_row_bytes = 2048, d_stride = -1;
static long long d_window;
static int nvworkers;
static const char *const engine_of[HX_NTASKS] = {"mx", "vec", "dma"};

static unsigned replies_sent;
static hx_wire_ckpts ckpts[HX_NTASKS]; /* each task's last run */

static void reply(struct dspqueue *q, hx_wire_resp *r) {
    r->magic = HX_WIRE_MAGIC;
    /* FAKE_RELEASE_AFTER=N: from the N-th reply on, a higher-priority
     * client has asked for the resources */
    const char *rel = getenv("FAKE_RELEASE_AFTER");
    if (rel && __atomic_add_fetch(&replies_sent, 1u, __ATOMIC_RELAXED) >= (unsigned)atoi(rel))
        r->release_asked = dsp_now();
    r->dsp_send = dsp_now();
    pthread_mutex_lock(&q->lock);
    q->resp[q->resp_tail++ % RING] = r;
    pthread_mutex_unlock(&q->lock);
    q->cb(q, 0, q->ctx);
}

/* One task's "work": a record with known shape (launch < begin < end, two
 * checkpoints), all on the DSP's clock. */
static void run_task(struct dspqueue *q, int task, uint64_t seq, uint64_t recv, uint64_t launch) {
    hx_wire_resp *r = calloc(1, sizeof *r);
    r->op = HX_RESP_TASK_DONE, r->task = (uint32_t)task, r->seq = seq, r->dsp_recv = recv;
    r->scratch_peak_bytes = 1000u * (task + 1);
    hx_wire_task *w = &r->rec;
    w->id = (uint32_t)task;
    w->cpu_begin = w->cpu_end = -1;
    snprintf(w->ran_on, sizeof w->ran_on, "%s", engine_of[task]);
    w->launch = launch;
    w->begin = dsp_now();
    work_for(task_ns());
    w->end = dsp_now();
    w->cpu_ns = w->end - w->begin;
    w->switches = 0;
    /* V split over the entry thread and the extra vector workers */
    w->nworkers = task == HX_V ? 1 + nvworkers : 1;
    for (int i = 0; i < w->nworkers; i++) {
        hx_wire_worker *k = &w->workers[i];
        if (i) snprintf(k->engine, sizeof k->engine, "vec%d", i);
        else snprintf(k->engine, sizeof k->engine, "%s", engine_of[task]);
        k->begin = w->begin, k->end = w->end, k->cpu_ns = w->cpu_ns;
        k->cpu_begin = k->cpu_end = -1;
        k->nckpt = 2, k->ckpt_total = 10;
        /* the checkpoints themselves: fetched after the trial (CKPT) */
        ckpts[task].ckpt[i][0] = w->begin, ckpts[task].done[i][0] = 0;
        ckpts[task].ckpt[i][1] = w->end, ckpts[task].done[i][1] = 10;
    }
    checkpoints_of_run++;
    reply(q, r);
}

static void *dsp_main(void *arg) {
    struct dspqueue *q = (struct dspqueue *)arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        while (q->req_head == q->req_tail && !q->stop) pthread_cond_wait(&q->cond, &q->lock);
        if (q->stop) {
            pthread_mutex_unlock(&q->lock);
            return NULL;
        }
        hx_wire_req req = q->req[q->req_head++ % RING];
        pthread_mutex_unlock(&q->lock);
        uint64_t recv = dsp_now();
        if (getenv("FAKE_DROP")) continue;
        if (req.op == HX_PKT_TASK) {
            /* every request number is used once (the driver's routing rests
             * on it): a packet written twice is refused, loudly */
            static uint8_t seen[1u << 20];
            if (req.seq < sizeof seen && __atomic_exchange_n(&seen[req.seq], 1, __ATOMIC_RELAXED)) {
                hx_wire_resp *e = calloc(1, sizeof *e);
                e->op = HX_RESP_TASK_DONE, e->task = req.task_or_mask, e->seq = req.seq, e->status = 1;
                snprintf(e->error, sizeof e->error, "request seq %llu written twice", (unsigned long long)req.seq);
                reply(q, e);
                continue;
            }
            run_task(q, (int)req.task_or_mask, req.seq, recv, recv);
        } else {
            uint64_t eb = dsp_now();
            hx_wire_resp *e = calloc(1, sizeof *e);
            if (getenv("FAKE_ENTRY_FAIL")) {
                e->status = 1;
                snprintf(e->error, sizeof e->error, "scratch plan conflict (fake)");
            } else {
                static const int order[HX_NTASKS] = {HX_M, HX_D, HX_V};
                for (int j = 0; j < HX_NTASKS; j++)
                    if (req.task_or_mask & HX_BIT(order[j])) run_task(q, order[j], req.seq, recv, dsp_now());
                e->nwaits = 1;
                snprintf(e->waits[0].who, 8, "vec");
                snprintf(e->waits[0].on, 8, "eM");
                e->waits[0].begin = eb + 10, e->waits[0].end = eb + 20;
            }
            e->op = HX_RESP_ENTRY_DONE, e->seq = req.seq, e->dsp_recv = recv;
            e->entry_begin = eb, e->entry_end = dsp_now();
            reply(q, e);
        }
    }
}

AEEResult dspqueue_create(int domain, uint32_t flags, uint32_t req_queue_size, uint32_t resp_queue_size,
                          dspqueue_callback_t packet_callback, dspqueue_callback_t error_callback,
                          void *callback_context, dspqueue_t *queue) {
    (void)flags, (void)req_queue_size, (void)resp_queue_size, (void)error_callback;
    if (domain != CDSP_DOMAIN_ID) return AEE_EBADPARM;
    struct dspqueue *q = calloc(1, sizeof *q);
    q->cb = packet_callback, q->ctx = callback_context;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, NULL);
    *queue = q;
    return 0;
}

AEEResult dspqueue_export(dspqueue_t queue, uint64_t *queue_id) {
    *queue_id = (uint64_t)(uintptr_t)queue;
    return 0;
}

AEEResult dspqueue_close(dspqueue_t q) {
    if (q->started) {
        pthread_mutex_lock(&q->lock);
        q->stop = 1;
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
        pthread_join(q->dsp, NULL);
    }
    free(q);
    return 0;
}

AEEResult dspqueue_write(dspqueue_t q, uint32_t flags, uint32_t num_buffers, struct dspqueue_buffer *buffers,
                         uint32_t message_length, const uint8_t *message, uint32_t timeout_us) {
    (void)flags, (void)num_buffers, (void)buffers, (void)timeout_us;
    if (getenv("FAKE_FULL")) return AEE_EEXPIRED;
    if (message_length != sizeof(hx_wire_req)) return AEE_EBADPARM;
    pthread_mutex_lock(&q->lock);
    memcpy(&q->req[q->req_tail++ % RING], message, sizeof(hx_wire_req));
    pthread_cond_signal(&q->cond);
    pthread_mutex_unlock(&q->lock);
    return 0;
}

/* Only the non-blocking read exists here: the driver reads inside its
 * packet callbacks, where libcdsprpc forbids a blocking dspqueue_read
 * (inc/dspqueue.h); a driver that asks for dspqueue_read fails to load. */
AEEResult dspqueue_read_noblock(dspqueue_t q, uint32_t *flags, uint32_t max_buffers, uint32_t *num_buffers,
                                struct dspqueue_buffer *buffers, uint32_t max_message_length, uint32_t *message_length,
                                uint8_t *message) {
    (void)max_buffers, (void)buffers;
    pthread_mutex_lock(&q->lock);
    if (q->resp_head == q->resp_tail) {
        pthread_mutex_unlock(&q->lock);
        return AEE_EWOULDBLOCK;
    }
    hx_wire_resp *r = q->resp[q->resp_head++ % RING];
    pthread_mutex_unlock(&q->lock);
    uint32_t n = sizeof *r < max_message_length ? sizeof *r : max_message_length;
    memcpy(message, r, n);
    free(r);
    *flags = DSPQUEUE_PACKET_FLAG_MESSAGE, *num_buffers = 0, *message_length = n;
    return 0;
}

/* --- methods ---------------------------------------------------------- */

static void do_setup(remote_arg *a) {
    const hx_wire_setup_req *req = (const hx_wire_setup_req *)a[0].buf.pv;
    hx_wire_setup_resp *r = (hx_wire_setup_resp *)a[1].buf.pv;
    memset(r, 0, sizeof *r);
    xf.offset_ns = req->test_clock_offset_ns, xf.drift_ppm = req->test_clock_drift_ppm, xf.t0 = now_ns();
    const char *arg = (const char *)(req + 1);
    for (uint32_t i = 0; i < req->argc; i++) {
        const char *v = i + 1 < req->argc ? arg + strlen(arg) + 1 : "";
        if (!strcmp(arg, "--v-workers")) nvworkers = atoi(v) - 1;
        if (!strcmp(arg, "--d-shape")) d_rows = atoi(v), d_row_bytes = atoi(strchr(v, ',') ? strchr(v, ',') + 1 : v);
        if (!strcmp(arg, "--d-src-stride")) d_stride = atoi(v);
        arg += strlen(arg) + 1;
    }
    d_window = (long long)d_rows * (d_stride > 0 ? d_stride : 2 * d_row_bytes);
    r->version = getenv("FAKE_VERSION") ? (uint32_t)atoi(getenv("FAKE_VERSION")) : HX_WIRE_VERSION;
    const char *st = getenv("FAKE_SETUP_STATUS");
    if (st) {
        r->status = atoi(st);
        snprintf(r->error, sizeof r->error, "--v-shape: rejected by the fake DSP (status %s)", st);
        return;
    }
    r->dsp_epoch = dsp_now();
    snprintf(r->kernels, sizeof r->kernels, "fake-hvx");
    r->nvworkers = nvworkers;
    r->thread_cpu_available = !getenv("FAKE_NO_THREAD_CPU");
    for (int i = 0; i < nvworkers; i++) snprintf(r->vworker_name[i], 16, "vec%d", i + 1);
    for (int i = 0; i < HX_NTASKS; i++) snprintf(r->engine_name[i], 16, "%s", engine_of[i]);
    if (getenv("FAKE_BAD_ENGINE")) snprintf(r->engine_name[HX_M], 16, "hmx0");
    r->arena_capacity = 1 << 20, r->arena_on_chip = 1;
    static const char *const slots[HX_ARENA_SLOTS] = {"M", "V", "D", "D.buffer2"};
    for (int i = 0; i < HX_ARENA_SLOTS; i++) snprintf(r->slot_name[i], 16, "%s", slots[i]), r->slot_bytes[i] = 4096;
    r->m_prep_bytes = 12345, r->m_prep_ns = 777;
    r->d_dst_stride = 64, r->d_ndesc = 4, r->d_dst_bytes = 8192;
    snprintf(r->device_json, sizeof r->device_json,
             "{\"target\":\"fake\",\"kernels\":\"fake-hvx\",\"clock\":{\"source\":\"fake\",\"resolution_ns\":1,"
             "\"core_cycles_per_us\":1000.0}}");
}

static int do_control(remote_arg *a) {
    const hx_wire_ctl_req *req = (const hx_wire_ctl_req *)a[0].buf.pv;
    hx_wire_ctl_resp *r = (hx_wire_ctl_resp *)a[1].buf.pv;
    memset(r, 0, sizeof *r);
    r->dsp_time = dsp_now();
    switch (req->op) {
    case HX_CTL_PING: r->value = dsp_now(); break;
    case HX_CTL_BEGIN_TRIAL:
    case HX_CTL_POISON: break;
    case HX_CTL_CHECKSUM: {
        /* FAKE_BAD_CHECKSUM_AFTER=N: from the N-th checksum on, the outputs differ */
        static unsigned nsum;
        const char *bad = getenv("FAKE_BAD_CHECKSUM_AFTER");
        r->value = 0xc0ffee00u + req->task + (bad && ++nsum >= (unsigned)atoi(bad) ? 0x100u : 0u);
        break;
    }
    case HX_CTL_READ:
        if (req->length > a[2].buf.nLen) return AEE_EBADPARM;
        /* wire.h: D_SRC is the last window alone; offsets count from its start */
        if (req->arg == HX_BUF_D_SRC && req->offset + req->length > (uint64_t)d_window) {
            r->status = 1;
            snprintf(r->error, sizeof r->error, "READ: offset %llu past the %lld-byte window",
                     (unsigned long long)req->offset, (long long)d_window);
            return 0;
        }
        /* byte i of buffer b at offset o: (b * 31 + o + i) & 0xff */
        for (uint64_t i = 0; i < req->length; i++)
            ((uint8_t *)a[2].buf.pv)[i] = (uint8_t)((req->arg * 31 + req->offset + i) & 0xff);
        r->bulk_bytes = req->length;
        break;
    case HX_CTL_CKPT:
        if (req->task >= HX_NTASKS || a[2].buf.nLen < sizeof(hx_wire_ckpts)) return AEE_EBADPARM;
        memcpy(a[2].buf.pv, &ckpts[req->task], sizeof(hx_wire_ckpts));
        r->bulk_bytes = sizeof(hx_wire_ckpts);
        break;
    case HX_CTL_END:
        r->bulk_bytes = (uint64_t)snprintf(
            (char *)a[2].buf.pv, a[2].buf.nLen,
            "{\"resources\": {\"hmx\": true, \"vtcm_bytes\": 1048576, \"note\": \"a } in a string\"}, "
            "\"core_cycles_per_us_end\": 990.0}");
        break;
    default: r->status = 1, snprintf(r->error, sizeof r->error, "unknown op %u", req->op);
    }
    return 0;
}

int remote_handle64_invoke(remote_handle64 h, uint32_t sc, remote_arg *pra) {
    if (h != 0x5eed) return AEE_EBADPARM;
    int m = (int)REMOTE_SCALARS_METHOD(sc);
    /* the shapes of wire.h's method table (the IDL's, as qaic generates
     * them): pra[0] is primIn, the sequences follow; the fake reads them */
    static const hx_wire_method t[HX_WIRE_NMETHODS] = HX_WIRE_METHODS;
    if (m < HX_METHOD_SETUP || m > HX_METHOD_STOP ||
        sc != REMOTE_SCALARS_MAKEX(0, t[m].id, t[m].in_bufs, t[m].out_bufs, t[m].in_handles, t[m].out_handles))
        return AEE_EBADPARM;
    pra++;
    switch (m) {
    case HX_METHOD_SETUP: do_setup(pra); return 0;
    case HX_METHOD_START: {
        const hx_wire_start_req *req = (const hx_wire_start_req *)pra[0].buf.pv;
        hx_wire_status *st = (hx_wire_status *)pra[1].buf.pv;
        memset(st, 0, sizeof *st);
        if (getenv("FAKE_START_STATUS")) {
            st->status = atoi(getenv("FAKE_START_STATUS"));
            snprintf(st->error, sizeof st->error, "cannot import the queues (fake)");
            return 0;
        }
        for (uint32_t i = 0; i < req->nqueues; i++) {
            struct dspqueue *q = (struct dspqueue *)(uintptr_t)req->queue_id[i];
            q->started = 1;
            pthread_create(&q->dsp, NULL, dsp_main, q);
        }
        return 0;
    }
    case HX_METHOD_CONTROL: return do_control(pra);
    default:
        memset(pra[0].buf.pv, 0, sizeof(hx_wire_status));
        if (getenv("FAKE_STOP_LOG")) {
            FILE *f = fopen(getenv("FAKE_STOP_LOG"), "a");
            if (f) fputs("STOP\n", f), fclose(f);
        }
        return 0;
    }
}
