/* Command-line helpers shared by the runners. */
#include "cli.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hx_parse_ll(const char *s, int base, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, base);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int hx_parse_groups(const char *s, uint32_t *mask) {
    uint32_t m = 0;
    for (const char *p = s; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 1 && *p >= 'A' && *p <= 'D') m |= 1u << (*p - 'A');
        else if (len) return -1;
        p += len + (end != NULL);
    }
    if (!m) return -1;
    *mask = m;
    return 0;
}

int hx_parse_wait(const char *s, hx_wait_strategy *out) {
    if (!strcmp(s, "spin")) *out = HX_WAIT_SPIN;
    else if (!strcmp(s, "spin-block")) *out = HX_WAIT_SPIN_BLOCK;
    else return -1;
    return 0;
}
