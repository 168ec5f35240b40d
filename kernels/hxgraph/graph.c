/* Graph files: reading, validation, the buffer plan and the conflict check.
 * Everything here runs before any work, so a bad graph costs nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph.h"
#include "graph_json.h"
#include "ranges.h"

const char *const hxg_op_names[HXG_NOPS] = {"gemm",    "silu",     "relu6",   "add",     "swiglu",
                                            "softmax", "maxpool3", "im2col3", "dwconv3", "copy"};
const char *const hxg_engine_names[HXG_NENG] = {"mx", "vec", "dma"};
const char hxg_class_names[HXG_NENG] = {'M', 'V', 'D'};

/* What each op takes: its engine, parameters ("?" marks an optional one),
 * and the roles of its input and output buffers. */
typedef struct {
    int engine;
    const char *params[7];
    const char *ins[HXG_MAX_ROLES], *outs[HXG_MAX_ROLES];
} opdef;

static const opdef OPS[HXG_NOPS] = {
    [HXG_GEMM] = {HXG_ENG_MX, {"m", "n", "k", "trans_b?"}, {"a", "b"}, {"c"}},
    [HXG_SILU] = {HXG_ENG_VEC, {"rows", "cols"}, {"x"}, {"y"}},
    [HXG_RELU6] = {HXG_ENG_VEC, {"rows", "cols"}, {"x"}, {"y"}},
    [HXG_ADD] = {HXG_ENG_VEC, {"rows", "cols"}, {"a", "b"}, {"y"}},
    [HXG_SWIGLU] = {HXG_ENG_VEC, {"rows", "cols"}, {"a", "b"}, {"y"}},
    [HXG_SOFTMAX] = {HXG_ENG_VEC, {"rows", "cols", "scale?"}, {"x"}, {"y"}},
    [HXG_MAXPOOL3] = {HXG_ENG_VEC, {"h", "w", "c"}, {"x"}, {"y"}},
    [HXG_IM2COL3] = {HXG_ENG_VEC, {"h", "w", "c"}, {"x"}, {"y"}},
    [HXG_DWCONV3] = {HXG_ENG_VEC, {"h", "w", "c", "relu6?"}, {"x", "w"}, {"y"}},
    [HXG_COPY] = {HXG_ENG_DMA,
                  {"rows", "row_bytes", "src_stride", "dst_stride", "src_offset?", "dst_offset?"},
                  {"src"},
                  {"dst"}},
};

/* Largest dimension and largest buffer a graph may ask for: far above any
 * real block here, low enough that no product overflows. */
#define HXG_MAX_DIM   (1 << 20)
#define HXG_MAX_BYTES ((size_t)1 << 31)

static int bad(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int find_buf(const hxg_graph *g, const char *name) {
    for (int i = 0; i < g->nbufs; i++)
        if (!strcmp(g->buf[i].name, name)) return i;
    return -1;
}

static int find_node(const hxg_graph *g, const char *name) {
    for (int i = 0; i < g->nnodes; i++)
        if (!strcmp(g->node[i].name, name)) return i;
    return -1;
}

static int name_of(const gj_value *v, char *dst, const char *what, int idx, char *err, size_t errlen) {
    if (!v || v->type != GJ_STR || !v->str[0])
        return bad(err, errlen, "%s %d (line %d): 'name' must be a non-empty string", what, idx, v ? v->line : 0);
    if (strlen(v->str) >= HXG_NAME)
        return bad(err, errlen, "%s '%s': name longer than %d characters", what, v->str, HXG_NAME - 1);
    strcpy(dst, v->str);
    return 0;
}

static int uint_of(const gj_value *v, const char *node, const char *key, size_t lo, size_t hi, size_t *out, char *err,
                   size_t errlen) {
    /* range first: converting a huge double to an integer is undefined */
    if (!v || v->type != GJ_NUM || !(v->num >= (double)lo && v->num <= (double)hi) ||
        v->num != (double)(long long)v->num)
        return bad(err, errlen, "node '%s': '%s' must be an integer in [%zu, %zu]", node, key, lo, hi);
    *out = (size_t)v->num;
    return 0;
}

static int load_buffers(hxg_graph *g, const gj_value *arr, char *err, size_t errlen) {
    if (!arr || arr->type != GJ_ARR || arr->n == 0) return bad(err, errlen, "'buffers' must be a non-empty list");
    if (arr->n > HXG_MAX_BUFS) return bad(err, errlen, "%d buffers: at most %d", arr->n, HXG_MAX_BUFS);
    g->nbufs = arr->n;
    for (int i = 0; i < arr->n; i++) {
        const gj_value *b = arr->items[i];
        hxg_buf *B = &g->buf[i];
        if (b->type != GJ_OBJ) return bad(err, errlen, "buffer %d (line %d) is not an object", i, b->line);
        if (name_of(gj_get(b, "name"), B->name, "buffer", i, err, errlen)) return -1;
        for (int j = 0; j < i; j++)
            if (!strcmp(g->buf[j].name, B->name)) return bad(err, errlen, "buffer '%s' is declared twice", B->name);
        for (int m = 0; m < b->n; m++)
            if (strcmp(b->keys[m], "name") && strcmp(b->keys[m], "bytes") && strcmp(b->keys[m], "alias"))
                return bad(err, errlen, "buffer '%s': unknown key '%s' (known: name, bytes, alias)", B->name,
                           b->keys[m]);
        const gj_value *by = gj_get(b, "bytes");
        if (!by || by->type != GJ_NUM || !(by->num >= 1 && by->num <= (double)HXG_MAX_BYTES) ||
            by->num != (double)(long long)by->num)
            return bad(err, errlen, "buffer '%s': 'bytes' must be an integer in [1, %zu]", B->name, HXG_MAX_BYTES);
        B->bytes = (size_t)by->num;
        B->alias = -1;
    }
    /* aliases: another buffer's storage, reused on purpose (docs/graphs.md) */
    for (int i = 0; i < arr->n; i++) {
        const gj_value *a = gj_get(arr->items[i], "alias");
        if (!a || a->type == GJ_NULL) continue;
        if (a->type != GJ_STR) return bad(err, errlen, "buffer '%s': 'alias' must name a buffer", g->buf[i].name);
        int t = find_buf(g, a->str);
        if (t < 0) return bad(err, errlen, "buffer '%s': alias of unknown buffer '%s'", g->buf[i].name, a->str);
        if (t == i) return bad(err, errlen, "buffer '%s' is an alias of itself", g->buf[i].name);
        g->buf[i].alias = t;
    }
    for (int i = 0; i < g->nbufs; i++) {
        int r = i, steps = 0;
        while (g->buf[r].alias >= 0 && steps++ <= g->nbufs) r = g->buf[r].alias;
        if (steps > g->nbufs) return bad(err, errlen, "buffer '%s': aliases form a loop", g->buf[i].name);
        g->buf[i].storage = r;
        if (g->buf[i].bytes > g->buf[r].bytes)
            return bad(err, errlen,
                       "buffer '%s' (%zu bytes) is larger than the storage of '%s' (%zu bytes) it aliases "
                       "(size mismatch)",
                       g->buf[i].name, g->buf[i].bytes, g->buf[r].name, g->buf[r].bytes);
    }
    /* the plan: one arena, every storage 64-byte aligned */
    size_t off = 0;
    for (int i = 0; i < g->nbufs; i++)
        if (g->buf[i].storage == i) g->buf[i].offset = off, off += (g->buf[i].bytes + 63) & ~(size_t)63;
    for (int i = 0; i < g->nbufs; i++) g->buf[i].offset = g->buf[g->buf[i].storage].offset;
    g->arena_bytes = off;
    return 0;
}

static int is_param(const opdef *d, const char *key, int *optional) {
    for (int i = 0; i < 7 && d->params[i]; i++) {
        size_t n = strlen(d->params[i]);
        int opt = d->params[i][n - 1] == '?';
        if (strlen(key) == n - (size_t)opt && !strncmp(d->params[i], key, n - (size_t)opt)) {
            if (optional) *optional = opt;
            return 1;
        }
    }
    return 0;
}

static int load_params(hxg_node *nd, const gj_value *o, char *err, size_t errlen) {
    const opdef *d = &OPS[nd->op];
    for (int i = 0; i < 7 && d->params[i]; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s", d->params[i]);
        int opt = key[strlen(key) - 1] == '?';
        if (opt) key[strlen(key) - 1] = 0;
        if (!gj_get(o, key) && !opt)
            return bad(err, errlen, "node '%s' (%s): missing parameter '%s'", nd->name, hxg_op_names[nd->op], key);
    }
    size_t v = 0;
    const gj_value *p;
/* Each reads one optional key into a field; a statement, so they chain. */
#define DIM(key, field)                                                                                                \
    do {                                                                                                               \
        if ((p = gj_get(o, key))) {                                                                                    \
            if (uint_of(p, nd->name, key, 1, HXG_MAX_DIM, &v, err, errlen)) return -1;                                 \
            field = (int)v;                                                                                            \
        }                                                                                                              \
    } while (0)
#define SZ(key, field, lo)                                                                                             \
    do {                                                                                                               \
        if ((p = gj_get(o, key))) {                                                                                    \
            if (uint_of(p, nd->name, key, lo, HXG_MAX_BYTES, &v, err, errlen)) return -1;                              \
            field = v;                                                                                                 \
        }                                                                                                              \
    } while (0)
#define FLAG(key, field)                                                                                               \
    do {                                                                                                               \
        if ((p = gj_get(o, key))) {                                                                                    \
            if (p->type != GJ_BOOL) return bad(err, errlen, "node '%s': '%s' must be true or false", nd->name, key);   \
            field = p->boolean;                                                                                        \
        }                                                                                                              \
    } while (0)
    DIM("m", nd->m);
    DIM("n", nd->n);
    DIM("k", nd->k);
    DIM("rows", nd->rows);
    DIM("cols", nd->cols);
    DIM("h", nd->h);
    DIM("w", nd->w);
    DIM("c", nd->c);
    FLAG("trans_b", nd->trans_b);
    FLAG("relu6", nd->relu6);
    nd->scale = 1.0f;
    if ((p = gj_get(o, "scale"))) {
        if (p->type != GJ_NUM || !(p->num > 0) || p->num > 1e6)
            return bad(err, errlen, "node '%s': 'scale' must be a number in (0, 1e6]", nd->name);
        nd->scale = (float)p->num;
    }
    if (nd->op == HXG_COPY) {
        nd->d_rows = (size_t)0;
        SZ("rows", nd->d_rows, 1);
        SZ("row_bytes", nd->d_row_bytes, 1);
        SZ("src_stride", nd->d_src_stride, 1);
        SZ("dst_stride", nd->d_dst_stride, 1);
        SZ("src_offset", nd->d_src_off, 0);
        SZ("dst_offset", nd->d_dst_off, 0);
        if (nd->d_src_stride < nd->d_row_bytes || nd->d_dst_stride < nd->d_row_bytes)
            return bad(err, errlen, "node '%s': strides (src %zu, dst %zu) must be at least row_bytes (%zu)", nd->name,
                       nd->d_src_stride, nd->d_dst_stride, nd->d_row_bytes);
    }
#undef DIM
#undef SZ
#undef FLAG
    return 0;
}

/* The bytes an op's role uses: exact for every op but copy, whose 2-D
 * regions need only fit. */
static void role_region(const hxg_node *nd, const char *role, hxg_access *a) {
    size_t f = 4, hw = (size_t)nd->h * nd->w;
    a->off = 0, a->rows = 1, a->stride = 0;
    switch (nd->op) {
    case HXG_GEMM:
        a->row_bytes = !strcmp(role, "a")   ? f * nd->m * nd->k
                       : !strcmp(role, "b") ? f * nd->k * nd->n
                                            : f * nd->m * nd->n;
        break;
    case HXG_MAXPOOL3: a->row_bytes = f * hw * nd->c; break;
    case HXG_IM2COL3: a->row_bytes = !strcmp(role, "x") ? f * hw * nd->c : f * hw * 9 * nd->c; break;
    case HXG_DWCONV3: a->row_bytes = !strcmp(role, "w") ? f * 9 * nd->c : f * hw * nd->c; break;
    case HXG_COPY:
        if (!strcmp(role, "src")) a->off = nd->d_src_off, a->stride = nd->d_src_stride;
        else a->off = nd->d_dst_off, a->stride = nd->d_dst_stride;
        a->rows = nd->d_rows, a->row_bytes = nd->d_row_bytes;
        break;
    default: a->row_bytes = f * nd->rows * nd->cols; break;
    }
    if (a->rows == 1) a->stride = a->row_bytes;
}

static size_t region_end(const hxg_access *a) { return a->off + (a->rows - 1) * a->stride + a->row_bytes; }

static int load_roles(hxg_graph *g, hxg_node *nd, const gj_value *o, int out, char *err, size_t errlen) {
    const opdef *d = &OPS[nd->op];
    const char *const *roles = out ? d->outs : d->ins;
    const char *key = out ? "outputs" : "inputs";
    const gj_value *m = gj_get(o, key);
    if (!m || m->type != GJ_OBJ)
        return bad(err, errlen, "node '%s': '%s' must be an object of role -> buffer", nd->name, key);
    for (int i = 0; i < m->n; i++) {
        int known = 0;
        for (int r = 0; r < HXG_MAX_ROLES && roles[r]; r++) known |= !strcmp(roles[r], m->keys[i]);
        if (!known)
            return bad(err, errlen, "node '%s' (%s): unknown %s role '%s'", nd->name, hxg_op_names[nd->op], key,
                       m->keys[i]);
    }
    for (int r = 0; r < HXG_MAX_ROLES && roles[r]; r++) {
        const gj_value *b = gj_get(m, roles[r]);
        if (!b || b->type != GJ_STR)
            return bad(err, errlen, "node '%s' (%s): %s role '%s' must name a buffer", nd->name, hxg_op_names[nd->op],
                       key, roles[r]);
        int bi = find_buf(g, b->str);
        if (bi < 0)
            return bad(err, errlen, "node '%s': %s '%s' is unknown buffer '%s'", nd->name, key, roles[r], b->str);
        hxg_access *a = &nd->acc[nd->nacc++];
        a->buf = bi, a->role = roles[r], a->write = out;
        role_region(nd, roles[r], a);
        size_t need = region_end(a), have = g->buf[bi].bytes;
        if (nd->op == HXG_COPY ? need > have : need != have)
            return bad(err, errlen,
                       "node '%s' (%s): role '%s' needs %s%zu bytes of buffer '%s', which has %zu (size mismatch)",
                       nd->name, hxg_op_names[nd->op], roles[r], nd->op == HXG_COPY ? "at least " : "", need, b->str,
                       have);
        if (out) nd->out[nd->nout] = bi, nd->out_role[nd->nout++] = roles[r];
        else nd->in[nd->nin] = bi, nd->in_role[nd->nin++] = roles[r];
    }
    return 0;
}

static int load_nodes(hxg_graph *g, const gj_value *arr, const hx_kernels *k, char *err, size_t errlen) {
    if (!arr || arr->type != GJ_ARR || arr->n == 0) return bad(err, errlen, "'nodes' must be a non-empty list");
    if (arr->n > HXG_MAX_NODES) return bad(err, errlen, "%d nodes: at most %d", arr->n, HXG_MAX_NODES);
    g->nnodes = arr->n;
    for (int i = 0; i < arr->n; i++) { /* names first: edges may point forward */
        if (arr->items[i]->type != GJ_OBJ)
            return bad(err, errlen, "node %d (line %d) is not an object", i, arr->items[i]->line);
        if (name_of(gj_get(arr->items[i], "name"), g->node[i].name, "node", i, err, errlen)) return -1;
        for (int j = 0; j < i; j++)
            if (!strcmp(g->node[j].name, g->node[i].name))
                return bad(err, errlen, "node '%s' is declared twice", g->node[i].name);
    }
    for (int i = 0; i < arr->n; i++) {
        const gj_value *o = arr->items[i];
        hxg_node *nd = &g->node[i];
        const gj_value *op = gj_get(o, "op");
        if (!op || op->type != GJ_STR) return bad(err, errlen, "node '%s': 'op' must be a string", nd->name);
        nd->op = HXG_NOPS;
        for (int j = 0; j < HXG_NOPS; j++)
            if (!strcmp(op->str, hxg_op_names[j])) nd->op = (hxg_op)j;
        if (nd->op == HXG_NOPS)
            return bad(err, errlen,
                       "node '%s': unknown op '%s' (known: gemm, silu, relu6, add, swiglu, softmax, maxpool3, "
                       "im2col3, dwconv3, copy)",
                       nd->name, op->str);
        nd->engine = OPS[nd->op].engine;
        for (int m = 0; m < o->n; m++) {
            const char *key = o->keys[m];
            if (!strcmp(key, "name") || !strcmp(key, "op") || !strcmp(key, "inputs") || !strcmp(key, "outputs") ||
                !strcmp(key, "after") || is_param(&OPS[nd->op], key, NULL))
                continue;
            return bad(err, errlen, "node '%s' (%s): unknown key '%s'", nd->name, hxg_op_names[nd->op], key);
        }
        if (load_params(nd, o, err, errlen) || load_roles(g, nd, o, 0, err, errlen) ||
            load_roles(g, nd, o, 1, err, errlen))
            return -1;
        if (nd->op == HXG_GEMM)
            nd->priv_bytes =
                k->gemm_f32_prep_bytes(nd->m, nd->n, nd->k) + (nd->trans_b ? (size_t)4 * nd->k * nd->n : 0);
        else if (nd->op == HXG_SILU) nd->priv_bytes = (size_t)8 * nd->rows; /* the kernel's row sums and maxima */
        const gj_value *after = gj_get(o, "after");
        if (after && after->type != GJ_ARR)
            return bad(err, errlen, "node '%s': 'after' must be a list of node names", nd->name);
        for (int e = 0; after && e < after->n; e++) {
            const gj_value *p = after->items[e];
            int pi = p->type == GJ_STR ? find_node(g, p->str) : -1;
            if (pi < 0)
                return bad(err, errlen, "node '%s': 'after' names unknown node '%s'", nd->name,
                           p->type == GJ_STR ? p->str : "?");
            int dup = 0;
            for (int q = 0; q < nd->npred; q++) dup |= nd->pred[q] == pi;
            if (dup) continue;
            nd->pred[nd->npred++] = pi;
            g->node[pi].succ[g->node[pi].nsucc++] = i;
            g->nedges++;
        }
    }
    return 0;
}

/* Kahn's algorithm, ties by file order: the fixed order of groups A and C
 * and the launch order of D.  A leftover node lies on or behind a cycle. */
static int topo_sort(hxg_graph *g, char *err, size_t errlen) {
    int indeg[HXG_MAX_NODES], done = 0;
    for (int i = 0; i < g->nnodes; i++) indeg[i] = g->node[i].npred, g->node[i].level = 0;
    while (done < g->nnodes) {
        int pick = -1;
        for (int i = 0; i < g->nnodes && pick < 0; i++)
            if (indeg[i] == 0) pick = i;
        if (pick < 0) {
            char list[600] = "";
            size_t n = 0;
            for (int i = 0; i < g->nnodes && n < sizeof list - 60; i++)
                if (indeg[i] > 0)
                    n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", n ? ", " : "", g->node[i].name);
            return bad(err, errlen, "the dependencies form a cycle: these nodes can never become ready: %s", list);
        }
        indeg[pick] = -1;
        g->node[pick].topo = done;
        g->order[done++] = pick;
        for (int s = 0; s < g->node[pick].nsucc; s++) {
            hxg_node *c = &g->node[g->node[pick].succ[s]];
            indeg[g->node[pick].succ[s]]--;
            if (c->level < g->node[pick].level + 1) c->level = g->node[pick].level + 1;
        }
    }
    return 0;
}

/* Two 2-D regions (absolute offsets) share a byte: the runners' one rule
 * (common/ranges.h). */
static int regions_overlap(size_t o1, const hxg_access *a, size_t o2, const hxg_access *b) {
    hx_region ra = {o1 + a->off, a->rows, a->row_bytes, a->stride};
    hx_region rb = {o2 + b->off, b->rows, b->row_bytes, b->stride};
    return hx_regions_overlap(&ra, &rb);
}

typedef struct {
    uint64_t w[HXG_MAX_NODES / 64];
} bitset;

/* Ops that read neighbours of the element they write (or move rows): their
 * output may not overlap their own input.  Elementwise and row-wise ops and
 * GEMM (which packs its operands first) may run in place. */
static int in_place_ok(hxg_op op) {
    return op != HXG_MAXPOOL3 && op != HXG_IM2COL3 && op != HXG_DWCONV3 && op != HXG_COPY;
}

int hxg_conflict_check(const hxg_graph *g, char *err, size_t errlen) {
    for (int i = 0; i < g->nnodes; i++) {
        const hxg_node *a = &g->node[i];
        if (in_place_ok(a->op)) continue;
        for (int p = 0; p < a->nacc; p++)
            for (int q = 0; q < a->nacc; q++) {
                const hxg_access *x = &a->acc[p], *y = &a->acc[q];
                const hxg_buf *bx = &g->buf[x->buf], *by = &g->buf[y->buf];
                if (x->write && !y->write && bx->storage == by->storage &&
                    regions_overlap(bx->offset, x, by->offset, y))
                    return bad(err, errlen,
                               "node '%s' (%s) writes '%s' over its own input '%s' (role %s): this op cannot run "
                               "in place",
                               a->name, hxg_op_names[a->op], bx->name, by->name, y->role);
            }
    }
    static bitset reach[HXG_MAX_NODES]; /* reach[i]: nodes reachable from i */
    memset(reach, 0, sizeof reach);
    for (int t = g->nnodes - 1; t >= 0; t--) {
        int i = g->order[t];
        for (int s = 0; s < g->node[i].nsucc; s++) {
            int c = g->node[i].succ[s];
            reach[i].w[c / 64] |= 1ull << (c % 64);
            for (int w = 0; w < HXG_MAX_NODES / 64; w++) reach[i].w[w] |= reach[c].w[w];
        }
    }
    for (int i = 0; i < g->nnodes; i++)
        for (int j = i + 1; j < g->nnodes; j++) {
            if ((reach[i].w[j / 64] >> (j % 64) & 1) || (reach[j].w[i / 64] >> (i % 64) & 1)) continue;
            const hxg_node *a = &g->node[i], *b = &g->node[j];
            for (int p = 0; p < a->nacc; p++)
                for (int q = 0; q < b->nacc; q++) {
                    const hxg_access *x = &a->acc[p], *y = &b->acc[q];
                    if (!x->write && !y->write) continue;
                    const hxg_buf *bx = &g->buf[x->buf], *by = &g->buf[y->buf];
                    if (bx->storage != by->storage || !regions_overlap(bx->offset, x, by->offset, y)) continue;
                    char shared[160] = "";
                    if (x->buf != y->buf)
                        snprintf(shared, sizeof shared, "; '%s' and '%s' share storage", bx->name, by->name);
                    return bad(err, errlen,
                               "nodes '%s' and '%s' touch the same memory with no dependency path between them: "
                               "'%s' %s '%s' (role %s) and '%s' %s '%s' (role %s)%s; add an edge ('after') or use "
                               "separate buffers",
                               a->name, b->name, a->name, x->write ? "writes" : "reads", bx->name, x->role, b->name,
                               y->write ? "writes" : "reads", by->name, y->role, shared);
                }
        }
    return 0;
}

int hxg_load(hxg_graph *g, const char *path, char *err, size_t errlen) {
    memset(g, 0, sizeof *g);
    FILE *f = fopen(path, "rb");
    if (!f) return bad(err, errlen, "cannot open graph file %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = (char *)malloc((size_t)len + 1);
    size_t got = text ? fread(text, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!text || got != (size_t)len) {
        free(text);
        return bad(err, errlen, "cannot read graph file %s", path);
    }
    text[len] = 0;
    char jerr[256];
    gj_value *doc = gj_parse(text, jerr, sizeof jerr);
    free(text);
    if (!doc) return bad(err, errlen, "graph %s: %s", path, jerr);
    int rc = -1;
    char e[900];
    const gj_value *name = gj_get(doc, "name"), *prec = gj_get(doc, "precision");
    if (doc->type != GJ_OBJ) {
        snprintf(e, sizeof e, "the document must be an object with name, precision, buffers, nodes");
        goto out;
    }
    for (int i = 0; i < doc->n; i++)
        if (strcmp(doc->keys[i], "name") && strcmp(doc->keys[i], "precision") && strcmp(doc->keys[i], "buffers") &&
            strcmp(doc->keys[i], "nodes") && strcmp(doc->keys[i], "description")) {
            snprintf(e, sizeof e, "unknown top-level key '%s' (known: name, description, precision, buffers, nodes)",
                     doc->keys[i]);
            goto out;
        }
    if (name_of(name, g->name, "graph", 0, e, sizeof e)) goto out;
    if (prec && (prec->type != GJ_STR || strcmp(prec->str, "fp32"))) {
        snprintf(e, sizeof e, "precision must be \"fp32\" (the graph runner's kernels are fp32)");
        goto out;
    }
    if (load_buffers(g, gj_get(doc, "buffers"), e, sizeof e) ||
        load_nodes(g, gj_get(doc, "nodes"), hx_kernels_fast(), e, sizeof e) || topo_sort(g, e, sizeof e) ||
        hxg_conflict_check(g, e, sizeof e))
        goto out;
    rc = 0;
out:
    if (rc) snprintf(err, errlen, "graph %s: %s", path, e);
    gj_free(doc);
    return rc;
}
