/* What each graph node computes (fp32; numpy references in hxfuse/graphs.py).
 * M nodes use the backend's GEMM with its packing done inside the node: in a
 * graph the activations are produced at run time, so their layout
 * preparation cannot be hoisted out of the run. */
#include <math.h>
#include <string.h>
#include "graph.h"
#include "platform.h"

uint8_t *hxg_buf_ptr(const hxg_graph *g, uint8_t *arena, int b) { return arena + g->buf[b].offset; }

static float *in_f(const hxg_node *nd, uint8_t *arena, int i) {
    return (float *)hxg_buf_ptr(nd->x->g, arena, nd->in[i]);
}

static void gemm(hxg_node *nd, uint8_t *arena, const hx_kernels *k) {
    const float *A = in_f(nd, arena, 0), *B = in_f(nd, arena, 1);
    float *C = (float *)hxg_buf_ptr(nd->x->g, arena, nd->out[0]);
    uint64_t t0 = hx_now_ns();
    size_t prep = k->gemm_f32_prep_bytes(nd->m, nd->n, nd->k);
    if (nd->trans_b) { /* B given as n x k: transpose into the workspace first */
        float *Bt = (float *)(nd->priv + prep);
        for (int j = 0; j < nd->n; j++)
            for (int p = 0; p < nd->k; p++) Bt[(size_t)p * nd->n + j] = B[(size_t)j * nd->k + p];
        B = Bt;
    }
    k->gemm_f32_prepare(A, B, nd->m, nd->n, nd->k, nd->priv);
    nd->pack_ns = hx_now_ns() - t0;
    k->gemm_f32_run(nd->priv, C, nd->m, nd->n, nd->k);
}

static float silu1(float v) { return v / (1.0f + expf(-v)); }

/* Comparisons rather than fminf/fmaxf: without -ffinite-math-only those are
 * libm calls per element (5 ns each here), these vectorise. */
static inline float max_f(float a, float b) { return a > b ? a : b; }
static inline float relu6_f(float v) {
    v = v < 0.0f ? 0.0f : v;
    return v > 6.0f ? 6.0f : v;
}

static void softmax(const float *x, float *y, int rows, int cols, float scale) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * cols;
        float *yr = y + (size_t)r * cols, mx = -INFINITY, s = 0.0f;
        for (int c = 0; c < cols; c++) mx = max_f(mx, scale * xr[c]);
        for (int c = 0; c < cols; c++) s += (yr[c] = expf(scale * xr[c] - mx));
        float inv = 1.0f / s;
        for (int c = 0; c < cols; c++) yr[c] *= inv;
    }
}

/* 3x3 neighbourhoods, stride 1, padding 1, HWC layout. */
static void maxpool3(const float *x, float *y, int H, int W, int C) {
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
            float *o = y + ((size_t)i * W + j) * C;
            for (int c = 0; c < C; c++) o[c] = -INFINITY;
            for (int di = -1; di <= 1; di++)
                for (int dj = -1; dj <= 1; dj++) {
                    int a = i + di, b = j + dj;
                    if (a < 0 || a >= H || b < 0 || b >= W) continue;
                    const float *p = x + ((size_t)a * W + b) * C;
                    for (int c = 0; c < C; c++) o[c] = max_f(o[c], p[c]);
                }
        }
}

/* Row (i, j) of the output holds the 3x3 patch around (i, j) in (dy, dx, c)
 * order, zeros outside: a 3x3 convolution becomes a GEMM with 9C rows of
 * weights. */
static void im2col3(const float *x, float *y, int H, int W, int C) {
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
            float *o = y + ((size_t)i * W + j) * 9 * C;
            for (int di = -1; di <= 1; di++)
                for (int dj = -1; dj <= 1; dj++, o += C) {
                    int a = i + di, b = j + dj;
                    if (a < 0 || a >= H || b < 0 || b >= W) memset(o, 0, (size_t)C * 4);
                    else memcpy(o, x + ((size_t)a * W + b) * C, (size_t)C * 4);
                }
        }
}

/* Depthwise 3x3 (weights 9 x C in (dy, dx) order), padding 1, optional ReLU6. */
static void dwconv3(const float *x, const float *w, float *y, int H, int W, int C, int relu6) {
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
            float *o = y + ((size_t)i * W + j) * C;
            for (int c = 0; c < C; c++) o[c] = 0.0f;
            for (int di = -1; di <= 1; di++)
                for (int dj = -1; dj <= 1; dj++) {
                    int a = i + di, b = j + dj;
                    if (a < 0 || a >= H || b < 0 || b >= W) continue;
                    const float *p = x + ((size_t)a * W + b) * C, *wk = w + (size_t)((di + 1) * 3 + dj + 1) * C;
                    for (int c = 0; c < C; c++) o[c] += p[c] * wk[c];
                }
            if (relu6)
                for (int c = 0; c < C; c++) o[c] = relu6_f(o[c]);
        }
}

void hxg_node_run(hxg_node *nd, uint8_t *arena, const hx_kernels *k) {
    const hxg_graph *g = nd->x->g;
    float *y = (float *)hxg_buf_ptr(g, arena, nd->out[0]);
    size_t n = (size_t)nd->rows * nd->cols;
    nd->pack_ns = 0;
    switch (nd->op) {
    case HXG_GEMM: gemm(nd, arena, k); break;
    case HXG_SILU: { /* the V task's SiLU kernel, one pass; its row reductions go to the workspace */
        float *rs = (float *)nd->priv, *rm = rs + nd->rows;
        k->vec_f32(in_f(nd, arena, 0), y, rs, rm, nd->cols, 1, 0, nd->rows);
        break;
    }
    case HXG_RELU6: {
        const float *x = in_f(nd, arena, 0);
        for (size_t i = 0; i < n; i++) y[i] = relu6_f(x[i]);
        break;
    }
    case HXG_ADD: {
        const float *a = in_f(nd, arena, 0), *b = in_f(nd, arena, 1);
        for (size_t i = 0; i < n; i++) y[i] = a[i] + b[i];
        break;
    }
    case HXG_SWIGLU: {
        const float *a = in_f(nd, arena, 0), *b = in_f(nd, arena, 1);
        for (size_t i = 0; i < n; i++) y[i] = silu1(a[i]) * b[i];
        break;
    }
    case HXG_SOFTMAX: softmax(in_f(nd, arena, 0), y, nd->rows, nd->cols, nd->scale); break;
    case HXG_MAXPOOL3: maxpool3(in_f(nd, arena, 0), y, nd->h, nd->w, nd->c); break;
    case HXG_IM2COL3: im2col3(in_f(nd, arena, 0), y, nd->h, nd->w, nd->c); break;
    case HXG_DWCONV3: dwconv3(in_f(nd, arena, 0), in_f(nd, arena, 1), y, nd->h, nd->w, nd->c, nd->relu6); break;
    case HXG_COPY: { /* one descriptor of the copy engine's 2-D chain */
        hx_copy_desc d = {hxg_buf_ptr(g, arena, nd->in[0]) + nd->d_src_off,
                          (uint8_t *)y + nd->d_dst_off,
                          (uint32_t)nd->d_rows,
                          (uint32_t)nd->d_row_bytes,
                          (uint32_t)nd->d_src_stride,
                          (uint32_t)nd->d_dst_stride,
                          NULL};
        k->copy2d(&d);
        break;
    }
    default: break;
    }
}
