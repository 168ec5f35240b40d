/* Loads libcdsprpc (or the loopback stand-in) and resolves every name the
 * driver calls.  Resolution is all-or-nothing at start-up, so a library that
 * lacks one function fails before any work, naming it, instead of in the
 * middle of a run. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr (glibc hides it otherwise; bionic always has it) */
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rpc.h"

/* AEEStdErr.h (quic/fastrpc inc/AEEStdErr.h): on the DSP the basic codes
 * carry DSP_AEE_EOFFSET (0x80000400); on the AP they do not.  The name is
 * the code's with the offset taken off; the four codes "used in both"
 * (AEE_ENOSUCH, AEE_EINTERRUPTED, AEE_ECONNRESET, AEE_EWOULDBLOCK) never
 * carry it. */
static int from_dsp(int code) { return ((uint32_t)code & 0xfffffc00u) == (uint32_t)DSP_AEE_EOFFSET; }

const char *hx_aee_name(int code) {
    if (code == AEE_SUCCESS) return "AEE_SUCCESS";
    switch (code) {
    case AEE_ENOSUCH: return "AEE_ENOSUCH";
    case AEE_EINTERRUPTED: return "AEE_EINTERRUPTED";
    case AEE_ECONNRESET: return "AEE_ECONNRESET";
    case AEE_EWOULDBLOCK: return "AEE_EWOULDBLOCK";
    }
    switch (from_dsp(code) ? (int)((uint32_t)code - (uint32_t)DSP_AEE_EOFFSET) : code) {
    case 0x001: return "AEE_EFAILED";
    case 0x002: return "AEE_ENOMEMORY";
    case 0x005: return "AEE_EALREADYLOADED";
    case 0x006: return "AEE_EUNABLETOLOAD";
    case 0x00C: return "AEE_EEXPIRED";
    case 0x00D: return "AEE_EBADSTATE";
    case 0x00E: return "AEE_EBADPARM";
    case 0x014: return "AEE_EUNSUPPORTED";
    case 0x016: return "AEE_ERESOURCENOTFOUND";
    case 0x038: return "AEE_EINVALIDSIGNATURE";
    case 0x03E: return "AEE_ENOSUCHMOD";
    case 0x042: return "AEE_ENOSUCHSYMBOL";
    case 0x045: return "AEE_ENOSUCHFILE";
    case 0x081: return "AEE_EUNSIGNEDMOD";
    case 0x082: return "AEE_EINVALIDHASH";
    case 0x200: return "AEE_ERPC";
    default: return "AEE error";
    }
}

const char *hx_aee_str(int code, char *buf, size_t n) {
    snprintf(buf, n, "%s (0x%x%s)", hx_aee_name(code), (unsigned)code, from_dsp(code) ? ", from the DSP" : "");
    return buf;
}

/* The first-contact failures, by code and where they came back, with what
 * to do.  Each is what a first session on a phone meets (docs/ap-host.md,
 * "First contact"); none of these texts is a measured fact about a phone. */
const char *hx_aee_hint(int code, int at) {
    unsigned c = from_dsp(code) ? (unsigned)code - (unsigned)DSP_AEE_EOFFSET : (unsigned)code;
    if (code == AEE_ECONNRESET)
        return "the DSP process (the skel's PD) died: a crash, or exit() in DSP code; nothing on this session works "
               "any more. The DSP's last words are in the phone's log (adb logcat -s adsprpc), not here";
    if (code == AEE_EINTERRUPTED)
        return "a wait on the queue was cancelled: the DSP process died mid-run (dspqueue_read answers 0x2e after a "
               "DSP crash), or the queue closed under it; look for the crash in adb logcat -s adsprpc";
    if (at == HX_AT_UNSIGNED && c == 0x014)
        return "this FastRPC library refuses unsigned PDs (a vendor build without them, or a library older than "
               "the SDK): the skel then needs a signature (a test signature for this device)";
    if (at == HX_AT_OPEN && from_dsp(code)) {
        if (c == 0x006)
            return "the cDSP could not load libhxfuse_skel.so: it is not in a directory of ADSP_LIBRARY_PATH "
                   "(';'-separated, e.g. \"/data/local/tmp/hxfuse;/vendor/lib/rfsa/adsp\"), or it was built for "
                   "another Hexagon arch than this cDSP (v73: 8 Gen 2, v75: 8 Gen 3), or it is unsigned and this "
                   "phone needs a test signature. The DSP's own reason is in adb logcat -s adsprpc";
        if (c == 0x081 || c == 0x082 || c == 0x038)
            return "the cDSP refused an unsigned module: this phone does not run unsigned PDs for this process; "
                   "a test signature for this device (testsig-<serial>.so on ADSP_LIBRARY_PATH) is needed";
        if (c == 0x042)
            return "the skel loaded but lacks hxfuse_skel_handle_invoke: a skel of another interface or version "
                   "(rebuild driver and skel from one tree)";
        if (c == 0x00E)
            return "the skel refused the open call's arguments: a skel whose method 0 does not take the loader's "
                   "shape (another hxfuse version; rebuild driver and skel from one tree)";
        if (c == 0x00D) return "the skel already holds a session: one hxrun-ap at a time per cDSP process";
    }
    if (at == HX_AT_QUEUE_WRITE && c == 0x00C)
        return "the queue stayed full: the DSP stopped reading its requests (hung or crashed)";
    if (c == 0x014 && from_dsp(code))
        return "the DSP does not support the request; from a power or HMX call, an HMX clock vote the DSP refused "
               "(v75 and later take HAP_power_set_HMX_v2)";
    if (at == HX_AT_INVOKE && c == 0x00E && from_dsp(code))
        return "the skel refused the call's arguments: driver and skel from different hxfuse versions (rebuild "
               "both from one tree)";
    return NULL;
}

const char *hx_aee_explain(int code, int at, char *buf, size_t n) {
    char s[96];
    const char *hint = hx_aee_hint(code, at);
    snprintf(buf, n, "%s%s%s", hx_aee_str(code, s, sizeof s), hint ? "; hint: " : "", hint ? hint : "");
    return buf;
}

/* A SETUP refusal's text: the DSP's reason, and what to do when it is the
 * scratch (VTCM) request that failed. */
const char *hx_setup_hint(const char *dsp_error) {
    if (strstr(dsp_error, "scratch arena") || strstr(dsp_error, "VTCM") || strstr(dsp_error, "vtcm"))
        return "the DSP could not get its scratch memory (VTCM on a cDSP): another client (camera, a QNN/HTP "
               "session) holds VTCM, or less is free than asked; the DSP's reason is before this hint and in adb "
               "logcat -s "
               "adsprpc. Try a smaller --scratch-bytes, or close the other NPU clients";
    return NULL;
}

/* dlsym into a function pointer: the cast through void * is POSIX's own
 * idiom (dlsym's result is a data pointer in ISO C). */
static int sym(hx_rpc_lib *l, const char *name, void *slot, char *err, size_t errlen) {
    dlerror();
    void *p = dlsym(l->dl, name);
    const char *e = dlerror();
    if (!p || e) {
        snprintf(err, errlen,
                 "%s: missing symbol %s (%s); hint: this FastRPC library is older than the interface hxrun-ap uses "
                 "(a phone's libcdsprpc older than the SDK it was built with lacks newer names, as rpcmem_alloc2 "
                 "or the dspqueue calls): use the phone's own /vendor/lib64/libcdsprpc.so with a driver built "
                 "against a matching SDK, or a newer phone image",
                 l->path, name, e ? e : "NULL");
        return -1;
    }
    memcpy(slot, &p, sizeof p);
    return 0;
}

/* The stand-in's string may be declared either way: an array (the
 * symbol's address is the text) or a pointer (the symbol holds the text's
 * address).  A pointer's bytes are an address inside a loaded object; an
 * array's are characters, which are not (a printable 8-byte pattern lies far
 * above any user-space mapping).  The string is at least a pointer's size in
 * either case: both declarations are the stand-in's, whose text is a
 * sentence. */
static const char *stand_in_text(void *sym) {
    void *p;
    memcpy(&p, sym, sizeof p);
    Dl_info info;
    if (p && dladdr(p, &info) && info.dli_fbase) return (const char *)p;
    return (const char *)sym;
}

int hx_rpc_load(hx_rpc_lib *l, const char *path, char *err, size_t errlen) {
    memset(l, 0, sizeof *l);
    if (!path || !*path) path = getenv("HX_CDSPRPC_LIB");
    if (!path || !*path) path = HX_CDSPRPC_DEFAULT;
    snprintf(l->path, sizeof l->path, "%s", path);
    l->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!l->dl) {
        const char *e = dlerror();
        snprintf(err, errlen, "cannot load %s: %s", path, e ? e : "dlopen failed");
        return -1;
    }
    if (sym(l, "remote_handle64_open", &l->handle64_open, err, errlen) ||
        sym(l, "remote_handle64_invoke", &l->handle64_invoke, err, errlen) ||
        sym(l, "remote_handle64_close", &l->handle64_close, err, errlen) ||
        sym(l, "remote_handle64_control", &l->handle64_control, err, errlen) ||
        sym(l, "remote_session_control", &l->session_control, err, errlen) ||
        sym(l, "dspqueue_create", &l->dq_create, err, errlen) || sym(l, "dspqueue_close", &l->dq_close, err, errlen) ||
        sym(l, "dspqueue_export", &l->dq_export, err, errlen) || sym(l, "dspqueue_write", &l->dq_write, err, errlen) ||
        sym(l, "dspqueue_read_noblock", &l->dq_read_noblock, err, errlen)) {
        hx_rpc_unload(l);
        return -1;
    }
    /* Optional: only the stand-in has it. */
    dlerror();
    void *text = dlsym(l->dl, "hx_loopback_stand_in");
    if (text && !dlerror()) l->stand_in_text = stand_in_text(text);
    return 0;
}

void hx_rpc_unload(hx_rpc_lib *l) {
    if (l->dl) dlclose(l->dl);
    l->dl = NULL;
}
