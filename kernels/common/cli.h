/* Command-line helpers shared by the runners (hxrun, hxgraph, hxserve). */
#ifndef HX_CLI_H
#define HX_CLI_H
#include <stdint.h>
#include "event.h"

/* Strict integer: the whole of s is one integer in base `base` (0: C
 * prefixes, 0x.. and 0..), without overflow, within [lo, hi].  Returns 0 and
 * sets *out, or -1; the caller words the error, naming its option. */
int hx_parse_ll(const char *s, int base, long long lo, long long hi, long long *out);
/* --groups (hxrun, hxgraph): a comma list of A, B, C, D (empty items
 * skipped), as a bit mask (bit 0 = A).  Returns 0, or -1 for an unknown item
 * or no group at all; the caller words the error. */
int hx_parse_groups(const char *s, uint32_t *mask);
/* --wait (hxrun, hxgraph): spin or spin-block.  Returns 0 and sets *out, or
 * -1. */
int hx_parse_wait(const char *s, hx_wait_strategy *out);
#endif
