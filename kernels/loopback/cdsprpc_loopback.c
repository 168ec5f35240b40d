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
 * STAND-IN test hooks (environment, read at open and at queue creation):
 *   HX_LOOPBACK_STATS=<file>  counters as JSON when the last handle closes
 *                             (or at exit, if it never closes);
 *   HX_LOOPBACK_FAULT=no-skel | queue-full | dsp-error:<method> | no-unsigned-pd. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
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
    int no_skel, queue_full, no_unsigned_pd;
    int dsp_error_method; /* -1: none */
} fault = {0, 0, 0, -1};

static void load_faults(void) {
    const char *f = getenv("HX_LOOPBACK_FAULT");
    fault.no_skel = f && !strcmp(f, "no-skel");
    fault.queue_full = f && !strcmp(f, "queue-full");
    fault.no_unsigned_pd = f && !strcmp(f, "no-unsigned-pd");
    fault.dsp_error_method = f && !strncmp(f, "dsp-error:", 10) ? atoi(f + 10) : -1;
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
        q->packet_cb(q, AEE_SUCCESS, q->ctx);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int start_callback(struct dspqueue *q) {
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
    p->ap = (struct dspqueue){p, 0, 1, packet_callback, error_callback, callback_context, 0, 0, 0};
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
    p->dsp = (struct dspqueue){p, 1, 1, packet_callback, error_callback, callback_context, 0, 0, 0};
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
         * callback returns, nobody is left to join it */
        if (pthread_equal(queue->thread, pthread_self())) pthread_detach(queue->thread);
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
    while (q->open && (full_fault || r->used + cost > r->size)) {
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

static AEEResult queue_read(dspqueue_t q, uint32_t *flags, uint32_t *num_buffers, uint32_t max_len, uint32_t *len,
                            uint8_t *msg, int block, uint32_t timeout_us) {
    if (!q || !len) return AEE_EBADPARM;
    lb_pair *p = q->pair;
    ring *r = in_ring(q);
    struct timespec dl;
    if (block && timeout_us != DSPQUEUE_TIMEOUT_NONE) deadline_after(&dl, timeout_us);
    pthread_mutex_lock(&p->mu);
    while (q->open && !r->head) {
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

/* ---- FastRPC handles ---------------------------------------------------- */

typedef int (*invoke_fn)(remote_handle64, uint32_t, remote_arg *);
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
                "%s{\"id\": %llu, \"requests\": %llu, \"responses\": %llu, \"request_ops\": {\"task\": %llu, "
                "\"fused\": %llu}, \"max_request_depth\": %u}",
                i ? ", " : "", (unsigned long long)p->id, (unsigned long long)p->req.packets,
                (unsigned long long)p->resp.packets, (unsigned long long)p->req_task, (unsigned long long)p->req_fused,
                p->req.max_depth);
        pthread_mutex_unlock(&p->mu);
    }
    fprintf(f, "], \"early_wakeups\": %llu}\n", (unsigned long long)stats.early_wakeups);
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
    pthread_mutex_lock(&g_mu);
    int unsigned_pd = stats.unsigned_pd;
    pthread_mutex_unlock(&g_mu);
    if (!unsigned_pd) {
        /* the skel is an unsigned module: a signed PD will not load it */
        fprintf(stderr,
                "cdsprpc loopback (stand-in): %s is unsigned: enable unsigned PD "
                "(remote_session_control DSPRPC_CONTROL_UNSIGNED_MODULE) before opening it\n",
                lib);
        return AEE_EBADSTATE;
    }
    void *h = find_skel(lib, tried, sizeof tried);
    if (!h) {
        fprintf(stderr, "cdsprpc loopback (stand-in): skel %s not found%s (searched: %s)\n", lib,
                fault.no_skel ? " (HX_LOOPBACK_FAULT=no-skel)" : "", tried);
        return AEE_ENOSUCHMOD;
    }
    invoke_fn inv = (invoke_fn)dlsym(h, sym);
    if (!inv) {
        fprintf(stderr, "cdsprpc loopback (stand-in): %s has no symbol %s\n", lib, sym);
        dlclose(h);
        return AEE_ENOSUCH;
    }
    pthread_mutex_lock(&g_mu);
    int slot = -1;
    for (int i = 0; i < MAX_HANDLES && slot < 0; i++)
        if (!handles[i].used) slot = i;
    if (slot < 0) {
        pthread_mutex_unlock(&g_mu);
        dlclose(h);
        return AEE_ENOMEMORY;
    }
    handles[slot].used = 1;
    stats.invokes[HX_METHOD_OPEN]++;
    pthread_mutex_unlock(&g_mu);
    /* the open method, as the framework calls it: URI in, handle out */
    remote_arg a[2];
    a[0].buf.pv = (void *)name;
    a[0].buf.nLen = strlen(name) + 1;
    a[1].h64 = 0;
    int rc = inv(0, REMOTE_SCALARS_MAKEX(0, HX_METHOD_OPEN, 1, 0, 0, 1), a);
    pthread_mutex_lock(&g_mu);
    if (rc != AEE_SUCCESS) {
        handles[slot].used = 0;
        pthread_mutex_unlock(&g_mu);
        dlclose(h);
        return rc;
    }
    handles[slot].lib = h;
    handles[slot].invoke = inv;
    handles[slot].skel = a[1].h64;
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
    if (m == HX_METHOD_CONTROL && REMOTE_SCALARS_INBUFS(sc) >= 1 && pra && pra[0].buf.pv &&
        pra[0].buf.nLen >= sizeof(hx_wire_ctl_req)) {
        uint32_t op = ((const hx_wire_ctl_req *)pra[0].buf.pv)->op;
        if (op < MAX_CTL_OPS) stats.ctl_ops[op]++;
    }
    invoke_fn inv = handles[s].invoke;
    remote_handle64 skel = handles[s].skel;
    int fail = fault.dsp_error_method >= 0 && (uint32_t)fault.dsp_error_method == m;
    hx_lb_legs_load();
    uint64_t out_leg = hx_lb_legs.out_ns + hx_lb_legs_jitter(), back_leg = hx_lb_legs.back_ns + hx_lb_legs_jitter();
    pthread_mutex_unlock(&g_mu);
    if (fail) return AEE_EFAILED;
    hx_lb_legs_wait(out_leg);
    /* in-process: the buffers are the caller's own, passed as they are */
    int rc = inv(skel, sc, pra);
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
    pthread_mutex_unlock(&g_mu);
    int rc = inv(handles[s].skel, REMOTE_SCALARS_MAKEX(0, HX_METHOD_CLOSE, 0, 0, 1, 0), a);
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
