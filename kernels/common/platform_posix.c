/* POSIX/Linux implementation of platform.h, used on the host and for
 * hexagon-linux-musl under QEMU, in four files by concern: this one (the
 * platform's name, memory, files, preemption and the resources record),
 * platform_posix_clock.c (clocks, sleeps, CPU time), platform_posix_thread.c
 * (threads, placement, futex waits) and platform_posix_machine.c (cores,
 * load, busy time, CPU model and governor).  Every target that uses one
 * uses all four (kernels/Makefile, POSIX_PLATFORM_SRC). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <sys/stat.h>
#include "json.h"
#include "platform.h"

#ifndef HX_PLATFORM_NAME
#define HX_PLATFORM_NAME "host"
#endif
const char *hx_platform_name(void) { return HX_PLATFORM_NAME; }

int hx_is_directory(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
int hx_make_dir(const char *path) { return mkdir(path, 0777); }
void *hx_alloc(size_t bytes, size_t align) {
    void *p = NULL;
    if (align < sizeof(void *)) align = sizeof(void *);
    if (posix_memalign(&p, align, bytes ? bytes : align) != 0) return NULL;
    return p;
}
void hx_free(void *p) { free(p); }
void *hx_scratch_alloc(size_t bytes, int *on_chip) {
    *on_chip = 0; /* a CPU has no software-managed on-chip memory: caches stand in */
    return hx_alloc(bytes, 2048);
}
void hx_scratch_free(void *p) { hx_free(p); }
/* Preemption (platform.h; the request itself: common/release.c): no
 * resource manager here, the runner's test hook asks.  Nothing on-chip to
 * give back. */
void hx_release_resources(void) {}
/* Linux (host, or Hexagon user mode under QEMU): no power votes, on-chip
 * memory, matrix engine, user DMA or reserved vector contexts to report. */
void hx_platform_resources(hx_json *j) {
    hx_json_obj(j, "resources");
    hx_json_str(j, "platform", "posix");
    hx_json_null(j, "power_votes");
    hx_json_null(j, "power_votes_refused");
    hx_json_null(j, "threads");
    hx_json_null(j, "vtcm");
    hx_json_null(j, "hmx");
    hx_json_null(j, "udma");
    hx_json_null(j, "hvx");
    /* none of its own; a stand-in's injected device failure (the loopback
     * skel) is reported as the cDSP reports one */
    if (hx_failure()) hx_json_str(j, "device_failure", hx_failure());
    else hx_json_null(j, "device_failure");
    hx_json_bool(j, "fallbacks_allowed", 0);
    hx_json_u64(j, "fallbacks", 0);
    hx_json_close(j, '}');
}
