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

const char *hx_aee_name(int code) {
    switch (code) {
    case AEE_SUCCESS: return "AEE_SUCCESS";
    case AEE_EFAILED: return "AEE_EFAILED";
    case AEE_ENOMEMORY: return "AEE_ENOMEMORY";
    case AEE_EEXPIRED: return "AEE_EEXPIRED";
    case AEE_EBADSTATE: return "AEE_EBADSTATE";
    case AEE_EBADPARM: return "AEE_EBADPARM";
    case AEE_EUNSUPPORTED: return "AEE_EUNSUPPORTED";
    case AEE_ENOSUCH: return "AEE_ENOSUCH";
    case AEE_ENOSUCHMOD: return "AEE_ENOSUCHMOD";
    case AEE_EWOULDBLOCK: return "AEE_EWOULDBLOCK";
    default: return "AEE error";
    }
}

/* dlsym into a function pointer: the cast through void * is POSIX's own
 * idiom (dlsym's result is a data pointer in ISO C). */
static int sym(hx_rpc_lib *l, const char *name, void *slot, char *err, size_t errlen) {
    dlerror();
    void *p = dlsym(l->dl, name);
    const char *e = dlerror();
    if (!p || e) {
        snprintf(err, errlen, "%s: missing symbol %s (%s)", l->path, name, e ? e : "NULL");
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
