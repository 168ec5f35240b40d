/* Checks the user-DMA descriptors dma_plan.c builds, without a DMA engine.
 *
 *   python3 -m ziglang cc -target hexagon-linux-musl -mcpu=hexagonv67+hvxv67+hvx_length128b -O2 \
 *       kernels/hexagon/test_dma_plan.c kernels/hexagon/dma_plan.c kernels/common/kernels_ref.c -lm -o t
 *   qemu-hexagon ./t        # "... N passed, 0 failed"
 *
 * For each chain (random shapes and strides, overlapping repeat windows as
 * D streams them, links over 65535 rows, VTCM and DDR endpoints, small
 * batch sizes so the cursor continues across batches) it
 *   - hands the descriptors over as dma_hexagon.c does (hx_dma_submit: one
 *     release per descriptor, dmstart then dmlink) to a model of the engine
 *     that sees a descriptor only as of its last release (hx_dma_model, a
 *     snapshot per pool slot kept from chain to chain, as stale memory
 *     would be), executes type-1 transfers (roiheight rows of roiwidth
 *     bytes, src/dst strides) along the links it saw, and compares the
 *     destination with the reference copy (kernels_ref.c);
 *   - issues two chains back to back through the one pool: the second must
 *     copy only its own links, never a stale descriptor of the first;
 *   - checks that a descriptor marked NOORDER does not overlap an earlier
 *     destination of its batch, so the engine may reorder it freely;
 *   - checks every field: type 1, no compression, dstate incomplete, bypass
 *     exactly for the VTCM endpoints, roi/stride values, the .next links;
 *   - checks that exactly the DDR ranges were cleaned from the caches
 *     (sources only on the first issue of a chain, destinations always);
 *   - checks that links whose row bytes or strides exceed the 16-bit fields
 *     are refused;
 *   - runs D's trials as the runner issues them (one chain, or one chain per
 *     window with --d-buffers 2, --d-repeat windows) after the set-up clean
 *     of its sources, and counts the cache-clean calls each trial makes on
 *     the DDR source: a clean inside the timed task is a timing confound,
 *     so every trial must make none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dma_plan.h"

static int n_pass, n_fail;
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static void report(const char *what, int ok, const char *detail) {
    ok ? n_pass++ : n_fail++;
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what, detail[0] ? ": " : "", detail);
}

/* A pretend VTCM: the destination buffer, when the case says so. */
static const uint8_t *vtcm_lo, *vtcm_hi;
static int fake_in_vtcm(const void *p, size_t n) {
    const uint8_t *q = (const uint8_t *)p;
    return vtcm_lo && q >= vtcm_lo && q + n <= vtcm_hi;
}
/* Records which bytes were cleaned, per kind (flush: sources; flush and
 * invalidate: destinations). */
static size_t cleaned_src, cleaned_dst, clean_calls_bad, clean_calls_src;
static const uint8_t *src_lo, *src_hi, *dst_lo, *dst_hi;
static uint8_t *src_cov, *dst_cov;
static void fake_clean(const void *p, size_t n, int invalidate) {
    const uint8_t *q = (const uint8_t *)p;
    if (!invalidate && q >= src_lo && q + n <= src_hi)
        cleaned_src += n, clean_calls_src++, memset(src_cov + (q - src_lo), 1, n);
    else if (invalidate && q >= dst_lo && q + n <= dst_hi) cleaned_dst += n, memset(dst_cov + (q - dst_lo), 1, n);
    else clean_calls_bad++;
}
/* 1 if every byte a link reads (src) or writes (dst) was cleaned. */
static int covered(const hx_copy_desc *c, int dst_side) {
    for (; c; c = c->next)
        for (uint32_t r = 0; r < c->rows; r++) {
            const uint8_t *cov = dst_side ? dst_cov + (c->dst - dst_lo) + (size_t)r * c->dst_stride
                                          : src_cov + (c->src - src_lo) + (size_t)r * c->src_stride;
            for (uint32_t i = 0; i < c->row_bytes; i++)
                if (!cov[i]) return 0;
        }
    return 1;
}
static hx_dma_env env = {fake_in_vtcm, fake_clean, 0};

static size_t span(uint32_t rows, uint32_t w, uint32_t s) { return rows ? (size_t)(rows - 1) * s + w : 0; }

static hexagon_udma_descriptor_type1_t pool[64] __attribute__((aligned(32)));
static hx_dma_model model; /* the engine's view of pool, kept from chain to chain */

/* Checks a batch's fields, then has the engine model execute it. */
static int run_batch(hexagon_udma_descriptor_type1_t *d, int n, char *why, size_t wl) {
    for (int i = 0; i < n; i++) {
        hexagon_udma_descriptor_type1_t *x = &d[i];
        if (x->desctype != HEXAGON_UDMA_DESC_DESCTYPE_TYPE1 || x->srccomp || x->dstcomp ||
            x->dstate != HEXAGON_UDMA_DESC_DSTATE_INCOMPLETE || x->length != 0) {
            snprintf(why, wl, "descriptor %d: type/compression/dstate/length fields", i);
            return 0;
        }
        if (x->next != NULL) { /* linked by hx_dma_submit, each with its own release */
            snprintf(why, wl, "descriptor %d: pre-linked by plain stores", i);
            return 0;
        }
        size_t ssp = span(x->roiheight, x->roiwidth, x->srcstride), dsp = span(x->roiheight, x->roiwidth, x->dststride);
        if (x->srcbypass != (unsigned)(fake_in_vtcm(x->src, ssp) || env.src_bypass_ddr) ||
            x->dstbypass != (unsigned)fake_in_vtcm(x->dst, dsp)) {
            snprintf(why, wl,
                     "descriptor %d: bypass must be on exactly for VTCM endpoints (and DDR sources with "
                     "the bypass policy)",
                     i);
            return 0;
        }
        if (x->order == HEXAGON_UDMA_DESC_ORDER_NOORDER) {
            const uint8_t *a0 = (const uint8_t *)x->dst, *a1 = a0 + dsp;
            for (int j = 0; j < i; j++) {
                const uint8_t *b0 = (const uint8_t *)d[j].dst;
                const uint8_t *b1 = b0 + span(d[j].roiheight, d[j].roiwidth, d[j].dststride);
                if (a0 < b1 && b0 < a1) {
                    snprintf(why, wl, "descriptor %d is NOORDER but overlaps descriptor %d's destination", i, j);
                    return 0;
                }
            }
        }
    }
    /* The engine sees each descriptor as of its last release (dma_plan.h,
     * hx_dma_model): submitted as dma_hexagon.c submits, then executed. */
    hx_dma_submit(d, n, &hx_dma_model_hw, &model);
    if (hx_dma_model_run(&model) != 0) {
        snprintf(why, wl, "engine model: %s", model.why);
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (d[i].dstate != HEXAGON_UDMA_DESC_DSTATE_COMPLETE) {
            snprintf(why, wl, "descriptor %d not completed by the engine", i);
            return 0;
        }
    return 1;
}

/* One case: `links` links of rows x width, `repeat` windows of the source
 * copied through the same destination rows (the last must win). */
static void one_case(const char *name, uint32_t rows, uint32_t width, uint32_t sstride, uint32_t dstride, int repeat,
                     int split_rows, int dst_in_vtcm, int max) {
    size_t win = span(rows, width, sstride);
    size_t sbytes = win * (size_t)repeat + 64, dbytes = span(rows, width, dstride) + 64;
    uint8_t *src = malloc(sbytes), *dst = malloc(dbytes), *ref = malloc(dbytes);
    for (size_t i = 0; i < sbytes; i++) src[i] = (uint8_t)rnd();
    memset(dst, 0xA5, dbytes), memset(ref, 0xA5, dbytes);
    int nl = 0;
    hx_copy_desc links[64];
    for (int w = 0; w < repeat; w++)
        for (uint32_t r0 = 0; r0 < rows; r0 += (uint32_t)split_rows) {
            uint32_t take = rows - r0 < (uint32_t)split_rows ? rows - r0 : (uint32_t)split_rows;
            links[nl] = (hx_copy_desc){src + (size_t)w * win + (size_t)r0 * sstride,
                                       dst + (size_t)r0 * dstride,
                                       take,
                                       width,
                                       sstride,
                                       dstride,
                                       NULL};
            if (nl) links[nl - 1].next = &links[nl];
            nl++;
        }
    hx_kernels_ref.copy2d(&links[0]);
    memcpy(ref, dst, dbytes);
    memset(dst, 0xA5, dbytes);

    vtcm_lo = dst_in_vtcm ? dst : NULL, vtcm_hi = dst_in_vtcm ? dst + dbytes : NULL;
    src_lo = src, src_hi = src + sbytes, dst_lo = dst, dst_hi = dst + dbytes;
    src_cov = calloc(sbytes, 1), dst_cov = calloc(dbytes, 1);
    char why[200] = "";
    int ok = hx_dma_chain_fits(&links[0]);
    if (!ok) snprintf(why, sizeof why, "chain refused");
    for (int pass = 0; ok && pass < 2; pass++) { /* second issue: sources already clean */
        cleaned_src = cleaned_dst = clean_calls_bad = 0;
        memset(src_cov, 0, sbytes), memset(dst_cov, 0, dbytes);
        memset(dst, 0xA5, dbytes);
        hx_dma_stats st = {0};
        hx_dma_cursor cur = {&links[0], 0};
        int n, batches = 0;
        uint64_t want_bytes = (uint64_t)rows * width * repeat;
        while (ok && (n = hx_dma_plan(&cur, pool, max, &env, pass == 0, &st)) > 0) {
            batches++;
            ok = run_batch(pool, n, why, sizeof why);
        }
        if (ok && memcmp(dst, ref, dbytes) != 0)
            ok = 0, snprintf(why, sizeof why, "destination differs from the reference copy");
        if (ok && st.bytes != want_bytes)
            ok = 0, snprintf(why, sizeof why, "bytes %llu, want %llu", (unsigned long long)st.bytes,
                             (unsigned long long)want_bytes);
        if (ok && clean_calls_bad) ok = 0, snprintf(why, sizeof why, "a clean call outside the DDR ranges");
        if (ok && pass == 0 && !covered(&links[0], 0))
            ok = 0, snprintf(why, sizeof why, "a source byte was not cleaned before the first issue");
        if (ok && !dst_in_vtcm && !covered(&links[0], 1))
            ok = 0, snprintf(why, sizeof why, "a DDR destination byte was not cleaned");
        if (ok && pass == 1 && cleaned_src) ok = 0, snprintf(why, sizeof why, "sources cleaned again");
        if (ok && dst_in_vtcm && cleaned_dst) ok = 0, snprintf(why, sizeof why, "VTCM destination cleaned");
        if (ok && !dst_in_vtcm && !cleaned_dst) ok = 0, snprintf(why, sizeof why, "DDR destination not cleaned");
        if (ok && (uint64_t)st.descriptors < (uint64_t)batches) ok = 0, snprintf(why, sizeof why, "descriptor count");
        /* Overlapping windows in one batch need ORDER (run_batch checks each
         * NOORDER one); batches are apart anyway (dmwait between them). */
        if (ok && repeat > 1 && max >= nl && st.ordered == 0)
            ok = 0, snprintf(why, sizeof why, "overlapping repeat windows in one batch issued without ORDER");
    }
    char detail[300];
    snprintf(detail, sizeof detail, "%ux%u sstride %u dstride %u x%d split %d %s max %d%s%s", rows, width, sstride,
             dstride, repeat, split_rows, dst_in_vtcm ? "vtcm" : "ddr", max, why[0] ? " - " : "", why);
    report(name, ok, detail);
    free(src), free(dst), free(ref), free(src_cov), free(dst_cov);
}

static char batch_why[200];
static int model_execute(hexagon_udma_descriptor_type1_t *d, int n, void *ctx) {
    (void)ctx;
    return run_batch(d, n, batch_why, sizeof batch_why) ? 0 : -2;
}

/* D's descriptor array as tasks.c builds it: per window, one link per
 * desc_rows rows; one chain through one buffer, or (buffers 2) one chain per
 * window landing in buffer w % 2. */
static void d_trials(int buffers, int repeat) {
    enum { ROWS = 40, WIDTH = 300, SSTRIDE = 600, DESC_ROWS = 16, TRIALS = 3 };
    int per = (ROWS + DESC_ROWS - 1) / DESC_ROWS, n = per * repeat;
    size_t win = (size_t)ROWS * WIDTH, sbytes = (size_t)ROWS * repeat * SSTRIDE;
    uint8_t *src = malloc(sbytes), *dst = malloc(2 * win);
    hx_copy_desc *links = calloc((size_t)n, sizeof *links);
    for (size_t i = 0; i < sbytes; i++) src[i] = (uint8_t)rnd();
    for (int i = 0; i < n; i++) {
        int w = i / per, r0 = (i % per) * DESC_ROWS, rows = ROWS - r0 < DESC_ROWS ? ROWS - r0 : DESC_ROWS;
        int linked = i + 1 < n && (buffers == 1 || (i + 1) % per != 0);
        links[i] = (hx_copy_desc){src + ((size_t)w * ROWS + r0) * SSTRIDE,
                                  dst + (buffers == 2 ? (size_t)(w % 2) * win : 0) + (size_t)r0 * WIDTH,
                                  (uint32_t)rows,
                                  WIDTH,
                                  SSTRIDE,
                                  WIDTH,
                                  linked ? &links[i + 1] : NULL};
    }
    vtcm_lo = dst, vtcm_hi = dst + 2 * win;
    src_lo = src, src_hi = src + sbytes, dst_lo = dst, dst_hi = dst + 2 * win;
    src_cov = calloc(sbytes, 1), dst_cov = calloc(2 * win, 1);
    hx_dma_stats st = {0};
    hx_dma_src_clean cs = {0, 0};
    clean_calls_src = clean_calls_bad = 0;
    hx_dma_clean_sources(links, (size_t)n, &env, &cs, &st); /* set-up */
    char why[240] = "";
    int ok = 1;
    for (int i = 0; ok && i < n; i++) {
        hx_copy_desc one = links[i];
        one.next = NULL;
        if (!covered(&one, 0)) ok = 0, snprintf(why, sizeof why, "link %d's source not cleaned at set-up", i);
    }
    size_t per_trial[TRIALS] = {0};
    for (int t = 0; ok && t < TRIALS; t++) {
        clean_calls_src = 0;
        memset(dst, 0xA5, 2 * win);
        for (int w = 0; ok && w < (buffers == 1 ? 1 : repeat); w++)
            if (hx_dma_issue(&links[(size_t)w * per], pool, 64, &env, &cs, &st, model_execute, NULL) != 0)
                ok = 0, snprintf(why, sizeof why, "trial %d: %s", t, batch_why);
        per_trial[t] = clean_calls_src;
        const uint8_t *last = dst + (buffers == 2 ? (size_t)((repeat - 1) % 2) * win : 0);
        for (int r = 0; ok && r < ROWS; r++)
            if (memcmp(last + (size_t)r * WIDTH, src + ((size_t)(repeat - 1) * ROWS + r) * SSTRIDE, WIDTH))
                ok = 0, snprintf(why, sizeof why, "trial %d: row %d of the last window differs", t, r);
        if (ok && per_trial[t])
            ok = 0, snprintf(why, sizeof why, "trial %d cleaned the DDR source %zu times inside the timed D task", t,
                             per_trial[t]);
    }
    if (ok && clean_calls_bad) ok = 0, snprintf(why, sizeof why, "a clean call outside the DDR ranges");
    char what[120];
    snprintf(what, sizeof what, "D trials, --d-buffers %d --d-repeat %d%s: no source clean per trial", buffers, repeat,
             env.src_bypass_ddr ? ", source cache bypass" : "");
    report(what, ok, why);
    free(src), free(dst), free(links), free(src_cov), free(dst_cov);
}

/* Two chains back to back through the one pool, as D's trials and the
 * ladder's dma_back_to_back step issue them: the second (shorter) chain must
 * copy exactly its own links, never a descriptor left from the first. */
static void back_to_back(void) {
    enum { ROWS = 8, W = 64 };
    enum { NA = ROWS * 8 * W, NB = ROWS * 5 * W };
    static uint8_t buf[2 * (NA + NB)]; /* sources, then destinations */
    uint8_t *sa = buf, *sb = sa + NA, *da = sb + NB, *db = da + NA;
    hx_copy_desc a[8], b[5];
    for (size_t i = 0; i < NA + NB; i++) buf[i] = (uint8_t)rnd();
    batch_why[0] = 0;
    for (int i = 0; i < 8; i++)
        a[i] = (hx_copy_desc){sa + i * ROWS * W, da + i * ROWS * W, ROWS, W, W, W, i + 1 < 8 ? &a[i + 1] : NULL};
    for (int i = 0; i < 5; i++)
        b[i] = (hx_copy_desc){sb + i * ROWS * W, db + i * ROWS * W, ROWS, W, W, W, i + 1 < 5 ? &b[i + 1] : NULL};
    vtcm_lo = da, vtcm_hi = db + NB; /* destinations in "VTCM" */
    src_lo = sa, src_hi = sb + NB, dst_lo = da, dst_hi = db + NB;
    src_cov = calloc(src_hi - src_lo, 1), dst_cov = calloc(dst_hi - dst_lo, 1);
    hx_dma_stats st = {0};
    hx_dma_src_clean cs = {0, 0};
    char why[240] = "";
    int ok = 1;
    memset(da, 0xA5, NA + NB);
    if (hx_dma_issue(&a[0], pool, 64, &env, &cs, &st, model_execute, NULL) != 0 || memcmp(da, sa, NA))
        ok = 0, snprintf(why, sizeof why, "first chain: %s", batch_why[0] ? batch_why : "copy differs");
    memset(da, 0xEE, NA); /* a stale descriptor of the first chain would write here again */
    if (ok && (hx_dma_issue(&b[0], pool, 64, &env, &cs, &st, model_execute, NULL) != 0 || memcmp(db, sb, NB)))
        ok = 0, snprintf(why, sizeof why, "second chain: %s", batch_why[0] ? batch_why : "copy differs");
    for (size_t i = 0; ok && i < NA; i++)
        if (da[i] != 0xEE) ok = 0, snprintf(why, sizeof why, "the second chain ran a stale descriptor of the first");
    report("two chains back to back through one pool", ok, why);
    free(src_cov), free(dst_cov);
}

/* The engine reset (hx_dma_reset_here): once per issuing thread, again on
 * another thread and after an error, and a status other than IDLE refuses
 * the copy. */
static void resets(void) {
    hx_dma_model m;
    hx_dma_model_init(&m, pool, 64);
    hx_dma_reset r = {0};
    hx_dma_stats st = {0};
    int ok = hx_dma_reset_here(&r, 11, &hx_dma_model_hw, &m, &st) == 0 && m.pauses == 1;
    ok = ok && hx_dma_reset_here(&r, 11, &hx_dma_model_hw, &m, &st) == 0 && m.pauses == 1;
    report("dmpause once on the issuing thread", ok, "");
    ok = hx_dma_reset_here(&r, 12, &hx_dma_model_hw, &m, &st) == 0 && m.pauses == 2;
    report("dmpause again on another issuing thread", ok, "");
    r.by = 0; /* what execute() does after an engine error */
    ok = hx_dma_reset_here(&r, 12, &hx_dma_model_hw, &m, &st) == 0 && m.pauses == 3;
    report("dmpause again after an error", ok, "");
    m.pause_status = HEXAGON_UDMA_DM0_STATUS_RUN;
    ok = hx_dma_reset_here(&r, 13, &hx_dma_model_hw, &m, &st) == -3 && st.reset_not_idle == 1 &&
         st.last_error_status == HEXAGON_UDMA_DM0_STATUS_RUN;
    ok = ok && hx_dma_reset_here(&r, 13, &hx_dma_model_hw, &m, &st) == -3; /* not taken as reset */
    report("an engine not IDLE after dmpause refuses the copy", ok, "");
}

int main(void) {
    printf("backend: dma_plan\n");
    hx_dma_model_init(&model, pool, 64);
    one_case("single link", 40, 300, 512, 300, 1, 40, 1, 64);
    one_case("links of 16 rows", 40, 300, 512, 304, 1, 16, 1, 64);
    one_case("repeat windows, same rows", 24, 200, 256, 200, 4, 8, 1, 64);
    one_case("repeat windows, batches of 3", 24, 200, 256, 200, 4, 8, 1, 3);
    one_case("ddr destination", 33, 130, 130, 160, 2, 11, 0, 5);
    one_case("one byte rows", 70, 1, 1, 1, 1, 70, 1, 64);
    one_case("over 65535 rows: split", 70000, 1, 1, 1, 1, 70000, 1, 64);
    one_case("over 65535 rows, batches of 1", 70000, 2, 2, 2, 2, 70000, 1, 1);
    for (int i = 0; i < 20; i++) {
        uint32_t rows = 1 + rnd() % 60, width = 1 + rnd() % 700;
        uint32_t ss = width + rnd() % 300, ds = width + rnd() % 64;
        one_case("random", rows, width, ss, ds, 1 + (int)(rnd() % 4), 1 + (int)(rnd() % rows), (int)(rnd() & 1),
                 1 + (int)(rnd() % 8));
    }
    /* 16-bit fields: refused before anything moves */
    static uint8_t a[4], b[4];
    hx_copy_desc big = {a, b, 1, 65536, 65536, 65536, NULL}, ok1 = {a, b, 1, 65535, 65535, 65535, NULL};
    hx_copy_desc chained = {a, b, 1, 4, 4, 4, &big};
    report("row bytes 65536 refused", !hx_dma_chain_fits(&big), "");
    report("a later link too wide refuses the chain", !hx_dma_chain_fits(&chained), "");
    report("65535 accepted", hx_dma_chain_fits(&ok1), "");
    d_trials(1, 1);
    d_trials(1, 3);
    d_trials(2, 2);
    d_trials(2, 3);
    env.src_bypass_ddr = 1; /* D's source policy bypass: DDR sources bypassed, still cleaned at set-up only */
    d_trials(1, 3);
    one_case("bypass policy, ddr destination", 33, 130, 130, 160, 2, 11, 0, 5);
    env.src_bypass_ddr = 0;
    back_to_back();
    resets();
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
