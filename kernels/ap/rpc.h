/* The FastRPC and dspqueue calls hxrun-ap makes, reached through dlopen
 * (rpc_dl.c), and the client stubs of the hxfuse interface (stub.c).
 *
 * The driver links no libcdsprpc: a phone's vendor partition provides it,
 * the loopback tests provide a stand-in of the same name, and the choice is
 * made at run time (--cdsprpc PATH, HX_CDSPRPC_LIB, default
 * "libcdsprpc.so").  Only the public headers' declarations are needed to
 * build (sdk_decls/remote.h, dspqueue.h). */
#ifndef HX_AP_RPC_H
#define HX_AP_RPC_H
#include <stddef.h>
#include <stdint.h>
#include "dspqueue.h"
#include "remote.h"
#include "wire.h"

typedef struct hx_rpc_lib {
    void *dl;
    char path[1024];
    /* The loopback stand-in exports the string hx_loopback_stand_in (a
     * char array or a char pointer: both are read): its presence says the
     * "DSP" is this machine's CPU, and every record says so. */
    const char *stand_in_text; /* NULL: a real libcdsprpc */
    int (*handle64_open)(const char *name, remote_handle64 *ph);
    int (*handle64_invoke)(remote_handle64 h, uint32_t sc, remote_arg *pra);
    int (*handle64_close)(remote_handle64 h);
    int (*handle64_control)(remote_handle64 h, uint32_t req, void *data, uint32_t datalen);
    int (*session_control)(uint32_t req, void *data, uint32_t datalen);
    AEEResult (*dq_create)(int domain, uint32_t flags, uint32_t req_size, uint32_t resp_size,
                           dspqueue_callback_t packet_cb, dspqueue_callback_t error_cb, void *ctx, dspqueue_t *q);
    AEEResult (*dq_close)(dspqueue_t q);
    AEEResult (*dq_export)(dspqueue_t q, uint64_t *id);
    AEEResult (*dq_write)(dspqueue_t q, uint32_t flags, uint32_t nbufs, struct dspqueue_buffer *bufs, uint32_t len,
                          const uint8_t *msg, uint32_t timeout_us);
    /* Only the non-blocking read: the replies are read inside each queue's
     * packet callback, where a blocking dspqueue_read deadlocks (exec_ap.c). */
    AEEResult (*dq_read_noblock)(dspqueue_t q, uint32_t *flags, uint32_t max_bufs, uint32_t *nbufs,
                                 struct dspqueue_buffer *bufs, uint32_t max_len, uint32_t *len, uint8_t *msg);
} hx_rpc_lib;

/* The library hxrun-ap loads when neither --cdsprpc nor HX_CDSPRPC_LIB names one. */
#define HX_CDSPRPC_DEFAULT "libcdsprpc.so"
/* path NULL: HX_CDSPRPC_LIB, else the default.  Returns 0, or -1 with one
 * line naming the library and the missing symbol (dlerror's words). */
int hx_rpc_load(hx_rpc_lib *l, const char *path, char *err, size_t errlen);
void hx_rpc_unload(hx_rpc_lib *l);
/* An AEE code's name ("AEE_EEXPIRED"; a DSP code's with its offset,
 * DSP_AEE_EOFFSET, taken off), or "AEE error" for one not listed. */
const char *hx_aee_name(int code);
/* "AEE_EUNABLETOLOAD (0x80000406, from the DSP)": name, hex, and whether
 * the DSP returned it.  Returns buf. */
const char *hx_aee_str(int code, char *buf, size_t n);
/* Where a code came back, for its hint. */
enum { HX_AT_UNSIGNED, HX_AT_OPEN, HX_AT_INVOKE, HX_AT_QUEUE_READ, HX_AT_QUEUE_WRITE, HX_AT_QUEUE };
/* What to do about `code` met at `at`, NULL when there is nothing to add. */
const char *hx_aee_hint(int code, int at);
/* hx_aee_str and, when there is one, "; hint: " and the hint.  Returns buf. */
const char *hx_aee_explain(int code, int at, char *buf, size_t n);
/* A hint for a SETUP the DSP refused with this reason, or NULL. */
const char *hx_setup_hint(const char *dsp_error);

/* The session: what opening it took and which requests the DSP accepted. */
typedef struct hx_rpc_session {
    const hx_rpc_lib *lib;
    remote_handle64 h;
    int open;
    int unsigned_pd; /* the unsigned protection domain was granted */
    int latency_qos; /* the PM QoS latency vote was accepted (a refusal is recorded, not fatal) */
    int qos_rc;
} hx_rpc_session;

/* hxfuse client stubs (the shapes wire.h documents per method).  Each
 * returns the method's AEE code (0 on success); open fills err on a fatal
 * refusal. */
int hxfuse_open(hx_rpc_session *s, const hx_rpc_lib *lib, char *err, size_t errlen);
int hxfuse_setup(hx_rpc_session *s, const hx_wire_setup_req *req, const void *argv_blob, hx_wire_setup_resp *resp);
int hxfuse_start(hx_rpc_session *s, const hx_wire_start_req *req, hx_wire_status *st);
int hxfuse_control(hx_rpc_session *s, const hx_wire_ctl_req *req, hx_wire_ctl_resp *resp, void *bulk, size_t bulk_cap);
int hxfuse_stop(hx_rpc_session *s, hx_wire_status *st);
int hxfuse_close(hx_rpc_session *s);
#endif
