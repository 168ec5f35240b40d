/* Command-line helpers shared by the runners. */
#include "cli.h"
#include <errno.h>
#include <stdlib.h>

int hx_parse_ll(const char *s, int base, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, base);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}
