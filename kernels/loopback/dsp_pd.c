/* STAND-IN for the DSP user PD's runtime, linked into the loopback build of
 * the skel only (never into a device build: there the PD's own runtime does
 * this).  NOT part of the skel's source.
 *
 * A FastRPC user PD on the cDSP has no terminal: what its code prints to
 * stdout or stderr, and what it logs with FARF, lands in the DSP log
 * (logcat on a phone), never in the AP process's streams; and exit() in it
 * ends the PD, not the AP process.  The loopback skel is linked with
 * -Wl,--wrap for the stdio calls below and exit (kernels/Makefile), so that
 * the same skel objects behave the same way here: their output goes to the
 * stand-in's DSP log (HX_LOOPBACK_DSP_LOG) and exit() kills the stand-in's
 * session (hx_loopback_pd_exit) while the AP process lives on.
 *
 * It also carries the stand-in's scratch fault (HX_LOOPBACK_FAULT=no-vtcm):
 * the skel's scratch request fails as a VTCM request can on a phone (another
 * client holds VTCM, or less is free than asked), through the skel's own
 * error path. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

void hx_loopback_dsp_vlog(const char *fmt, va_list ap);
void hx_loopback_dsp_log(const char *fmt, ...);
__attribute__((noreturn)) void hx_loopback_pd_exit(int status);
int hx_loopback_fault_no_vtcm(void);

/* Everything below stays inside the skel (it exports one symbol, skel.c). */
#pragma GCC visibility push(hidden)

/* The real calls, for streams other than stdout/stderr (files the skel
 * writes, if any). */
__attribute__((visibility("default"))) int __real_vfprintf(FILE *f, const char *fmt, va_list ap);
__attribute__((visibility("default"))) int __real_fputs(const char *s, FILE *f);
__attribute__((visibility("default"))) int __real_fputc(int c, FILE *f);
__attribute__((visibility("default"))) size_t __real_fwrite(const void *p, size_t size, size_t n, FILE *f);

static int to_log(const FILE *f) { return f == stdout || f == stderr; }

int __wrap_vfprintf(FILE *f, const char *fmt, va_list ap) {
    if (!to_log(f)) return __real_vfprintf(f, fmt, ap);
    hx_loopback_dsp_vlog(fmt, ap);
    return 0;
}

int __wrap_fprintf(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = __wrap_vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}

int __wrap_printf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hx_loopback_dsp_vlog(fmt, ap);
    va_end(ap);
    return 0;
}

int __wrap_fputs(const char *s, FILE *f) {
    if (!to_log(f)) return __real_fputs(s, f);
    hx_loopback_dsp_log("%s", s);
    return 0;
}

int __wrap_puts(const char *s) {
    hx_loopback_dsp_log("%s\n", s);
    return 0;
}

int __wrap_fputc(int c, FILE *f) {
    if (!to_log(f)) return __real_fputc(c, f);
    hx_loopback_dsp_log("%c", c);
    return c;
}

int __wrap_putchar(int c) {
    hx_loopback_dsp_log("%c", c);
    return c;
}

size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f) {
    if (!to_log(f)) return __real_fwrite(p, size, n, f);
    hx_loopback_dsp_log("%.*s", (int)(size * n), (const char *)p);
    return n;
}

void __wrap_perror(const char *s) { hx_loopback_dsp_log("%s: (perror)\n", s ? s : ""); }

/* exit() in a user PD ends the PD: the stand-in's session dies with it. */
__attribute__((noreturn)) void __wrap_exit(int status) { hx_loopback_pd_exit(status); }

/* The scratch request (platform.h's hx_scratch_alloc; on the cDSP the VTCM
 * request of vtcm_qurt.c): refused under the no-vtcm fault, with the reason
 * in the DSP log as the DSP side would log it. */
/* weak: a test skel without the executor links this file too */
__attribute__((weak)) void *__real_hx_scratch_alloc(size_t bytes, int *on_chip);
void *__wrap_hx_scratch_alloc(size_t bytes, int *on_chip) {
    if (hx_loopback_fault_no_vtcm()) {
        *on_chip = 0;
        hx_loopback_dsp_log("loopback DSP: VTCM request of %zu bytes refused (HX_LOOPBACK_FAULT=no-vtcm)\n", bytes);
        return NULL;
    }
    return __real_hx_scratch_alloc(bytes, on_chip);
}
#pragma GCC visibility pop
