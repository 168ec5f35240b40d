/* Client stubs of the hxfuse interface, written by hand in the shape qaic
 * generates for a remote_handle64 interface: every method is one
 * remote_handle64_invoke whose scalars word (REMOTE_SCALARS_MAKEX) counts
 * its in buffers, out buffers and handles, with the remote_arg array in
 * that order (in buffers, out buffers, in handles, out handles).  The
 * per-method shapes are wire.h's method table, which is ap/hxfuse.idl's as
 * qaic generates it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "rpc.h"

int hxfuse_open(hx_rpc_session *s, const hx_rpc_lib *lib, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->lib = lib;
    /* Unsigned PD first: without it, opening an unsigned skel is refused
     * (and a phone without a test signature has nothing else). */
    struct remote_rpc_control_unsigned_module um = {CDSP_DOMAIN_ID, 1};
    int rc = lib->session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, &um, sizeof um);
    if (rc != AEE_SUCCESS) {
        char e[1024];
        snprintf(err, errlen, "remote_session_control(DSPRPC_CONTROL_UNSIGNED_MODULE, cdsp) refused: %s",
                 hx_aee_explain(rc, HX_AT_UNSIGNED, e, sizeof e));
        return rc;
    }
    s->unsigned_pd = 1;
    rc = lib->handle64_open(HX_SKEL_URI CDSP_DOMAIN, &s->h);
    if (rc != AEE_SUCCESS) {
        char e[1024];
        snprintf(err, errlen, "remote_handle64_open(%s) failed: %s", HX_SKEL_URI CDSP_DOMAIN,
                 hx_aee_explain(rc, HX_AT_OPEN, e, sizeof e));
        return rc;
    }
    s->open = 1;
    /* A latency vote keeps the DSP from sleeping between calls; without it
     * the control path is slower, not wrong: recorded, not fatal. */
    struct remote_rpc_control_latency lat = {RPC_PM_QOS, 100};
    s->qos_rc = lib->handle64_control(s->h, DSPRPC_CONTROL_LATENCY, &lat, sizeof lat);
    s->latency_qos = s->qos_rc == AEE_SUCCESS;
    return 0;
}

/* The scalars word of method m, from wire.h's table (the IDL's shapes). */
static uint32_t sc_of(int m) {
    static const hx_wire_method t[HX_WIRE_NMETHODS] = HX_WIRE_METHODS;
    return REMOTE_SCALARS_MAKEX(0, t[m].id, t[m].in_bufs, t[m].out_bufs, t[m].in_handles, t[m].out_handles);
}

/* As qaic: pra[0] is primIn, the int32 lengths of the sequences; then the
 * in sequences, then the rout sequences. */
int hxfuse_setup(hx_rpc_session *s, const hx_wire_setup_req *req, const void *argv_blob, hx_wire_setup_resp *resp) {
    /* One in sequence: the header with the argv blob right behind it. */
    static unsigned char in[sizeof(hx_wire_setup_req) + 65536];
    if (req->argv_bytes > sizeof in - sizeof *req) return AEE_EBADPARM;
    memcpy(in, req, sizeof *req);
    memcpy(in + sizeof *req, argv_blob, req->argv_bytes);
    hx_wire_prim2 prim = {{(int32_t)(sizeof *req + req->argv_bytes), (int32_t)sizeof *resp}};
    remote_arg a[3];
    a[0].buf = (remote_buf){&prim, sizeof prim};
    a[1].buf = (remote_buf){in, (size_t)prim.len[0]};
    a[2].buf = (remote_buf){resp, sizeof *resp};
    return s->lib->handle64_invoke(s->h, sc_of(HX_METHOD_SETUP), a);
}

int hxfuse_start(hx_rpc_session *s, const hx_wire_start_req *req, hx_wire_status *st) {
    hx_wire_prim2 prim = {{(int32_t)sizeof *req, (int32_t)sizeof *st}};
    remote_arg a[3];
    a[0].buf = (remote_buf){&prim, sizeof prim};
    a[1].buf = (remote_buf){(void *)req, sizeof *req};
    a[2].buf = (remote_buf){st, sizeof *st};
    return s->lib->handle64_invoke(s->h, sc_of(HX_METHOD_START), a);
}

int hxfuse_control(hx_rpc_session *s, const hx_wire_ctl_req *req, hx_wire_ctl_resp *resp, void *bulk, size_t bulk_cap) {
    /* The bulk sequence is always passed (length 0 when the op returns
     * none), so every CONTROL has the same scalars word. */
    static unsigned char none[1];
    if (bulk_cap > INT32_MAX) bulk_cap = INT32_MAX;
    hx_wire_prim3 prim = {{(int32_t)sizeof *req, (int32_t)sizeof *resp, bulk ? (int32_t)bulk_cap : 0}};
    remote_arg a[4];
    a[0].buf = (remote_buf){&prim, sizeof prim};
    a[1].buf = (remote_buf){(void *)req, sizeof *req};
    a[2].buf = (remote_buf){resp, sizeof *resp};
    a[3].buf = (remote_buf){bulk ? bulk : none, bulk ? bulk_cap : 0};
    return s->lib->handle64_invoke(s->h, sc_of(HX_METHOD_CONTROL), a);
}

int hxfuse_stop(hx_rpc_session *s, hx_wire_status *st) {
    hx_wire_prim1 prim = {{(int32_t)sizeof *st}};
    remote_arg a[2];
    a[0].buf = (remote_buf){&prim, sizeof prim};
    a[1].buf = (remote_buf){st, sizeof *st};
    return s->lib->handle64_invoke(s->h, sc_of(HX_METHOD_STOP), a);
}

int hxfuse_close(hx_rpc_session *s) {
    if (!s->open) return 0;
    s->open = 0;
    return s->lib->handle64_close(s->h);
}
