/* Error codes, with the values of the public AEEStdErr.h (quic/fastrpc,
 * BSD-3, inc/AEEStdErr.h).  As there, the basic codes carry an offset on the
 * DSP: AEE_EOFFSET is DSP_AEE_EOFFSET (0x80000400) when compiled for Hexagon
 * and 0 on the application processor, so an error the skel returns reaches
 * the AP as 0x80000400 + code (AEE_EBADPARM from the DSP is 0x8000040E).
 * The loopback build of the skel defines HX_AEE_DSP_SIDE to get the DSP's
 * values on x86 too.  The codes "used in both" (AEE_ENOSUCH, AEE_EINTERRUPTED,
 * AEE_ECONNRESET, AEE_EWOULDBLOCK) have no offset on either side.  The AP
 * driver and the loopback stand-in print and decode them, so they follow
 * the library; other device code compiled here must not depend on them
 * (sdk_decls/README.md). */
#ifndef HX_DECL_AEESTDERR_H
#define HX_DECL_AEESTDERR_H
#define DSP_AEE_EOFFSET 0x80000400
#if defined(__hexagon__) || defined(HX_AEE_DSP_SIDE)
#define AEE_EOFFSET DSP_AEE_EOFFSET
#else
#define AEE_EOFFSET 0x00000000
#endif
#define AEE_SUCCESS           0
#define AEE_EFAILED           (AEE_EOFFSET + 0x001)
#define AEE_ENOMEMORY         (AEE_EOFFSET + 0x002)
#define AEE_EALREADYLOADED    (AEE_EOFFSET + 0x005)
#define AEE_EUNABLETOLOAD     (AEE_EOFFSET + 0x006)
#define AEE_EEXPIRED          (AEE_EOFFSET + 0x00C)
#define AEE_EBADSTATE         (AEE_EOFFSET + 0x00D)
#define AEE_EBADPARM          (AEE_EOFFSET + 0x00E)
#define AEE_EUNSUPPORTED      (AEE_EOFFSET + 0x014)
#define AEE_ERESOURCENOTFOUND (AEE_EOFFSET + 0x016)
#define AEE_EINVALIDSIGNATURE (AEE_EOFFSET + 0x038)
#define AEE_ENOSUCHMOD        (AEE_EOFFSET + 0x03E)
#define AEE_ENOSUCHSYMBOL     (AEE_EOFFSET + 0x042)
#define AEE_ENOSUCHFILE       (AEE_EOFFSET + 0x045)
#define AEE_EUNSIGNEDMOD      (AEE_EOFFSET + 0x081)
#define AEE_ERPC              (AEE_EOFFSET + 0x200)
#define AEE_ENOSUCH           39
#define AEE_EINTERRUPTED      46
#define AEE_ECONNRESET        104
#define AEE_EWOULDBLOCK       516
typedef int AEEResult;
#endif
