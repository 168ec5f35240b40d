/* Placeholder values (sdk_decls/README.md); the SDK's header is the reference. */
#ifndef HX_DECL_AEESTDERR_H
#define HX_DECL_AEESTDERR_H
#define AEE_SUCCESS   0
#define AEE_EFAILED   1
#define AEE_ENOMEMORY 2
#define AEE_EBADPARM  14
typedef int AEEResult;
#endif
