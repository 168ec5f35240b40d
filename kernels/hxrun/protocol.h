/* The measurement protocol: metadata, verification round, warm-up and
 * measured rounds in a seeded random order, one JSON record per trial. */
#ifndef HX_PROTOCOL_H
#define HX_PROTOCOL_H
#include <stdio.h>
#include "exec.h"

/* Returns the process exit status: 0 ok, 4 checksum mismatch, 1 other failure. */
int hx_protocol_run(hx_exec *x, FILE *out, char *err, size_t errlen);
void hx_write_meta(hx_exec *x, FILE *out);
#endif
