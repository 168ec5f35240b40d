/* The service mode's data and work: seeded inputs per (kind, size, pool
 * index), prepared before the replay (as a server holds its weights ready),
 * one output buffer set per request (so concurrent requests never share
 * memory), the three task bodies, checksums and .npy dumps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "npy.h"
#include "platform.h"
#include "rng.h"
#include "serve.h"

uint64_t sv_now(const sv_run *s) { return hx_now_ns() - s->origin; }

static float uniform(uint64_t *st, float lo, float hi) {
    return lo + (hi - lo) * (float)((hx_splitmix64(st) >> 40) * (1.0 / 16777216.0));
}

static void *zalloc(size_t bytes, const char *what, char *err, size_t errlen) {
    void *p = hx_alloc(bytes ? bytes : 64, 128);
    if (!p) snprintf(err, errlen, "cannot allocate %zu bytes for %s", bytes, what);
    else memset(p, 0, bytes);
    return p;
}

/* The decode-like GEMV, y = W x, fp32.  Eight partial sums per row in a
 * fixed order: the compiler can vectorise it, and the result does not depend
 * on the run (equal inputs give equal checksums in every replay). */
static void gemv_f32(const float *W, const float *x, float *y, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        const float *w = W + (size_t)r * cols;
        float acc[8] = {0};
        int c = 0;
        for (; c + 8 <= cols; c += 8)
            for (int l = 0; l < 8; l++) acc[l] += w[c + l] * x[c + l];
        float sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; c < cols; c++) sum += w[c] * x[c];
        y[r] = sum;
    }
}

static void task_run(hx_job *job, hx_engine *e) {
    (void)e;
    sv_task *t = (sv_task *)job;
    sv_run *s = t->s;
    sv_req *r = t->r;
    const sv_params *p = s->p;
    const sv_input *in = r->in;
    uint64_t c0 = hx_thread_cpu_ns();
    t->begin = sv_now(s);
    switch (t->kind) {
    case SV_T_GEMM: s->k->gemm_f32_run(in->prep, (float *)r->out0, r->size, p->gemm_n, p->gemm_k); break;
    case SV_T_GEMV:
        gemv_f32((const float *)in->a, (const float *)in->b, (float *)r->out0, r->size, p->gemv_cols);
        break;
    case SV_T_COPY: {
        hx_copy_desc d = {in->src,
                          (uint8_t *)r->out1,
                          (uint32_t)r->size,
                          (uint32_t)p->copy_row_bytes,
                          (uint32_t)p->copy_src_stride,
                          (uint32_t)p->copy_row_bytes,
                          NULL};
        s->k->copy2d(&d);
        break;
    }
    }
    t->end = sv_now(s);
    t->cpu_ns = hx_thread_cpu_ns() - c0;
    hx_event_signal(&t->done);
    hx_counter_bump(&s->doorbell);
}

static sv_input *find_input(sv_run *s, int kind, int size, int pool) {
    for (int i = 0; i < s->ninputs; i++) {
        sv_input *in = &s->inputs[i];
        if (in->kind == kind && in->size == size && in->pool == pool) return in;
    }
    return NULL;
}

static int make_input(sv_run *s, sv_input *in, char *err, size_t errlen) {
    const sv_params *p = s->p;
    /* Each input has its own stream, so it does not depend on the trace's
     * order or on the other inputs. */
    uint64_t st =
        p->seed ^ (0x51ED27ull * (uint64_t)(in->kind + 1)) ^ ((uint64_t)in->size << 20) ^ ((uint64_t)in->pool << 40);
    hx_splitmix64(&st);
    if (in->kind == SV_COMPUTE) {
        size_t mk = (size_t)in->size * p->gemm_k, kn = (size_t)p->gemm_k * p->gemm_n;
        float *A = zalloc(mk * 4, "compute input A", err, errlen);
        float *B = A ? zalloc(kn * 4, "compute input B", err, errlen) : NULL;
        in->a = A, in->b = B;
        if (!B) return -1;
        for (size_t i = 0; i < mk; i++) A[i] = uniform(&st, -1.f, 1.f);
        for (size_t i = 0; i < kn; i++) B[i] = uniform(&st, -1.f, 1.f);
        size_t pb = s->k->gemm_f32_prep_bytes(in->size, p->gemm_n, p->gemm_k);
        if (!(in->prep = zalloc(pb, "compute prepared layout", err, errlen))) return -1;
        s->k->gemm_f32_prepare(A, B, in->size, p->gemm_n, p->gemm_k, in->prep);
    } else {
        size_t wn = (size_t)in->size * p->gemv_cols, sb = (size_t)in->size * p->copy_src_stride;
        float *W = zalloc(wn * 4, "bandwidth input W", err, errlen);
        float *x = W ? zalloc((size_t)p->gemv_cols * 4, "bandwidth input x", err, errlen) : NULL;
        in->a = W, in->b = x;
        if (!x || !(in->src = zalloc(sb, "copy source", err, errlen))) return -1;
        for (size_t i = 0; i < wn; i++) W[i] = uniform(&st, -1.f, 1.f);
        for (int i = 0; i < p->gemv_cols; i++) x[i] = uniform(&st, -1.f, 1.f);
        for (size_t i = 0; i < sb; i += 8) {
            uint64_t v = hx_splitmix64(&st);
            memcpy(in->src + i, &v, sb - i < 8 ? sb - i : 8);
        }
    }
    return 0;
}

int sv_setup(sv_run *s, const sv_params *p, const sv_trace *t, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->p = p;
    s->k = hx_kernels_fast();
    s->trace = t;
    s->origin = hx_now_ns();
    /* Engines sleep when idle (a short spin first): on a small machine a
     * spinning idle engine would take the core a busy one needs. */
    s->engine_wait.strategy = HX_WAIT_SPIN_BLOCK;
    s->engine_wait.spin_ns = 20000;
    int nsizes[SV_NKINDS] = {0};
    int sizes[SV_NKINDS][SV_MAX_SIZES];
    for (int i = 0; i < t->n; i++) {
        int k = t->req[i].kind, sz = t->req[i].size, seen = 0;
        for (int j = 0; j < nsizes[k]; j++) seen |= sizes[k][j] == sz;
        if (seen) continue;
        if (nsizes[k] == SV_MAX_SIZES) {
            snprintf(err, errlen, "trace: more than %d distinct %s sizes (each size has its own prepared inputs)",
                     SV_MAX_SIZES, sv_kind_names[k]);
            return -1;
        }
        sizes[k][nsizes[k]++] = sz;
    }
    for (int k = 0; k < SV_NKINDS; k++)
        for (int j = 0; j < nsizes[k]; j++)
            for (int q = 0; q < p->pool; q++) {
                sv_input *in = &s->inputs[s->ninputs++];
                in->kind = k, in->size = sizes[k][j], in->pool = q;
                if (make_input(s, in, err, errlen)) return -1;
            }
    s->req = calloc((size_t)t->n, sizeof *s->req);
    if (!s->req) {
        snprintf(err, errlen, "cannot allocate %d requests", t->n);
        return -1;
    }
    for (int i = 0; i < t->n; i++) {
        const sv_trace_req *tr = &t->req[i];
        sv_req *r = &s->req[i];
        r->id = i, r->kind = tr->kind, r->size = tr->size;
        r->arrival = tr->arrival_ns, r->deadline = tr->deadline_ns;
        r->in = find_input(s, tr->kind, tr->size, i % p->pool);
        if (r->kind == SV_COMPUTE) {
            r->out0_bytes = (size_t)r->size * p->gemm_n * 4;
            r->ntasks = 1;
            r->task[0].kind = SV_T_GEMM, r->task[0].engine = &s->mx;
        } else {
            r->out0_bytes = (size_t)r->size * 4;
            r->out1_bytes = (size_t)r->size * p->copy_row_bytes;
            r->ntasks = 2;
            r->task[0].kind = SV_T_GEMV, r->task[0].engine = &s->vec;
            r->task[1].kind = SV_T_COPY, r->task[1].engine = &s->dma;
        }
        if (!(r->out0 = zalloc(r->out0_bytes, "request output", err, errlen))) return -1;
        if (r->out1_bytes && !(r->out1 = zalloc(r->out1_bytes, "request scratch window", err, errlen))) return -1;
        for (int j = 0; j < r->ntasks; j++) {
            r->task[j].job.run = task_run;
            r->task[j].s = s;
            r->task[j].r = r;
        }
    }
    if (hx_engine_start(&s->mx, "mx", -1, &s->engine_wait, err, errlen) ||
        hx_engine_start(&s->vec, "vec", -1, &s->engine_wait, err, errlen) ||
        hx_engine_start(&s->dma, "dma", -1, &s->engine_wait, err, errlen))
        return -1;
    return 0;
}

void sv_teardown(sv_run *s) {
    hx_engine_stop(&s->mx);
    hx_engine_stop(&s->vec);
    hx_engine_stop(&s->dma);
    for (int i = 0; i < s->ninputs; i++) {
        sv_input *in = &s->inputs[i];
        hx_free(in->a), hx_free(in->b), hx_free(in->prep), hx_free(in->src);
    }
    if (s->req)
        for (int i = 0; i < s->trace->n; i++) hx_free(s->req[i].out0), hx_free(s->req[i].out1);
    free(s->req);
}

/* Before every replay: outputs overwritten, so skipped work cannot pass the
 * checksum comparison with an earlier replay. */
void sv_poison_outputs(sv_run *s) {
    for (int i = 0; i < s->trace->n; i++) {
        sv_req *r = &s->req[i];
        memset(r->out0, 0xA5, r->out0_bytes);
        if (r->out1) memset(r->out1, 0xA5, r->out1_bytes);
    }
}

/* hx_task_checksum's rule over the request's outputs in order
 * (compute: C; bandwidth: y, then the scratch window). */
uint64_t sv_req_checksum(const sv_req *r) {
    uint64_t h = hx_checksum(r->out0, r->out0_bytes);
    if (r->out1) h += 3 * hx_checksum(r->out1, r->out1_bytes);
    return h;
}

static int dump(const char *dir, const char *name, const char *part, const char *dtype, int ndim, const size_t *shape,
                const void *data, size_t bytes, char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s_%s.npy", dir, name, part);
    if (hx_npy_write(path, dtype, ndim, shape, data, bytes) != 0) {
        snprintf(err, errlen, "cannot write %.3000s", path);
        return -1;
    }
    return 0;
}

int sv_dump_input(const sv_run *s, const sv_req *r, const char *dir, char *name, size_t namelen, char *err,
                  size_t errlen) {
    const sv_params *p = s->p;
    const sv_input *in = r->in;
    snprintf(name, namelen, "%s_s%d_p%d", sv_kind_names[r->kind], in->size, in->pool);
    size_t n = (size_t)in->size;
    if (r->kind == SV_COMPUTE) {
        size_t sa[2] = {n, (size_t)p->gemm_k}, sb[2] = {(size_t)p->gemm_k, (size_t)p->gemm_n},
               sc[2] = {n, (size_t)p->gemm_n};
        return dump(dir, name, "A", "<f4", 2, sa, in->a, sa[0] * sa[1] * 4, err, errlen) ||
                       dump(dir, name, "B", "<f4", 2, sb, in->b, sb[0] * sb[1] * 4, err, errlen) ||
                       dump(dir, name, "C", "<f4", 2, sc, r->out0, r->out0_bytes, err, errlen)
                   ? -1
                   : 0;
    }
    size_t sw[2] = {n, (size_t)p->gemv_cols}, sx[1] = {(size_t)p->gemv_cols}, sy[1] = {n},
           ss[2] = {n, (size_t)p->copy_src_stride}, sd[2] = {n, (size_t)p->copy_row_bytes};
    return dump(dir, name, "W", "<f4", 2, sw, in->a, sw[0] * sw[1] * 4, err, errlen) ||
                   dump(dir, name, "x", "<f4", 1, sx, in->b, sx[0] * 4, err, errlen) ||
                   dump(dir, name, "y", "<f4", 1, sy, r->out0, r->out0_bytes, err, errlen) ||
                   dump(dir, name, "src", "|u1", 2, ss, in->src, ss[0] * ss[1], err, errlen) ||
                   dump(dir, name, "dst", "|u1", 2, sd, r->out1, r->out1_bytes, err, errlen)
               ? -1
               : 0;
}
