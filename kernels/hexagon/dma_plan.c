/* Building user-DMA descriptors for a copy chain (see dma_plan.h).  No
 * device instructions here: this file builds for any Hexagon target and is
 * tested under qemu-hexagon by test_dma_plan.c. */
#include <stdio.h>
#include <string.h>
#include "dma_plan.h"

int hx_dma_chain_fits(const hx_copy_desc *chain) {
    for (const hx_copy_desc *c = chain; c; c = c->next)
        if (c->row_bytes > HX_DMA_FIELD_MAX || c->src_stride > HX_DMA_FIELD_MAX || c->dst_stride > HX_DMA_FIELD_MAX)
            return 0;
    return 1;
}

static size_t span(uint32_t rows, uint32_t width, uint32_t stride) {
    return rows ? (size_t)(rows - 1) * stride + width : 0;
}

static void fill(hexagon_udma_descriptor_type1_t *d, const uint8_t *src, uint8_t *dst, uint32_t rows, uint32_t width,
                 uint32_t sstride, uint32_t dstride, int src_vtcm, int dst_vtcm, int ordered) {
    memset(d, 0, sizeof *d);
    d->next = NULL;
    d->length = 0; /* unused by type 1 */
    d->desctype = HEXAGON_UDMA_DESC_DESCTYPE_TYPE1;
    d->dstcomp = HEXAGON_UDMA_DESC_COMP_NONE;
    d->srccomp = HEXAGON_UDMA_DESC_COMP_NONE;
    d->srcbypass = src_vtcm ? HEXAGON_UDMA_DESC_BYPASS_ON : HEXAGON_UDMA_DESC_BYPASS_OFF;
    d->dstbypass = dst_vtcm ? HEXAGON_UDMA_DESC_BYPASS_ON : HEXAGON_UDMA_DESC_BYPASS_OFF;
    d->order = ordered ? HEXAGON_UDMA_DESC_ORDER_ORDER : HEXAGON_UDMA_DESC_ORDER_NOORDER;
    d->dstate = HEXAGON_UDMA_DESC_DSTATE_INCOMPLETE;
    d->src = (void *)src;
    d->dst = (void *)dst;
    d->allocation = 0;
    d->padding = 0;
    d->roiwidth = width;
    d->roiheight = rows;
    d->srcstride = sstride;
    d->dststride = dstride;
    d->srcwidthoffset = 0;
    d->dstwidthoffset = 0;
}

int hx_dma_plan(hx_dma_cursor *cur, hexagon_udma_descriptor_type1_t *pool, int max, const hx_dma_env *env,
                int clean_src, hx_dma_stats *st) {
    int n = 0;
    uintptr_t lo = UINTPTR_MAX, hi = 0; /* destination envelope of this batch */
    while (cur->link && n < max) {
        const hx_copy_desc *c = cur->link;
        if (c->rows == 0 || c->row_bytes == 0) {
            cur->link = c->next, cur->row = 0;
            continue;
        }
        uint32_t left = c->rows - cur->row, take = left > HX_DMA_FIELD_MAX ? HX_DMA_FIELD_MAX : left;
        const uint8_t *src = c->src + (size_t)cur->row * c->src_stride;
        uint8_t *dst = c->dst + (size_t)cur->row * c->dst_stride;
        size_t ssp = span(take, c->row_bytes, c->src_stride), dsp = span(take, c->row_bytes, c->dst_stride);
        int sv = env->in_vtcm(src, ssp), dv = env->in_vtcm(dst, dsp);
        if (!sv && clean_src) {
            env->clean(src, ssp, 0);
            st->cache_clean_bytes += ssp;
        }
        if (!dv) {
            env->clean(dst, dsp, 1);
            st->cache_clean_bytes += dsp;
        }
        uintptr_t d0 = (uintptr_t)dst, d1 = d0 + dsp;
        int ordered = n > 0 && d0 < hi && d1 > lo;
        st->ordered += (uint64_t)ordered;
        if (d0 < lo) lo = d0;
        if (d1 > hi) hi = d1;
        fill(&pool[n], src, dst, take, c->row_bytes, c->src_stride, c->dst_stride, sv || env->src_bypass_ddr, dv,
             ordered);
        n++; /* not linked here: hx_dma_submit links each with its own release */
        st->bytes += (uint64_t)take * c->row_bytes;
        cur->row += take;
        if (cur->row == c->rows) cur->link = c->next, cur->row = 0;
    }
    st->descriptors += (uint64_t)n;
    return n;
}

void hx_dma_clean_sources(const hx_copy_desc *links, size_t n, const hx_dma_env *env, hx_dma_src_clean *cs,
                          hx_dma_stats *st) {
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        const hx_copy_desc *c = &links[i];
        size_t sp = span(c->rows, c->row_bytes, c->src_stride);
        if (!sp || env->in_vtcm(c->src, sp)) continue;
        uintptr_t a = (uintptr_t)c->src;
        if (a < lo) lo = a;
        if (a + sp > hi) hi = a + sp;
    }
    if (hi <= lo) return; /* no DDR source */
    /* One call over the envelope: the gaps between strided rows are cleaned
     * too, which costs set-up time only. */
    env->clean((const void *)lo, hi - lo, 0);
    st->cache_clean_bytes += hi - lo;
    cs->lo = lo, cs->hi = hi;
}

static int sources_clean(const hx_copy_desc *chain, const hx_dma_src_clean *cs) {
    for (const hx_copy_desc *c = chain; c; c = c->next) {
        size_t sp = span(c->rows, c->row_bytes, c->src_stride);
        uintptr_t a = (uintptr_t)c->src;
        if (sp && (a < cs->lo || a + sp > cs->hi)) return 0;
    }
    return 1;
}

int hx_dma_issue(const hx_copy_desc *chain, hexagon_udma_descriptor_type1_t *pool, int max, const hx_dma_env *env,
                 hx_dma_src_clean *cs, hx_dma_stats *st, hx_dma_execute_fn execute, void *ctx) {
    int clean_src = !sources_clean(chain, cs);
    hx_dma_cursor cur = {chain, 0};
    int n, rc;
    while ((n = hx_dma_plan(&cur, pool, max, env, clean_src, st)) > 0)
        if ((rc = execute(pool, n, ctx)) != 0) return rc;
    return 0;
}

void hx_dma_submit(hexagon_udma_descriptor_type1_t *d, int n, const hx_dma_hw *hw, void *ctx) {
    if (n <= 0) return;
    hw->start(&d[0], ctx);
    for (int i = 1; i < n; i++) hw->link(&d[i - 1], &d[i], ctx);
}

/* ---- the engine-view model ---- */
void hx_dma_model_init(hx_dma_model *m, hexagon_udma_descriptor_type1_t *pool, int max) {
    memset(m, 0, sizeof *m);
    m->pool = pool;
    m->max = max < HX_DMA_MODEL_MAX ? max : HX_DMA_MODEL_MAX;
    m->head = -1;
}

static int slot(const hx_dma_model *m, const void *d) {
    const hexagon_udma_descriptor_type1_t *p = (const hexagon_udma_descriptor_type1_t *)d;
    return p >= m->pool && p < m->pool + m->max ? (int)(p - m->pool) : -1;
}

static void model_release(hx_dma_model *m, hexagon_udma_descriptor_type1_t *d) {
    int i = slot(m, d);
    if (i < 0) return;
    m->seen[i] = *d; /* what the engine can see from now on */
    m->released[i] = 1;
}

static void model_start(hexagon_udma_descriptor_type1_t *first, void *ctx) {
    hx_dma_model *m = (hx_dma_model *)ctx;
    model_release(m, first);
    m->head = slot(m, first);
}

static void model_link(hexagon_udma_descriptor_type1_t *tail, hexagon_udma_descriptor_type1_t *next, void *ctx) {
    hx_dma_model *m = (hx_dma_model *)ctx;
    model_release(m, next);
    int t = slot(m, tail);
    if (t >= 0) m->seen[t].next = next; /* dmlink appends next to the engine's chain */
}

static uint32_t model_pause(void *ctx) {
    hx_dma_model *m = (hx_dma_model *)ctx;
    m->pauses++;
    m->head = -1; /* nothing in flight after a reset */
    return m->pause_status;
}

const hx_dma_hw hx_dma_model_hw = {model_start, model_link, model_pause};

int hx_dma_reset_here(hx_dma_reset *r, unsigned self, const hx_dma_hw *hw, void *ctx, hx_dma_stats *st) {
    if (r->by == self && self != 0) return 0;
    uint32_t status = hw->pause(ctx) & (HEXAGON_UDMA_DM0_STATUS_RUN | HEXAGON_UDMA_DM0_STATUS_ERROR);
    st->resets++;
    if (status != HEXAGON_UDMA_DM0_STATUS_IDLE) {
        st->reset_not_idle++;
        st->last_error_status = status;
        r->by = 0;
        return -3;
    }
    r->by = self;
    return 0;
}

int hx_dma_model_run(hx_dma_model *m) {
    int i = m->head, steps = 0;
    m->head = -1;
    if (i < 0) {
        snprintf(m->why, sizeof m->why, "no descriptor started");
        return -2;
    }
    while (i >= 0) {
        if (!m->released[i]) {
            snprintf(m->why, sizeof m->why, "the engine read descriptor %d, which was never released", i);
            return -2;
        }
        if (++steps > m->max) {
            snprintf(m->why, sizeof m->why, "chain longer than the pool: a stale link loops");
            return -2;
        }
        const hexagon_udma_descriptor_type1_t *x = &m->seen[i];
        if (x->desctype != HEXAGON_UDMA_DESC_DESCTYPE_TYPE1) {
            snprintf(m->why, sizeof m->why, "descriptor %d: not type 1 in the engine's view", i);
            return -2;
        }
        for (uint32_t r = 0; r < x->roiheight; r++)
            memmove((uint8_t *)x->dst + (size_t)r * x->dststride, (const uint8_t *)x->src + (size_t)r * x->srcstride,
                    x->roiwidth);
        m->pool[i].dstate = HEXAGON_UDMA_DESC_DSTATE_COMPLETE; /* written back by the engine */
        if (!x->next) break;
        i = slot(m, x->next);
        if (i < 0) {
            snprintf(m->why, sizeof m->why, "a link leaves the descriptor pool");
            return -2;
        }
    }
    return 0;
}
