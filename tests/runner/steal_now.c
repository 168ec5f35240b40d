/* Prints the POSIX platform's steal reading (hx_steal_ns,
 * kernels/common/platform_posix_machine.c) in ns, for
 * tests/runner/test_steal_record.py to bracket with /proc/stat's own steal
 * column read before and after.
 *
 *   cc -std=gnu11 -D_GNU_SOURCE -Ikernels/common tests/runner/steal_now.c \
 *      kernels/common/platform_posix_machine.c */
#include <stdio.h>
#include "platform.h"

int main(void) {
    printf("%lld\n", (long long)hx_steal_ns());
    return 0;
}
