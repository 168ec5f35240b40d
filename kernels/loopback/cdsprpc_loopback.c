/* STAND-IN for libcdsprpc.so: the hxfuse loopback.  NOT FastRPC, NOT a DSP.
 *
 * STAND-IN: on x86 there is no Hexagon SDK and no phone.  This library
 * exports the FastRPC (remote.h) and dspqueue (dspqueue.h) names the AP
 * driver hxrun-ap dlopens from the real libcdsprpc.so, and implements them
 * in this process: remote_handle64_open dlopens the skel
 * (libhxfuse_skel.so) and its invoke calls the skel's invoke directly;
 * dspqueues are in-memory rings with real threads, one packet-callback
 * thread per queue end that has a callback, like the DSP framework's.
 *
 * STAND-IN: every time measured through it is host-CPU time of threads in
 * one process, never device time; hxrun-ap labels its records by finding
 * hx_loopback_stand_in here.  Semantics follow the public quic/fastrpc
 * sources (dspqueue_cpu.c: full ring -> AEE_EWOULDBLOCK / AEE_EEXPIRED,
 * a message longer than the reader's buffer -> AEE_EBADPARM and left in the
 * ring; fastrpc_apps_user.c: unsigned PD set per domain before its session
 * opens).  Buffer references are not supported (the hxfuse wire carries
 * messages only).
 *
 * STAND-IN contracts of the real library kept here (each cited where it is
 * implemented): method 0 of a skel is called as the loader calls it
 * (open_mod_handle_open); a packet callback runs under the queue's
 * non-recursive packet mutex and a blocking dspqueue_read on a queue with a
 * callback fails loudly instead of deadlocking (dspqueue_cpu.c, dspqueue.h);
 * errors from the DSP side carry DSP_AEE_EOFFSET (AEEStdErr.h); a skel that
 * exits kills the session, and the AP sees only what FastRPC shows then
 * (AEE_ECONNRESET from calls, the queues' error callback, interrupted reads);
 * the skel's stdout/stderr and FARF go to the DSP log, never to the AP's
 * streams (loopback/dsp_pd.c).
 *
 * STAND-IN test hooks (environment, read at open and at queue creation):
 *   HX_LOOPBACK_STATS=<file>    counters as JSON when the last handle closes
 *                               (or at exit, if it never closes);
 *   HX_LOOPBACK_DSP_LOG=<file>  the DSP log (what logcat shows on a phone):
 *                               FARF and the skel's stdout/stderr; discarded
 *                               when unset;
 *   HX_LOOPBACK_FAULT=<fault>   one first-contact fault:
 *     no-skel            the skel is not on ADSP_LIBRARY_PATH (0x80000406)
 *     unsigned-refused   the DSP refuses the unsigned PD (0x80000481)
 *     no-unsigned-pd     remote_session_control refuses the request
 *     no-vtcm            the DSP's scratch (VTCM) request fails (dsp_pd.c)
 *     dsp-crash:<method> the PD dies in that method (0..5, as wire.h)
 *     hang:<method>      that method never returns (0, open, included)
 *     dsp-error:<method> that method fails with AEE_EFAILED from the DSP
 *     device-fatal:<task> a device kernel of task M, V or D fails on its
 *                        engine thread as the cDSP's do (a HexKL error, a
 *                        DMA fault): the failure is recorded, the PD lives
 *                        (dsp_pd.c)
 *     queue-full         every AP-end write finds its ring full. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "AEEStdErr.h"
#include "dspqueue.h"
#include "remote.h"
/* Only for the test counters: CONTROL ops and packet ops are hxfuse's
 * (a real libcdsprpc cannot know them). */
#include "../ap/wire.h"
#include "clock_legs.h" /* HX_LOOPBACK_CLOCK_LEGS: the invoke legs a test asks for */

__attribute__((visibility("default"))) const char hx_loopback_stand_in[] =
    "hxfuse loopback stand-in for libcdsprpc.so: it runs the DSP skel in this process on the host CPU; "
    "its timings are not device timings";

/* ---- faults and counters ------------------------------------------------ */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int no_skel, queue_full, no_unsigned_pd, unsigned_refused, no_vtcm;
    int dsp_error_method, crash_method, hang_method; /* -1: none */
    int device_fatal_task;                           /* -1: none; else 0 M, 1 V, 2 D (hxrun's task ids) */
} fault = {0, 0, 0, 0, 0, -1, -1, -1, -1};

static int method_arg(const char *f, const char *prefix) {
    size_t n = strlen(prefix);
    return f && !strncmp(f, prefix, n) ? atoi(f + n) : -1;
}

static void load_faults(void) {
    const char *f = getenv("HX_LOOPBACK_FAULT");
    fault.no_skel = f && !strcmp(f, "no-skel");
    fault.queue_full = f && !strcmp(f, "queue-full");
    fault.no_unsigned_pd = f && !strcmp(f, "no-unsigned-pd");
    fault.unsigned_refused = f && !strcmp(f, "unsigned-refused");
    fault.no_vtcm = f && !strcmp(f, "no-vtcm");
    fault.dsp_error_method = method_arg(f, "dsp-error:");
    fault.crash_method = method_arg(f, "dsp-crash:");
    fault.hang_method = method_arg(f, "hang:");
    const char *t = f && !strncmp(f, "device-fatal:", 13) ? f + 13 : NULL;
    fault.device_fatal_task = !t ? -1 : !strcmp(t, "M") ? 0 : !strcmp(t, "V") ? 1 : !strcmp(t, "D") ? 2 : -1;
    if (t && fault.device_fatal_task < 0)
        fprintf(stderr, "cdsprpc loopback (stand-in): HX_LOOPBACK_FAULT=%s: the task is M, V or D\n", f);
}

/* An error as the DSP returns it: AEEStdErr.h (quic/fastrpc inc/AEEStdErr.h)
 * adds DSP_AEE_EOFFSET to the basic codes when compiled for Hexagon, so a
 * DSP-side AEE_EUNABLETOLOAD reaches the AP as 0x80000406. */
#define DSP_ERR(code) ((int)(DSP_AEE_EOFFSET + (code)))

/* ---- the DSP log -------------------------------------------------------- */

/* What a phone shows in logcat: FARF and the skel's stdout/stderr (a user
 * PD has no terminal; its output never reaches the AP process's streams). */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
__attribute__((visibility("default"))) void hx_loopback_dsp_vlog(const char *fmt, va_list ap) {
    const char *path = getenv("HX_LOOPBACK_DSP_LOG");
    if (!path || !*path) return;
    pthread_mutex_lock(&log_mu);
    FILE *f = fopen(path, "a");
    if (f) {
        vfprintf(f, fmt, ap);
        fclose(f);
    }
    pthread_mutex_unlock(&log_mu);
}

__attribute__((visibility("default"))) void hx_loopback_dsp_log(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hx_loopback_dsp_vlog(fmt, ap);
    va_end(ap);
}

/* FARF's back end (HAP_farf.h): one line per call, into the DSP log. */
__attribute__((visibility("default"))) void HAP_debug_v2(int level, const char *file, int line, const char *fmt, ...) {
    (void)level;
    hx_loopback_dsp_log("FARF %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    hx_loopback_dsp_vlog(fmt, ap);
    va_end(ap);
    hx_loopback_dsp_log("\n");
}

/* The fault dsp_pd.c's scratch allocator asks about (no-vtcm). */
__attribute__((visibility("default"))) int hx_loopback_fault_no_vtcm(void) {
    load_faults();
    return fault.no_vtcm;
}

/* The task whose device kernel fails (device-fatal:<task>), -1: none.  Read
 * once at open (load_faults), so the engine threads only read it. */
__attribute__((visibility("default"))) int hx_loopback_fault_device_fatal(void) {
    return __atomic_load_n(&fault.device_fatal_task, __ATOMIC_RELAXED);
}

enum { N_METHODS = 6, MAX_CTL_OPS = 16 };
static const char *const method_names[N_METHODS] = {"open", "close", "setup", "start", "control", "stop"};
static struct {
    uint64_t invokes[N_METHODS + 1]; /* the last: other methods */
    uint64_t ctl_ops[MAX_CTL_OPS];
    int unsigned_pd;
    int latency_set;
    struct remote_rpc_control_latency latency;
    uint64_t early_wakeups;
    int written;
} stats;

/* ---- the PD's life ------------------------------------------------------ */

/* Set when the skel's PD died (a skel that called exit(), or the dsp-crash
 * fault).  From then on the AP sees what FastRPC shows after a PD crash:
 * every call on the session fails with AEE_ECONNRESET (fastrpc_apps_user.c
 * turns the driver's ECONNRESET into it), each queue's error callback runs
 * once with AEE_ECONNRESET on a thread of its own and pending waits are
 * cancelled, so a blocked dspqueue_read returns AEE_EINTERRUPTED (0x2e)
 * (dspqueue_cpu.c: error_callback, wait_signal_locked).  The skel is never
 * called again. */
static int pd_dead;
static int pd_exit_status;
static void pd_kill(const char *why, int status);

/* The invoke running on this thread, if any: a skel that exits inside it
 * unwinds to the invoke (the PD's thread is gone), not through the AP. */
static __thread jmp_buf *invoke_jmp;

/* ---- queues ------------------------------------------------------------- */

typedef struct pkt {
    struct pkt *next;
    uint32_t flags, len;
    uint8_t data[];
} pkt;

/* One direction of a queue: a FIFO with a byte budget.  A packet costs its
 * header and its message rounded up to 8 bytes, as in the real ring. */
typedef struct ring {
    pkt *head, *tail;
    uint32_t size, used, count;
    uint64_t packets, bytes; /* ever written */
    uint32_t max_depth;
    uint32_t writes; /* bumped per write: what the reader's callback thread watches */
} ring;

static uint32_t pkt_cost(uint32_t len) { return 8u + ((len + 7u) & ~7u); }

struct lb_pair;
struct dspqueue {
    struct lb_pair *pair;
    int dsp; /* 1: the DSP end (imported); 0: the AP end (created) */
    int open;
    dspqueue_callback_t packet_cb, error_cb;
    void *ctx;
    pthread_t thread;
    int has_thread;
    uint32_t seen;
    /* dspqueue_cpu.c (quic/fastrpc src/dspqueue/dspqueue_cpu.c): every queue
     * has a packet_mutex, initialised with default attributes (not
     * recursive), held by dspqueue_packet_callback_thread while it calls
     * the packet callback and taken first by dspqueue_read.  Error-checking
     * here, so that a read from inside the callback is seen (EDEADLK)
     * instead of hanging. */
    pthread_mutex_t packet_mutex;
};

/* Slots are never reused: the counters of every queue of the session
 * survive its close, for the stats file. */
#define MAX_QUEUES 256
typedef struct lb_pair {
    int used;
    uint64_t id;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* any change: a packet in or out, an end closing */
    ring req, resp;    /* req: AP -> DSP; resp: DSP -> AP */
    struct dspqueue ap, dsp;
    int imported;
    uint64_t req_task, req_fused;
} lb_pair;
static lb_pair pairs[MAX_QUEUES];
static int npairs;

/* The ring an end writes into and the one it reads from. */
static ring *out_ring(struct dspqueue *q) { return q->dsp ? &q->pair->resp : &q->pair->req; }
static ring *in_ring(struct dspqueue *q) { return q->dsp ? &q->pair->req : &q->pair->resp; }

static void deadline_after(struct timespec *ts, uint32_t timeout_us) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    uint64_t ns = (uint64_t)ts->tv_nsec + (uint64_t)timeout_us * 1000u;
    ts->tv_sec += (time_t)(ns / 1000000000u);
    ts->tv_nsec = (long)(ns % 1000000000u);
}

/* Waits on the pair's condition until the deadline (NULL: none); 0, or
 * ETIMEDOUT. */
static int pair_wait(lb_pair *p, const struct timespec *deadline) {
    if (!deadline) return pthread_cond_wait(&p->cv, &p->mu);
    return pthread_cond_timedwait(&p->cv, &p->mu, deadline);
}

/* The end's callback thread: runs the packet callback whenever packets came
 * in since it last ran (and once at start if some are waiting), until the
 * end closes.  The callback reads what it wants; whatever it leaves waits
 * for the next write, as with the real framework's signal. */
static void *callback_thread(void *arg) {
    struct dspqueue *q = arg;
    lb_pair *p = q->pair;
    pthread_mutex_lock(&p->mu);
    q->seen = in_ring(q)->count ? in_ring(q)->writes - 1 : in_ring(q)->writes;
    for (;;) {
        while (q->open && q->seen == in_ring(q)->writes) pair_wait(p, NULL);
        if (!q->open) break;
        q->seen = in_ring(q)->writes;
        pthread_mutex_unlock(&p->mu);
        /* dspqueue_packet_callback_thread: the callback runs holding the
         * queue's packet_mutex */
        pthread_mutex_lock(&q->packet_mutex);
        q->packet_cb(q, AEE_SUCCESS, q->ctx);
        pthread_mutex_unlock(&q->packet_mutex);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void init_packet_mutex(struct dspqueue *q) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&q->packet_mutex, &a);
    pthread_mutexattr_destroy(&a);
}

static int start_callback(struct dspqueue *q) {
    init_packet_mutex(q);
    if (!q->packet_cb) return AEE_SUCCESS;
    if (pthread_create(&q->thread, NULL, callback_thread, q) != 0) return AEE_ENOMEMORY;
    q->has_thread = 1;
    return AEE_SUCCESS;
}

AEEResult dspqueue_create(int domain, uint32_t flags, uint32_t req_queue_size, uint32_t resp_queue_size,
                          dspqueue_callback_t packet_callback, dspqueue_callback_t error_callback,
                          void *callback_context, dspqueue_t *queue) {
    if (!queue || flags != 0 || req_queue_size < 64 || resp_queue_size < 64) return AEE_EBADPARM;
    if (domain != CDSP_DOMAIN_ID) return AEE_EUNSUPPORTED; /* the stand-in has a cDSP only */
    load_faults();
    if (__atomic_load_n(&pd_dead, __ATOMIC_ACQUIRE)) return AEE_ECONNRESET;
    pthread_mutex_lock(&g_mu);
    if (npairs == MAX_QUEUES) {
        pthread_mutex_unlock(&g_mu);
        return AEE_ENOMEMORY;
    }
    lb_pair *p = &pairs[npairs++];
    pthread_mutex_unlock(&g_mu);
    memset(p, 0, sizeof *p);
    p->used = 1;
    /* ids look like the real ones: opaque, non-zero, not small integers */
    p->id = 0x6c62000000000000ull | (uint64_t)(p - pairs) << 8 | 0x11u;
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    p->req.size = req_queue_size;
    p->resp.size = resp_queue_size;
    p->ap = (struct dspqueue){.pair = p,
                              .dsp = 0,
                              .open = 1,
                              .packet_cb = packet_callback,
                              .error_cb = error_callback,
                              .ctx = callback_context};
    int rc = start_callback(&p->ap);
    if (rc != AEE_SUCCESS) return rc;
    *queue = &p->ap;
    return AEE_SUCCESS;
}

AEEResult dspqueue_export(dspqueue_t queue, uint64_t *queue_id) {
    if (!queue || !queue_id || queue->dsp) return AEE_EBADPARM;
    *queue_id = queue->pair->id;
    return AEE_SUCCESS;
}

AEEResult dspqueue_import(uint64_t queue_id, dspqueue_callback_t packet_callback, dspqueue_callback_t error_callback,
                          void *callback_context, dspqueue_t *queue) {
    if (!queue) return AEE_EBADPARM;
    uint64_t i = (queue_id >> 8) & 0xffffu;
    if (i >= MAX_QUEUES || pairs[i].id != queue_id || !pairs[i].used) return AEE_ENOSUCH;
    lb_pair *p = &pairs[i];
    pthread_mutex_lock(&p->mu);
    if (p->imported || !p->ap.open) {
        pthread_mutex_unlock(&p->mu);
        return AEE_EBADSTATE;
    }
    p->imported = 1;
    p->dsp = (struct dspqueue){.pair = p,
                               .dsp = 1,
                               .open = 1,
                               .packet_cb = packet_callback,
                               .error_cb = error_callback,
                               .ctx = callback_context};
    pthread_mutex_unlock(&p->mu);
    int rc = start_callback(&p->dsp);
    if (rc != AEE_SUCCESS) return rc;
    *queue = &p->dsp;
    return AEE_SUCCESS;
}

static void free_ring(ring *r) {
    while (r->head) {
        pkt *k = r->head;
        r->head = k->next;
        free(k);
    }
    r->tail = NULL;
    r->used = r->count = 0;
}

AEEResult dspqueue_close(dspqueue_t queue) {
    if (!queue || !queue->open) return AEE_EBADPARM;
    lb_pair *p = queue->pair;
    pthread_mutex_lock(&p->mu);
    queue->open = 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (queue->has_thread) {
        /* closing from inside its own callback: the thread ends when the
         * callback returns, nobody is left to join it; the DSP end of a dead
         * PD: its callback thread may be stuck in the skel, gone with it */
        if (pthread_equal(queue->thread, pthread_self()) || (queue->dsp && __atomic_load_n(&pd_dead, __ATOMIC_ACQUIRE)))
            pthread_detach(queue->thread);
        else pthread_join(queue->thread, NULL);
        queue->has_thread = 0;
    }
    pthread_mutex_lock(&p->mu);
    if (!p->ap.open && (!p->imported || !p->dsp.open)) {
        free_ring(&p->req);
        free_ring(&p->resp);
    }
    pthread_mutex_unlock(&p->mu);
    return AEE_SUCCESS;
}

/* The counters of one request packet (hxfuse's ops; see the include). */
static void count_request(lb_pair *p, const uint8_t *msg, uint32_t len) {
    hx_wire_req r;
    if (len < sizeof r) return;
    memcpy(&r, msg, sizeof r);
    if (r.op == HX_PKT_TASK) p->req_task++;
    if (r.op == HX_PKT_FUSED) p->req_fused++;
}

static AEEResult queue_write(dspqueue_t q, uint32_t flags, uint32_t num_buffers, uint32_t len, const uint8_t *msg,
                             int block, uint32_t timeout_us) {
    if (!q || (len && !msg)) return AEE_EBADPARM;
    if (num_buffers > 0) return AEE_EUNSUPPORTED; /* buffer references: not on the hxfuse wire */
    lb_pair *p = q->pair;
    ring *r = out_ring(q);
    uint32_t cost = pkt_cost(len);
    if (cost > r->size) return AEE_EBADPARM; /* never fits */
    int full_fault = fault.queue_full && !q->dsp;
    if (full_fault && timeout_us > 100000u) timeout_us = 100000u;
    struct timespec dl;
    if (block && timeout_us != DSPQUEUE_TIMEOUT_NONE) deadline_after(&dl, timeout_us);
    pthread_mutex_lock(&p->mu);
    if (pd_dead) {
        pthread_mutex_unlock(&p->mu);
        return AEE_ECONNRESET;
    }
    while (q->open && (full_fault || r->used + cost > r->size)) {
        if (pd_dead) {
            pthread_mutex_unlock(&p->mu);
            return AEE_EINTERRUPTED;
        }
        if (!block) {
            pthread_mutex_unlock(&p->mu);
            return AEE_EWOULDBLOCK;
        }
        if (pair_wait(p, timeout_us == DSPQUEUE_TIMEOUT_NONE ? NULL : &dl) == ETIMEDOUT) {
            pthread_mutex_unlock(&p->mu);
            return AEE_EEXPIRED;
        }
    }
    if (!q->open) {
        pthread_mutex_unlock(&p->mu);
        return AEE_EBADSTATE;
    }
    pkt *k = malloc(sizeof *k + len);
    if (!k) {
        pthread_mutex_unlock(&p->mu);
        return AEE_ENOMEMORY;
    }
    k->next = NULL;
    k->flags = flags | DSPQUEUE_PACKET_FLAG_MESSAGE;
    k->len = len;
    if (len) memcpy(k->data, msg, len);
    if (r->tail) r->tail->next = k;
    else r->head = k;
    r->tail = k;
    r->used += cost;
    r->count++;
    if (r->count > r->max_depth) r->max_depth = r->count;
    r->packets++;
    r->bytes += len;
    r->writes++;
    if (!q->dsp) count_request(p, msg, len);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return AEE_SUCCESS;
}

AEEResult dspqueue_write_noblock(dspqueue_t queue, uint32_t flags, uint32_t num_buffers,
                                 struct dspqueue_buffer *buffers, uint32_t message_length, const uint8_t *message) {
    (void)buffers;
    return queue_write(queue, flags, num_buffers, message_length, message, 0, 0);
}

AEEResult dspqueue_write(dspqueue_t queue, uint32_t flags, uint32_t num_buffers, struct dspqueue_buffer *buffers,
                         uint32_t message_length, const uint8_t *message, uint32_t timeout_us) {
    (void)buffers;
    return queue_write(queue, flags, num_buffers, message_length, message, 1, timeout_us);
}

/* The rule of dspqueue.h (quic/fastrpc inc/dspqueue.h, dspqueue_create's
 * packet_callback): "Clients cannot use blocking read calls if a packet
 * callback has been set."  In dspqueue_cpu.c dspqueue_read locks the
 * queue's packet_mutex, which dspqueue_packet_callback_thread holds while
 * the callback runs: a blocking read from inside the callback deadlocks the
 * callback thread on a phone (and from another thread it races the callback
 * for the packets).  The stand-in ends the process with the rule named
 * rather than hang the test or let it pass. */
static void blocking_read_allowed(struct dspqueue *q) {
    if (!q->packet_cb) return;
    int inside = pthread_mutex_lock(&q->packet_mutex) == EDEADLK;
    if (!inside) pthread_mutex_unlock(&q->packet_mutex);
    fprintf(stderr,
            "cdsprpc loopback (stand-in): FATAL: dspqueue_read (blocking) on a queue that has a packet callback%s. "
            "dspqueue.h: \"Clients cannot use blocking read calls if a packet callback has been set\"; libcdsprpc "
            "runs the callback holding the queue's non-recursive packet mutex, which dspqueue_read takes: %s. Read "
            "with dspqueue_read_noblock inside the callback, or create the queue without a callback and read it "
            "from a thread of your own.\n",
            inside ? ", called from inside that callback" : "",
            inside ? "on a phone this deadlocks the callback thread and every later wait times out"
                   : "on a phone it competes with the callback for the packets");
    abort();
}

static AEEResult queue_read(dspqueue_t q, uint32_t *flags, uint32_t *num_buffers, uint32_t max_len, uint32_t *len,
                            uint8_t *msg, int block, uint32_t timeout_us) {
    if (!q || !len) return AEE_EBADPARM;
    lb_pair *p = q->pair;
    ring *r = in_ring(q);
    if (block) blocking_read_allowed(q);
    struct timespec dl;
    if (block && timeout_us != DSPQUEUE_TIMEOUT_NONE) deadline_after(&dl, timeout_us);
    pthread_mutex_lock(&p->mu);
    while (q->open && !r->head) {
        if (pd_dead && !q->dsp) { /* a cancelled wait (dspqueue_cpu.c wait_signal_locked) */
            pthread_mutex_unlock(&p->mu);
            return AEE_EINTERRUPTED;
        }
        if (!block) {
            pthread_mutex_unlock(&p->mu);
            return AEE_EWOULDBLOCK;
        }
        if (pair_wait(p, timeout_us == DSPQUEUE_TIMEOUT_NONE ? NULL : &dl) == ETIMEDOUT) {
            pthread_mutex_unlock(&p->mu);
            return AEE_EEXPIRED;
        }
    }
    if (!q->open) {
        pthread_mutex_unlock(&p->mu);
        return AEE_EBADSTATE;
    }
    pkt *k = r->head;
    if (k->len > max_len || (k->len && !msg)) { /* left in the ring, as dspqueue_cpu.c does */
        pthread_mutex_unlock(&p->mu);
        return AEE_EBADPARM;
    }
    r->head = k->next;
    if (!r->head) r->tail = NULL;
    r->used -= pkt_cost(k->len);
    r->count--;
    pthread_cond_broadcast(&p->cv); /* room for a blocked writer */
    pthread_mutex_unlock(&p->mu);
    if (flags) *flags = k->flags;
    if (num_buffers) *num_buffers = 0;
    *len = k->len;
    if (k->len) memcpy(msg, k->data, k->len);
    free(k);
    return AEE_SUCCESS;
}

AEEResult dspqueue_read_noblock(dspqueue_t queue, uint32_t *flags, uint32_t max_buffers, uint32_t *num_buffers,
                                struct dspqueue_buffer *buffers, uint32_t max_message_length, uint32_t *message_length,
                                uint8_t *message) {
    (void)max_buffers, (void)buffers;
    return queue_read(queue, flags, num_buffers, max_message_length, message_length, message, 0, 0);
}

AEEResult dspqueue_read(dspqueue_t queue, uint32_t *flags, uint32_t max_buffers, uint32_t *num_buffers,
                        struct dspqueue_buffer *buffers, uint32_t max_message_length, uint32_t *message_length,
                        uint8_t *message, uint32_t timeout_us) {
    (void)max_buffers, (void)buffers;
    return queue_read(queue, flags, num_buffers, max_message_length, message_length, message, 1, timeout_us);
}

/* An early wake-up only shortens the reader's wake-up latency on a phone;
 * here readers sleep on a condition variable anyway.  Counted. */
AEEResult dspqueue_write_early_wakeup_noblock(dspqueue_t queue, uint32_t wakeup_delay, uint32_t packet_flags) {
    (void)wakeup_delay, (void)packet_flags;
    if (!queue) return AEE_EBADPARM;
    __atomic_fetch_add(&stats.early_wakeups, 1, __ATOMIC_RELAXED);
    return AEE_SUCCESS;
}

AEEResult dspqueue_get_stat(dspqueue_t queue, enum dspqueue_stat stat, uint64_t *value) {
    if (!queue || !value) return AEE_EBADPARM;
    lb_pair *p = queue->pair;
    pthread_mutex_lock(&p->mu);
    int rc = AEE_SUCCESS;
    switch (stat) {
    case DSPQUEUE_STAT_READ_QUEUE_PACKETS: *value = in_ring(queue)->count; break;
    case DSPQUEUE_STAT_READ_QUEUE_BYTES: *value = in_ring(queue)->used; break;
    case DSPQUEUE_STAT_WRITE_QUEUE_PACKETS: *value = out_ring(queue)->count; break;
    case DSPQUEUE_STAT_WRITE_QUEUE_BYTES: *value = out_ring(queue)->used; break;
    default: rc = AEE_EUNSUPPORTED;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* ---- the PD dying ------------------------------------------------------- */

static void pause_forever(void) {
    struct timespec ts = {3600, 0};
    nanosleep(&ts, NULL);
}

typedef struct err_cb_arg {
    struct dspqueue *q;
} err_cb_arg;

static void *error_callback_thread(void *arg) {
    struct dspqueue *q = ((err_cb_arg *)arg)->q;
    free(arg);
    q->error_cb(q, AEE_ECONNRESET, q->ctx);
    return NULL;
}

/* dspqueue_cpu.c error_callback: once per domain, every queue's pending
 * waits cancelled and its error callback called on a thread of its own
 * (so that the callback may close the queue), with AEE_ECONNRESET when the
 * process died. */
static void pd_kill(const char *why, int status) {
    if (__atomic_exchange_n(&pd_dead, 1, __ATOMIC_ACQ_REL)) return;
    pd_exit_status = status;
    hx_loopback_dsp_log("loopback DSP: the skel's PD died: %s (status %d)\n", why, status);
    pthread_mutex_lock(&g_mu);
    int n = npairs;
    pthread_mutex_unlock(&g_mu);
    for (int i = 0; i < n; i++) {
        lb_pair *p = &pairs[i];
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        int call = p->ap.open && p->ap.error_cb;
        pthread_mutex_unlock(&p->mu);
        if (!call) continue;
        err_cb_arg *a = malloc(sizeof *a);
        pthread_t t;
        if (!a) continue;
        a->q = &p->ap;
        if (pthread_create(&t, NULL, error_callback_thread, a) == 0) pthread_detach(t);
        else free(a);
    }
}

/* A skel's exit() (dsp_pd.c wraps it): on the DSP, exit in a user PD ends
 * the PD, every thread of it, and the AP's session with it.  Here the
 * thread that called it is ended: back to its invoke (which returns
 * AEE_ECONNRESET) or, for a thread of the skel's own, pthread_exit.  The AP
 * process lives on and sees a dead session. */
__attribute__((visibility("default"), noreturn)) void hx_loopback_pd_exit(int status) {
    char why[64];
    snprintf(why, sizeof why, "the skel called exit(%d)", status);
    pd_kill(why, status);
    if (invoke_jmp) longjmp(*invoke_jmp, 1);
    pthread_exit(NULL);
}

/* ---- FastRPC handles ---------------------------------------------------- */

typedef int (*invoke_fn)(remote_handle64, uint32_t, remote_arg *);

/* One call into the skel on this thread.  A skel that exits inside it
 * (hx_loopback_pd_exit) comes back here: the PD is dead and the caller gets
 * AEE_ECONNRESET, as from a FastRPC call whose PD crashed. */
static int call_skel(invoke_fn inv, remote_handle64 h, uint32_t sc, remote_arg *pra) {
    jmp_buf jb, *outer = invoke_jmp;
    if (setjmp(jb)) {
        invoke_jmp = outer;
        return AEE_ECONNRESET;
    }
    invoke_jmp = &jb;
    int rc = inv(h, sc, pra);
    invoke_jmp = outer;
    return rc;
}
#define MAX_HANDLES 16
static struct {
    int used;
    void *lib;
    invoke_fn invoke;
    remote_handle64 skel; /* the skel's own handle for this session */
} handles[MAX_HANDLES];
static int nopen;

static void write_stats(void) {
    const char *path = getenv("HX_LOOPBACK_STATS");
    if (!path || !*path) return;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cdsprpc loopback (stand-in): cannot write HX_LOOPBACK_STATS file %s\n", path);
        return;
    }
    fprintf(f, "{\"stand_in\": true, \"invokes\": {");
    for (int i = 0; i < N_METHODS; i++)
        fprintf(f, "\"%s\": %llu, ", method_names[i], (unsigned long long)stats.invokes[i]);
    fprintf(f, "\"other\": %llu}, \"control_ops\": {", (unsigned long long)stats.invokes[N_METHODS]);
    const char *sep = "";
    for (int i = 0; i < MAX_CTL_OPS; i++) {
        if (!stats.ctl_ops[i]) continue;
        fprintf(f, "%s\"%d\": %llu", sep, i, (unsigned long long)stats.ctl_ops[i]);
        sep = ", ";
    }
    fprintf(f, "}, \"unsigned_pd\": %s, \"latency_qos\": ", stats.unsigned_pd ? "true" : "false");
    if (stats.latency_set) fprintf(f, "{\"enable\": %u, \"latency\": %u}", stats.latency.enable, stats.latency.latency);
    else fprintf(f, "null");
    fprintf(f, ", \"queues\": [");
    for (int i = 0; i < npairs; i++) {
        lb_pair *p = &pairs[i];
        pthread_mutex_lock(&p->mu);
        fprintf(f,
                "%s{\"id\": %llu, \"requests\": %llu, \"responses\": %llu, \"response_bytes\": %llu, "
                "\"request_ops\": {\"task\": %llu, \"fused\": %llu}, \"max_request_depth\": %u}",
                i ? ", " : "", (unsigned long long)p->id, (unsigned long long)p->req.packets,
                (unsigned long long)p->resp.packets, (unsigned long long)p->resp.bytes, (unsigned long long)p->req_task,
                (unsigned long long)p->req_fused, p->req.max_depth);
        pthread_mutex_unlock(&p->mu);
    }
    fprintf(f, "], \"early_wakeups\": %llu, \"pd_died\": %s}\n", (unsigned long long)stats.early_wakeups,
            __atomic_load_n(&pd_dead, __ATOMIC_ACQUIRE) ? "true" : "false");
    fclose(f);
    stats.written = 1;
}

__attribute__((destructor)) static void stats_at_exit(void) {
    if (!stats.written) write_stats();
}

/* Where the skel may be: each directory of ADSP_LIBRARY_PATH (';'-separated,
 * as the real library reads it), then this library's own directory.  Fills
 * `tried` with every path looked at. */
static void *find_skel(const char *lib, char *tried, size_t tried_len) {
    char path[4096];
    tried[0] = 0;
    const char *env = getenv("ADSP_LIBRARY_PATH");
    if (env) {
        for (const char *d = env; *d;) {
            size_t n = strcspn(d, ";");
            if (n > 0) {
                snprintf(path, sizeof path, "%.*s/%s", (int)n, d, lib);
                size_t t = strlen(tried);
                snprintf(tried + t, tried_len - t, "%s%s", t ? ", " : "", path);
                if (!fault.no_skel) {
                    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
                    if (h) return h;
                }
            }
            d += n;
            if (*d == ';') d++;
        }
    }
    Dl_info info;
    if (dladdr((const void *)hx_loopback_stand_in, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        int dn = slash ? (int)(slash - info.dli_fname) : 1;
        snprintf(path, sizeof path, "%.*s/%s", dn, slash ? info.dli_fname : ".", lib);
        size_t t = strlen(tried);
        snprintf(tried + t, tried_len - t, "%s%s", t ? ", " : "", path);
        if (!fault.no_skel) {
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h) return h;
        }
    }
    return NULL;
}

/* URI: file:///<lib>?<invoke symbol>&_modver=1.0&_dom=cdsp */
static int parse_uri(const char *uri, char *lib, size_t liblen, char *sym, size_t symlen) {
    const char *pre = "file:///";
    if (strncmp(uri, pre, strlen(pre)) != 0) return -1;
    const char *l = uri + strlen(pre), *q = strchr(l, '?');
    if (!q || q == l || (size_t)(q - l) >= liblen) return -1;
    snprintf(lib, liblen, "%.*s", (int)(q - l), l);
    size_t sn = strcspn(q + 1, "&");
    if (sn == 0 || sn >= symlen) return -1;
    snprintf(sym, symlen, "%.*s", (int)sn, q + 1);
    return 0;
}

/* A free handle slot, marked used (and the open counted), or -1. */
static int claim_slot(void) {
    pthread_mutex_lock(&g_mu);
    int slot = -1;
    for (int i = 0; i < MAX_HANDLES && slot < 0; i++)
        if (!handles[i].used) slot = i;
    if (slot >= 0) {
        handles[slot].used = 1;
        stats.invokes[HX_METHOD_OPEN]++;
    }
    pthread_mutex_unlock(&g_mu);
    return slot;
}

int remote_handle64_open(const char *name, remote_handle64 *ph) {
    if (!name || !ph) return AEE_EBADPARM;
    load_faults();
    char lib[256], sym[256], tried[8192];
    if (parse_uri(name, lib, sizeof lib, sym, sizeof sym) != 0) {
        fprintf(stderr, "cdsprpc loopback (stand-in): cannot parse URI '%s'\n", name);
        return AEE_EBADPARM;
    }
    const char *dom = strstr(name, "&_dom=");
    if (!dom || strncmp(dom, CDSP_DOMAIN, strlen(CDSP_DOMAIN)) != 0) {
        fprintf(stderr, "cdsprpc loopback (stand-in): '%s': only the cDSP (%s) is stood in for\n", name, CDSP_DOMAIN);
        return AEE_EUNSUPPORTED;
    }
    if (__atomic_load_n(&pd_dead, __ATOMIC_ACQUIRE)) return AEE_ECONNRESET;
    pthread_mutex_lock(&g_mu);
    int unsigned_pd = stats.unsigned_pd;
    pthread_mutex_unlock(&g_mu);
    /* What the DSP's loader answers is all the AP gets back (its reasons go
     * to the DSP log, as they go to logcat on a phone).  The skel is an
     * unsigned module: a signed PD, or a phone that refuses unsigned PDs,
     * will not load it without a test signature (AEE_EUNSIGNEDMOD,
     * 0x80000481); a skel not found on ADSP_LIBRARY_PATH fails to load
     * (AEE_EUNABLETOLOAD, 0x80000406). */
    if (!unsigned_pd || fault.unsigned_refused) {
        hx_loopback_dsp_log("loopback DSP loader: %s is unsigned and the PD is %s: refused%s\n", lib,
                            unsigned_pd ? "unsigned but this DSP refuses unsigned PDs" : "signed",
                            fault.unsigned_refused ? " (HX_LOOPBACK_FAULT=unsigned-refused)" : "");
        return DSP_ERR(0x081);
    }
    void *h = find_skel(lib, tried, sizeof tried);
    if (!h) {
        hx_loopback_dsp_log("loopback DSP loader: skel %s not found%s (searched: %s)\n", lib,
                            fault.no_skel ? " (HX_LOOPBACK_FAULT=no-skel)" : "", tried);
        return DSP_ERR(0x006);
    }
    invoke_fn inv = (invoke_fn)dlsym(h, sym);
    if (!inv) {
        hx_loopback_dsp_log("loopback DSP loader: %s has no symbol %s\n", lib, sym);
        dlclose(h);
        return DSP_ERR(0x042); /* AEE_ENOSUCHSYMBOL */
    }
    int slot = claim_slot();
    if (slot < 0) {
        dlclose(h);
        return AEE_ENOMEMORY;
    }
    /* Method 0, exactly as the loader calls it (quic/fastrpc src/mod_table.c,
     * open_mod_handle_open): two in buffers, the URI's length as an int32
     * (counting its NUL) and the URI, and one out handle, args[2].h64;
     * scalars REMOTE_SCALARS_MAKEX(0, 0, 2, 0, 0, 1), handle 0. */
    remote_arg a[3];
    int32_t len = (int32_t)strlen(name) + 1;
    a[0].buf.pv = &len;
    a[0].buf.nLen = sizeof len;
    a[1].buf.pv = (void *)name;
    a[1].buf.nLen = (size_t)len;
    a[2].h64 = 0;
    if (fault.hang_method == HX_METHOD_OPEN) /* the DSP's loader stuck: open never returns */
        for (;;) pause_forever();
    int rc = call_skel(inv, 0, REMOTE_SCALARS_MAKEX(0, 0, 2, 0, 0, 1), a);
    pthread_mutex_lock(&g_mu);
    if (rc != AEE_SUCCESS) {
        handles[slot].used = 0;
        pthread_mutex_unlock(&g_mu);
        dlclose(h);
        return rc;
    }
    handles[slot].lib = h;
    handles[slot].invoke = inv;
    handles[slot].skel = a[2].h64;
    nopen++;
    pthread_mutex_unlock(&g_mu);
    *ph = 0x6862000000000000ull | (uint64_t)(slot + 1);
    return AEE_SUCCESS;
}

static int handle_slot(remote_handle64 h) {
    uint64_t s = h & 0xffffu;
    if ((h & ~0xffffull) != 0x6862000000000000ull || s == 0 || s > MAX_HANDLES || !handles[s - 1].used ||
        !handles[s - 1].invoke)
        return -1;
    return (int)s - 1;
}

int remote_handle64_invoke(remote_handle64 h, uint32_t sc, remote_arg *pra) {
    pthread_mutex_lock(&g_mu);
    int s = handle_slot(h);
    if (s < 0) {
        pthread_mutex_unlock(&g_mu);
        return AEE_EBADPARM;
    }
    uint32_t m = REMOTE_SCALARS_METHOD(sc);
    stats.invokes[m < N_METHODS ? m : N_METHODS]++;
    /* pra[0] is primIn, pra[1] the request (wire.h's method table) */
    if (m == HX_METHOD_CONTROL && REMOTE_SCALARS_INBUFS(sc) >= 2 && pra && pra[1].buf.pv &&
        pra[1].buf.nLen >= sizeof(hx_wire_ctl_req)) {
        uint32_t op = ((const hx_wire_ctl_req *)pra[1].buf.pv)->op;
        if (op < MAX_CTL_OPS) stats.ctl_ops[op]++;
    }
    invoke_fn inv = handles[s].invoke;
    remote_handle64 skel = handles[s].skel;
    int fail = fault.dsp_error_method >= 0 && (uint32_t)fault.dsp_error_method == m;
    int crash = fault.crash_method >= 0 && (uint32_t)fault.crash_method == m;
    int hang = fault.hang_method >= 0 && (uint32_t)fault.hang_method == m;
    hx_lb_legs_load();
    uint64_t out_leg = hx_lb_legs.out_ns + hx_lb_legs_jitter(), back_leg = hx_lb_legs.back_ns + hx_lb_legs_jitter();
    pthread_mutex_unlock(&g_mu);
    if (__atomic_load_n(&pd_dead, __ATOMIC_ACQUIRE)) return AEE_ECONNRESET;
    if (fail) return DSP_ERR(0x001);
    if (crash) {
        pd_kill("HX_LOOPBACK_FAULT=dsp-crash: the PD crashed in this method", -1);
        return AEE_ECONNRESET;
    }
    if (hang) /* a DSP thread stuck for good: the call never returns */
        for (;;) pause_forever();
    hx_lb_legs_wait(out_leg);
    /* in-process: the buffers are the caller's own, passed as they are */
    int rc = call_skel(inv, skel, sc, pra);
    hx_lb_legs_wait(back_leg);
    return rc;
}

int remote_handle64_close(remote_handle64 h) {
    pthread_mutex_lock(&g_mu);
    int s = handle_slot(h);
    if (s < 0) {
        pthread_mutex_unlock(&g_mu);
        return AEE_EBADPARM;
    }
    invoke_fn inv = handles[s].invoke;
    remote_arg a[1];
    a[0].h64 = handles[s].skel;
    stats.invokes[HX_METHOD_CLOSE]++;
    int hang = fault.hang_method == HX_METHOD_CLOSE;
    pthread_mutex_unlock(&g_mu);
    if (hang)
        for (;;) pause_forever();
    /* Method 1 as mod_table.c's open_mod_handle_close calls it: the handle
     * as in handle 0.  A dead PD is not called: the handle is released. */
    int rc = __atomic_load_n(&pd_dead, __ATOMIC_ACQUIRE)
                 ? AEE_ECONNRESET
                 : call_skel(inv, handles[s].skel, REMOTE_SCALARS_MAKEX(0, 1, 0, 0, 1, 0), a);
    pthread_mutex_lock(&g_mu);
    /* the skel stays loaded: its threads may still be ending, and the real
     * framework keeps a module loaded for the life of the PD too */
    handles[s].used = 0;
    handles[s].invoke = NULL;
    int last = --nopen == 0;
    pthread_mutex_unlock(&g_mu);
    if (last) write_stats();
    return rc;
}

int remote_handle64_control(remote_handle64 h, uint32_t req, void *data, uint32_t datalen) {
    pthread_mutex_lock(&g_mu);
    int rc = AEE_SUCCESS;
    if (handle_slot(h) < 0) rc = AEE_EBADPARM;
    else if (req != DSPRPC_CONTROL_LATENCY) rc = AEE_EUNSUPPORTED;
    else if (!data || datalen != sizeof(struct remote_rpc_control_latency)) rc = AEE_EBADPARM;
    else {
        stats.latency = *(const struct remote_rpc_control_latency *)data;
        stats.latency_set = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return rc;
}

int remote_session_control(uint32_t req, void *data, uint32_t datalen) {
    if (req != DSPRPC_CONTROL_UNSIGNED_MODULE) return AEE_EUNSUPPORTED;
    if (!data || datalen != sizeof(struct remote_rpc_control_unsigned_module)) return AEE_EBADPARM;
    const struct remote_rpc_control_unsigned_module *um = data;
    if (um->domain != CDSP_DOMAIN_ID) return AEE_EBADPARM;
    load_faults();
    if (fault.no_unsigned_pd) return AEE_EUNSUPPORTED;
    pthread_mutex_lock(&g_mu);
    int rc = AEE_SUCCESS;
    /* the PD's kind is fixed once a session is open on the domain (the real
     * library answers AEE_EALREADYLOADED, a code this project does not
     * declare: AEE_EBADSTATE says the same) */
    if (nopen > 0 && stats.unsigned_pd != !!um->enable) rc = AEE_EBADSTATE;
    else stats.unsigned_pd = !!um->enable;
    pthread_mutex_unlock(&g_mu);
    return rc;
}
