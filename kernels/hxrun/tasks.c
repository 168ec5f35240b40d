/* The three tasks: their data, preparation, buffer plan, declared ranges and
 * the work each performs.  Each task owns its inputs, outputs and scratch. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "exec.h"
#include "rng.h"

static float uniform(uint64_t *s, float lo, float hi) {
    return lo + (hi - lo) * (float)((hx_splitmix64(s) >> 40) * (1.0 / 16777216.0));
}
static void fill_bytes(uint64_t *s, void *p, size_t n) {
    uint8_t *b = (uint8_t *)p;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t r = hx_splitmix64(s);
        memcpy(b + i, &r, n - i < 8 ? n - i : 8);
    }
}

static void *must_alloc(size_t bytes, const char *what, char *err, size_t errlen) {
    void *p = hx_alloc(bytes, 128);
    if (!p) snprintf(err, errlen, "cannot allocate %zu bytes for %s", bytes, what);
    return p;
}

/* Busy-wait for the calibration tasks.  Thread CPU time, not wall time: if
 * the OS serialises two "concurrent" busy-waits on one core, the measurement
 * must show it.  With checkpoints, the wait runs in equal blocks of CPU time
 * (the work done counts its ns). */
static void busy_wait(uint64_t ns) {
    uint64_t start = hx_thread_cpu_ns();
    while (hx_thread_cpu_ns() - start < ns) hx_cpu_relax();
}

static void work_calibrated(hx_exec *x, hx_worker_rec *w, uint64_t ns) {
    int K = x->cfg->checkpoints;
    if (!K) {
        busy_wait(ns);
        return;
    }
    hx_ckpt(x, w, 0, ns);
    for (int b = 1; b <= K; b++) {
        uint64_t done = ns * (uint64_t)b / (uint64_t)K;
        busy_wait(done - ns * (uint64_t)(b - 1) / (uint64_t)K);
        hx_ckpt(x, w, done, ns);
    }
}

/* The GEMM over rows [r0, r1) of C; the whole matrix through the plain
 * entries (rows 0): --m-tile given selects the backend's tiled entry
 * (main checked it exists). */
static void gemm_rows(hx_exec *x, int r0, int r1, int rows) {
    const hx_config *c = x->cfg;
    const hx_kernels *k = x->kern;
    int kc = c->m_tile_set ? c->m_tile : 0;
    if (c->precision == HX_FP32) {
        float *C = (float *)x->m.C;
        if (rows) k->gemm_f32_run_rows(x->m.prep, C, c->m, c->n, c->k, kc, r0, r1);
        else if (c->m_tile_set) k->gemm_f32_run_kc(x->m.prep, C, c->m, c->n, c->k, c->m_tile);
        else k->gemm_f32_run(x->m.prep, C, c->m, c->n, c->k);
    } else {
        int32_t *C = (int32_t *)x->m.C;
        if (rows) k->gemm_u8i8_run_rows(x->m.prep, C, c->m, c->n, c->k, kc, r0, r1);
        else if (c->m_tile_set) k->gemm_u8i8_run_kc(x->m.prep, C, c->m, c->n, c->k, c->m_tile);
        else k->gemm_u8i8_run(x->m.prep, C, c->m, c->n, c->k);
    }
}

/* M in blocks of rows of C, a checkpoint after each.  A backend without a
 * row-range entry runs the GEMM whole: its checkpoints are begin and end. */
static void work_m(hx_exec *x, hx_worker_rec *w) {
    const hx_config *c = x->cfg;
    const hx_kernels *k = x->kern;
    int rows = c->precision == HX_FP32 ? k->gemm_f32_run_rows != NULL : k->gemm_u8i8_run_rows != NULL;
    if (!c->checkpoints) {
        gemm_rows(x, 0, c->m, 0);
        return;
    }
    hx_ckpt(x, w, 0, (uint64_t)c->m);
    int blk = rows ? hx_ckpt_block(c->m, k->gemm_rows_align, c->checkpoints) : c->m;
    for (int r0 = 0; r0 < c->m; r0 += blk) {
        int r1 = r0 + blk < c->m ? r0 + blk : c->m;
        gemm_rows(x, r0, r1, rows);
        hx_ckpt(x, w, (uint64_t)r1, (uint64_t)c->m);
    }
}

/* D: one chain per checkpoint block (build_chain ends a chain at every block
 * and, double-buffered, at every window), a checkpoint after each block.
 * Double-buffered, window w lands in scratch buffer w % 2; the second buffer
 * is acquired when the stream first needs it, so a slot another task freed
 * by then (V's, released at completion) can be counted against it: the
 * scratch peak shows what early release buys.  Released with D's own slot. */
static void work_d(hx_exec *x, hx_worker_rec *w) {
    const hx_config *cfg = x->cfg;
    uint64_t total = 0, done = 0;
    for (int i = 0; i < x->d.ndesc; i++) total += (uint64_t)x->d.chain[i].rows * x->d.chain[i].row_bytes;
    if (cfg->checkpoints) hx_ckpt(x, w, 0, total);
    for (int i = 0; i < x->d.ndesc;) {
        if (cfg->d_buffers == 2 && i == x->d.per_window && hx_arena_reserve(&x->arena, HX_BIT(HX_SLOT_D2)) != 0)
            fprintf(stderr, "hxrun: internal error: D's second scratch window reserved twice\n");
        const hx_copy_desc *d = &x->d.chain[i];
        x->kern->copy2d(d);
        for (; d; d = d->next, i++) done += (uint64_t)d->rows * d->row_bytes;
        if (cfg->checkpoints && (i % x->d.per_block == 0 || i == x->d.ndesc)) hx_ckpt(x, w, done, total);
    }
}

/* Rows [r0, r1) of V's array. */
static void v_rows(hx_exec *x, int r0, int r1) {
    const hx_config *cfg = x->cfg;
    if (cfg->precision == HX_FP32 && cfg->v_variant == HX_V_STREAM)
        x->v.stream_f32((const float *)x->v.x, (float *)x->v.y, (float *)x->v.rowsum, (float *)x->v.rowmax, cfg->v_cols,
                        cfg->v_passes, r0, r1);
    else if (cfg->precision == HX_FP32)
        x->kern->vec_f32((const float *)x->v.x, (float *)x->v.y, (float *)x->v.rowsum, (float *)x->v.rowmax,
                         cfg->v_cols, cfg->v_passes, r0, r1);
    else
        x->kern->vec_i16((const int16_t *)x->v.x, (int16_t *)x->v.y, (int32_t *)x->v.rowsum, (int16_t *)x->v.rowmax,
                         cfg->v_cols, cfg->v_passes, r0, r1);
}

/* Rows [r0, r1) of V on the calling thread, recorded in rec (exec_device.c
 * splits V over the entry thread and the extra vector workers with it).
 * The rows run in blocks with a checkpoint after each (rows are
 * independent, so the blocks change no output); the work done counts rows
 * of the whole array, so a worker's last checkpoint is its share of V. */
void hx_task_work_v_rows(hx_exec *x, int r0, int r1, hx_worker_rec *rec) {
    int K = x->cfg->checkpoints;
    if (!K) {
        v_rows(x, r0, r1);
        return;
    }
    uint64_t total = (uint64_t)x->cfg->v_rows;
    int blk = hx_ckpt_block(r1 - r0, 1, K);
    hx_ckpt(x, rec, 0, total);
    for (int r = r0; r < r1; r += blk) {
        int e = r + blk < r1 ? r + blk : r1;
        v_rows(x, r, e);
        hx_ckpt(x, rec, (uint64_t)(e - r0), total);
    }
}

void hx_task_work(hx_task *t) {
    hx_exec *x = t->x;
    if (t->empty) return;
    if (t->calib_ns) {
        work_calibrated(x, t->rec, t->calib_ns);
        return;
    }
    switch (t->id) {
    case HX_M: work_m(x, t->rec); break;
    case HX_V: hx_task_work_v_rows(x, 0, x->cfg->v_rows, t->rec); break;
    case HX_D: work_d(x, t->rec); break;
    }
}

void hx_task_poison(hx_task *t) {
    for (int j = 0; j < t->nout; j++) memset(t->out[j], 0xA5, t->out_bytes[j]);
}

uint64_t hx_task_checksum(const hx_task *t) {
    uint64_t h = 0;
    for (int j = 0; j < t->nout; j++) h += hx_checksum(t->out[j], t->out_bytes[j]) * (uint64_t)(2 * j + 1);
    return h;
}

static int setup_m(hx_exec *x, uint64_t *rng, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    size_t mk = (size_t)c->m * c->k, kn = (size_t)c->k * c->n, mn = (size_t)c->m * c->n;
    if (c->precision == HX_FP32) {
        float *A = must_alloc(mk * 4, "M.A", err, errlen), *B = A ? must_alloc(kn * 4, "M.B", err, errlen) : NULL;
        if (!B) return -1;
        for (size_t i = 0; i < mk; i++) A[i] = uniform(rng, -1.f, 1.f);
        for (size_t i = 0; i < kn; i++) B[i] = uniform(rng, -1.f, 1.f);
        x->m.A = A, x->m.B = B;
        x->m.prep_bytes = x->kern->gemm_f32_prep_bytes(c->m, c->n, c->k);
        x->m.C = must_alloc(mn * 4, "M.C", err, errlen);
    } else {
        uint8_t *A = must_alloc(mk, "M.A", err, errlen);
        int8_t *B = A ? must_alloc(kn, "M.B", err, errlen) : NULL;
        if (!B) return -1;
        fill_bytes(rng, A, mk);
        fill_bytes(rng, B, kn);
        x->m.A = A, x->m.B = B;
        x->m.prep_bytes = x->kern->gemm_u8i8_prep_bytes(c->m, c->n, c->k);
        x->m.C = must_alloc(mn * 4, "M.C", err, errlen);
    }
    if (!x->m.C || !(x->m.prep = must_alloc(x->m.prep_bytes, "M prepared layout", err, errlen))) return -1;
    /* Layout preparation is outside the timed region, and timed on its own. */
    uint64_t t0 = hx_now_ns();
    if (c->precision == HX_FP32) x->kern->gemm_f32_prepare(x->m.A, x->m.B, c->m, c->n, c->k, x->m.prep);
    else x->kern->gemm_u8i8_prepare(x->m.A, x->m.B, c->m, c->n, c->k, x->m.prep);
    x->m.prep_ns = hx_now_ns() - t0;
    return 0;
}

static size_t v_array_bytes(const hx_config *c) { return (size_t)c->v_rows * c->v_cols * hx_elem_bytes_v(c); }

static int setup_v_buffers(hx_exec *x, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    size_t ab = v_array_bytes(c);
    if (x->v.in_scratch) {
        x->v.x = hx_arena_slot(&x->arena, HX_V);
        x->v.y = (uint8_t *)x->v.x + ((ab + 63) & ~(size_t)63);
    } else {
        x->v.x = must_alloc(ab, "V.x", err, errlen);
        x->v.y = x->v.x ? must_alloc(ab, "V.y", err, errlen) : NULL;
        if (!x->v.y) return -1;
    }
    x->v.rowsum = must_alloc((size_t)c->v_rows * 4, "V.rowsum", err, errlen);
    x->v.rowmax = x->v.rowsum ? must_alloc((size_t)c->v_rows * hx_elem_bytes_v(c), "V.rowmax", err, errlen) : NULL;
    return x->v.rowmax ? 0 : -1;
}

static void fill_v(hx_exec *x, uint64_t *rng) {
    const hx_config *c = x->cfg;
    size_t n = (size_t)c->v_rows * c->v_cols;
    if (c->precision == HX_FP32)
        for (size_t i = 0; i < n; i++) ((float *)x->v.x)[i] = uniform(rng, -6.f, 6.f);
    else fill_bytes(rng, x->v.x, n * 2);
}

/* Scratch buffer b (0 or 1) of D's double buffering. */
static uint8_t *d_buffer(hx_exec *x, int b) { return b ? hx_arena_slot(&x->arena, HX_SLOT_D2) : x->d.dst; }

static int setup_d(hx_exec *x, uint64_t *rng, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    x->d.dst_stride = c->d_row_bytes;
    /* The DDR source holds d_repeat windows of d_rows rows; all of them
     * stream through the one scratch window (a VTCM tile buffer). */
    x->d.src_bytes = (size_t)c->d_rows * c->d_src_stride * (size_t)c->d_repeat;
    x->d.dst_bytes = (size_t)c->d_rows * c->d_row_bytes;
    x->d.src = must_alloc(x->d.src_bytes, "D.src (DDR)", err, errlen);
    if (!x->d.src) return -1;
    fill_bytes(rng, x->d.src, x->d.src_bytes);
    x->d.dst = hx_arena_slot(&x->arena, HX_D);
    return 0;
}

/* Descriptor chain: one 2-D descriptor per d_desc_rows rows of each window,
 * linked within a checkpoint block; window w of the source lands on the same scratch rows as window 0,
 * so after the chain the scratch holds the last window.  Double-buffered:
 * window w lands in buffer w % 2 and each window is its own chain (the
 * engine acquires the second buffer between windows). */
static int build_chain(hx_exec *x, char *err, size_t errlen) {
    const hx_config *c = x->cfg;
    int per = (c->d_rows + c->d_desc_rows - 1) / c->d_desc_rows;
    int n = per * c->d_repeat;
    x->d.chain = must_alloc(sizeof(hx_copy_desc) * (size_t)n, "D descriptors", err, errlen);
    if (!x->d.chain) return -1;
    /* Checkpoint blocks of descriptors; without checkpoints one block (the
     * chain is linked through, as before). */
    x->d.per_block = hx_ckpt_block(n, 1, c->checkpoints);
    for (int i = 0; i < n; i++) {
        int w = i / per, r0 = (i % per) * c->d_desc_rows;
        int rows = c->d_rows - r0 < c->d_desc_rows ? c->d_rows - r0 : c->d_desc_rows;
        int linked = i + 1 < n && (i + 1) % x->d.per_block != 0 && (c->d_buffers == 1 || (i + 1) % per != 0);
        x->d.chain[i] = (hx_copy_desc){x->d.src + ((size_t)w * c->d_rows + r0) * c->d_src_stride,
                                       d_buffer(x, c->d_buffers == 2 ? w % 2 : 0) + (size_t)r0 * x->d.dst_stride,
                                       (uint32_t)rows,
                                       (uint32_t)c->d_row_bytes,
                                       (uint32_t)c->d_src_stride,
                                       (uint32_t)x->d.dst_stride,
                                       linked ? &x->d.chain[i + 1] : NULL};
    }
    x->d.ndesc = n;
    x->d.per_window = per;
    /* D's output: the buffer holding the last window (the same bytes as with
     * one buffer, so checksums agree across --d-buffers). */
    x->d.out = d_buffer(x, c->d_buffers == 2 ? (c->d_repeat - 1) % 2 : 0);
    return 0;
}

static void declare_ranges(hx_exec *x) {
    const hx_config *c = x->cfg;
    hx_task *M = &x->task[HX_M], *V = &x->task[HX_V], *D = &x->task[HX_D];
    size_t ab = v_array_bytes(c);
    M->ranges.task = "M";
    hx_ranges_add(&M->ranges, "M.prepared", x->m.prep, x->m.prep_bytes, HX_READ);
    hx_ranges_add(&M->ranges, "M.C", x->m.C, (size_t)c->m * c->n * 4, HX_WRITE);
    V->ranges.task = "V";
    hx_ranges_add(&V->ranges, "V.x", x->v.x, ab, x->v.in_scratch ? HX_SCRATCH : HX_READ);
    hx_ranges_add(&V->ranges, "V.y", x->v.y, ab, x->v.in_scratch ? HX_SCRATCH : HX_WRITE);
    hx_ranges_add(&V->ranges, "V.rowsum", x->v.rowsum, (size_t)c->v_rows * 4, HX_WRITE);
    hx_ranges_add(&V->ranges, "V.rowmax", x->v.rowmax, (size_t)c->v_rows * hx_elem_bytes_v(c), HX_WRITE);
    D->ranges.task = "D";
    hx_ranges_add(&D->ranges, "D.src", x->d.src, x->d.src_bytes, HX_READ);
    hx_ranges_add(&D->ranges, "D.dst", x->d.dst, x->d.dst_bytes, HX_SCRATCH);
    if (c->d_buffers == 2) hx_ranges_add(&D->ranges, "D.dst2", d_buffer(x, 1), x->d.dst_bytes, HX_SCRATCH);
}

int hx_tasks_prepare(hx_exec *x, char *err, size_t errlen) {
    const hx_config *cfg = x->cfg;
    const hx_kernels *k = x->kern;
    uint64_t rng = cfg->seed;

    /* The buffer plan: one slot per task, shared by every group, and D's
     * second window when it is double-buffered. */
    x->v.in_scratch = cfg->v_variant == HX_V_ONCHIP;
    size_t vab = (v_array_bytes(cfg) + 63) & ~(size_t)63;
    size_t dwin = (size_t)cfg->d_rows * cfg->d_row_bytes;
    const char *names[HX_NSLOTS] = {"M", "V", "D", "D.buffer2"};
    size_t bytes[HX_NSLOTS] = {0, x->v.in_scratch ? 2 * vab : 0, dwin, cfg->d_buffers == 2 ? dwin : 0};
    if (hx_arena_plan(&x->arena, cfg->scratch_bytes, HX_NSLOTS, names, bytes, err, errlen) != 0) return -3;

    if (setup_m(x, &rng, err, errlen) || setup_v_buffers(x, err, errlen) || setup_d(x, &rng, err, errlen) ||
        build_chain(x, err, errlen))
        return -1;
    if (k->copy2d_prepare) k->copy2d_prepare(x->d.chain, (size_t)x->d.ndesc);
    if (hx_failure()) { /* a device kernel could not be prepared (reported, platform.h): before any trial */
        snprintf(err, errlen, "%s", hx_failure());
        return -1;
    }
    fill_v(x, &rng);
    x->v.stream_is_ref = !k->vec_stream_f32;
    x->v.stream_f32 = k->vec_stream_f32 ? k->vec_stream_f32 : hx_kernels_ref.vec_stream_f32;

    /* Test hooks: alias real buffers so the real check must catch them. */
    if (cfg->inject == HX_INJECT_V_OUT_M_OUT) x->v.y = x->m.C;
    if (cfg->inject == HX_INJECT_D_DST_V_SCRATCH) x->d.dst = x->v.in_scratch ? (uint8_t *)x->v.x : (uint8_t *)x->v.y;
    declare_ranges(x);

    hx_task *M = &x->task[HX_M], *V = &x->task[HX_V], *D = &x->task[HX_D];
    for (int i = 0; i < HX_NTASKS; i++) {
        hx_task *t = &x->task[i];
        t->id = i;
        t->x = x;
        t->slot_mask = bytes[i] ? HX_BIT(i) : 0;
        t->calib_ns = cfg->calibrate ? (uint64_t)(cfg->calib_us[i] * 1000.0) : 0;
    }
    M->nout = 1, M->out[0] = x->m.C, M->out_bytes[0] = (size_t)cfg->m * cfg->n * 4;
    V->nout = 3, V->out[0] = x->v.y, V->out_bytes[0] = v_array_bytes(cfg);
    V->out[1] = x->v.rowsum, V->out_bytes[1] = (size_t)cfg->v_rows * 4;
    V->out[2] = x->v.rowmax, V->out_bytes[2] = (size_t)cfg->v_rows * hx_elem_bytes_v(cfg);
    D->nout = 1, D->out[0] = x->d.out, D->out_bytes[0] = x->d.dst_bytes;
    /* the second window is reserved inside D's work, released with D's slot */
    D->lazy_mask = cfg->d_buffers == 2 ? HX_BIT(HX_SLOT_D2) : 0;

    /* Reject a conflicting plan before any thread starts or any trial runs. */
    const hx_range_set *sets[HX_NTASKS] = {&M->ranges, &V->ranges, &D->ranges};
    if (hx_ranges_check(sets, HX_NTASKS, err, errlen) != 0) return -3;
    return 0;
}

void hx_tasks_free(hx_exec *x) {
    hx_free(x->m.A), hx_free(x->m.B), hx_free(x->m.prep), hx_free(x->m.C);
    if (!x->v.in_scratch) hx_free(x->v.x), hx_free(x->v.y);
    hx_free(x->v.rowsum), hx_free(x->v.rowmax);
    hx_free(x->d.src), hx_free(x->d.chain);
    hx_arena_free(&x->arena);
}
