/* The FastRPC names the application-processor driver (ap/) and the DSP skel
 * use, with the signatures and values of the public remote.h (quic/fastrpc,
 * BSD-3).  Used by sdk-check and by the loopback stand-in only; a real build
 * uses the SDK's own header (sdk_decls/README.md). */
#ifndef HX_DECL_REMOTE_H
#define HX_DECL_REMOTE_H
#include <stddef.h>
#include <stdint.h>

#define REMOTE_SCALARS_METHOD_ATTR(sc) (((sc) >> 29) & 0x7)
#define REMOTE_SCALARS_METHOD(sc)      (((sc) >> 24) & 0x1f)
#define REMOTE_SCALARS_INBUFS(sc)      (((sc) >> 16) & 0x0ff)
#define REMOTE_SCALARS_OUTBUFS(sc)     (((sc) >> 8) & 0x0ff)
#define REMOTE_SCALARS_INHANDLES(sc)   (((sc) >> 4) & 0x0f)
#define REMOTE_SCALARS_OUTHANDLES(sc)  ((sc) & 0x0f)
#define REMOTE_SCALARS_MAKEX(nAttr, nMethod, nIn, nOut, noIn, noOut)                                                   \
    ((((uint32_t)(nAttr) & 0x7) << 29) | (((uint32_t)(nMethod) & 0x1f) << 24) | (((uint32_t)(nIn) & 0xff) << 16) |     \
     (((uint32_t)(nOut) & 0xff) << 8) | (((uint32_t)(noIn) & 0x0f) << 4) | ((uint32_t)(noOut) & 0x0f))
#define REMOTE_SCALARS_MAKE(nMethod, nIn, nOut) REMOTE_SCALARS_MAKEX(0, nMethod, nIn, nOut, 0, 0)
#define REMOTE_SCALARS_LENGTH(sc)                                                                                      \
    (REMOTE_SCALARS_INBUFS(sc) + REMOTE_SCALARS_OUTBUFS(sc) + REMOTE_SCALARS_INHANDLES(sc) +                           \
     REMOTE_SCALARS_OUTHANDLES(sc))

#define CDSP_DOMAIN_ID 3
#define CDSP_DOMAIN    "&_dom=cdsp"

typedef uint32_t remote_handle;
typedef uint64_t remote_handle64;
typedef struct {
    void *pv;
    size_t nLen;
} remote_buf;
typedef struct {
    int32_t fd;
    uint32_t offset;
} remote_dma_handle;
typedef union {
    remote_buf buf;
    remote_handle h;
    remote_handle64 h64;
    remote_dma_handle dma;
} remote_arg;

/* remote_handle64_control request ids */
enum handle_control_req_id {
    DSPRPC_RESERVED,
    DSPRPC_CONTROL_LATENCY,
    DSPRPC_GET_DSP_INFO,
    DSPRPC_CONTROL_WAKELOCK,
    DSPRPC_GET_DOMAIN,
};
enum remote_rpc_latency_flags { RPC_DISABLE_QOS, RPC_PM_QOS, RPC_ADAPTIVE_QOS, RPC_POLL_QOS };
struct remote_rpc_control_latency {
    uint32_t enable;
    uint32_t latency;
};

/* remote_session_control request ids */
enum session_control_req_id {
    FASTRPC_RESERVED_1,
    FASTRPC_THREAD_PARAMS,
    DSPRPC_CONTROL_UNSIGNED_MODULE,
};
struct remote_rpc_control_unsigned_module {
    int domain;
    int enable;
};

int remote_handle64_open(const char *name, remote_handle64 *ph);
int remote_handle64_invoke(remote_handle64 h, uint32_t dwScalars, remote_arg *pra);
int remote_handle64_close(remote_handle64 h);
int remote_handle64_control(remote_handle64 h, uint32_t req, void *data, uint32_t datalen);
int remote_session_control(uint32_t req, void *data, uint32_t datalen);
#endif
