/* hx_device_fatal (kernels_hexagon.h): how a device kernel that cannot do
 * what the run asked for reports it.  Its own unit so that the backends
 * (kernels_hmx.c, kernels_device.c's D) depend on it and not on each other:
 * kernels_device.c composes the table out of kernels_hmx.c, and the HMX
 * backend only needs the reporter.
 *
 * STATUS: written against the documented Hexagon SDK API (HAP_farf.h),
 * compile-checked with the open toolchain (make sdk-check). */
#define FARF_ALWAYS 1
#include <stdarg.h>
#include <stdio.h>
#include <HAP_farf.h>
#include "../common/platform.h"
#include "kernels_hexagon.h"

/* Reports, never exits (platform.h, hx_failure_set): FARF reaches the phone's
 * log even from a FastRPC user PD, where stderr goes nowhere; the runner
 * turns the recorded reason into its error or end record.  The caller
 * returns at once and leaves its outputs alone. */
void hx_device_fatal(const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    FARF(ALWAYS, "hxrun: error: %s", msg);
    fprintf(stderr, "hxrun: error: %s\n", msg);
    fflush(stderr);
    hx_failure_set(msg);
}
