/* The in-process executor's clock and the progress checkpoints (exec.h).
 * A unit below both tasks.c (which stamps checkpoints while it computes)
 * and exec_device.c (which times the engines and runs the tasks), so that
 * neither depends on the other both ways.  hxrun-ap's driver has its own
 * clock (ap/exec_ap.c) and does not link this file. */
#include "exec.h"

uint64_t hx_exec_now(const hx_exec *x) { return hx_now_ns() - x->epoch; }

void hx_ckpt(hx_exec *x, hx_worker_rec *w, uint64_t done, uint64_t total) {
    if (w->nckpt >= HX_CKPT_CAP) return; /* unreachable: blocks are bounded by HX_MAX_CKPT */
    w->ckpt[w->nckpt] = hx_exec_now(x);
    w->ckpt_done[w->nckpt++] = done;
    w->ckpt_total = total;
}

int hx_ckpt_block(int units, int align, int blocks) {
    if (units <= 0) return 1;
    if (blocks <= 0) return units;
    if (align < 1) align = 1;
    int groups = (units + align - 1) / align;
    return (groups + blocks - 1) / blocks * align;
}
