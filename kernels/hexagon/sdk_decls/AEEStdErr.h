/* Error codes, with the values of the public AEEStdErr.h (quic/fastrpc,
 * BSD-3, where AEE_EOFFSET is 0): the application-processor driver and the
 * loopback stand-in print them, so they follow the library.  Device code
 * compiled here must still not depend on them (sdk_decls/README.md). */
#ifndef HX_DECL_AEESTDERR_H
#define HX_DECL_AEESTDERR_H
#define AEE_SUCCESS      0
#define AEE_EFAILED      1
#define AEE_ENOMEMORY    2
#define AEE_EEXPIRED     12
#define AEE_EBADSTATE    13
#define AEE_EBADPARM     14
#define AEE_EUNSUPPORTED 20
#define AEE_ENOSUCH      39
#define AEE_ENOSUCHMOD   62
#define AEE_EWOULDBLOCK  516
typedef int AEEResult;
#endif
