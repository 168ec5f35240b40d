/* The host backend off x86-64 (AArch64 and others): the generic
 * vector-extension kernels under the build's -march, the only variant.
 * HXFUSE_HOST_ISA may name it (auto or generic); any other value is refused
 * before any work, as on x86-64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_host.h"

const hx_kernels *hx_kernels_fast(void) {
    static hx_kernels table;
    const char *want = getenv("HXFUSE_HOST_ISA");
    if (want && *want && strcmp(want, "auto") && strcmp(want, "generic")) {
        fprintf(stderr, "error: HXFUSE_HOST_ISA=%s: not an x86-64 build; only auto or generic here\n", want);
        exit(2);
    }
    table = hx_kernels_host_generic;
    table.choice = want && *want ? want : "auto";
    return &table;
}
