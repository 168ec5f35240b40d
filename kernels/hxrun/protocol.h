/* The measurement protocol: metadata, verification round, warm-up and
 * measured rounds in a seeded random order, one record per trial; the
 * records' format is a reporter's (report.h). */
#ifndef HX_PROTOCOL_H
#define HX_PROTOCOL_H
#include <stdio.h>
#include "exec.h"

struct hx_reporter;
/* Runs the protocol and writes its records as JSON Lines to out.  Returns
 * the process exit status: 0 ok, 4 checksum mismatch, 6 preempted, 7 the
 * executor's failure at the end, 1 other failure (err). */
int hx_protocol_run(hx_exec *x, FILE *out, char *err, size_t errlen);
/* The same with the records going to another reporter. */
int hx_protocol_report(hx_exec *x, struct hx_reporter *rep, char *err, size_t errlen);
#endif
