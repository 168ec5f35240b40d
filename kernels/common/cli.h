/* Command-line helpers shared by the runners (hxrun, hxgraph, hxserve). */
#ifndef HX_CLI_H
#define HX_CLI_H

/* Strict integer: the whole of s is one integer in base `base` (0: C
 * prefixes, 0x.. and 0..), without overflow, within [lo, hi].  Returns 0 and
 * sets *out, or -1; the caller words the error, naming its option. */
int hx_parse_ll(const char *s, int base, long long lo, long long hi, long long *out);
#endif
