/* Standalone check of the HVX backend against the scalar reference.
 *
 * Build and run (see kernels/hexagon/README.md):
 *   python3 -m ziglang cc -target hexagon-linux-musl \
 *       -mcpu=hexagonv67+hvxv67+hvx_length128b -O2 \
 *       kernels/hexagon/test_hvx.c kernels/hexagon/kernels_hvx.c \
 *       kernels/common/kernels_ref.c -lm -lpthread -o test_hvx
 *   qemu-hexagon ./test_hvx
 *
 * Every integer kernel must agree with kernels_ref.c bit for bit on random
 * and edge-case inputs: odd shapes, lengths around the 128-byte vector size,
 * misaligned pointers, extreme values (0/255 for u8, -128/127 for i8,
 * -32768/32767 for int16), int32 wrap-around of the row sum, guard bytes
 * around every output.  Prints one line per case and a closing
 * "N passed, M failed" line; exits 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../common/kernels.h"

static int n_pass, n_fail;

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static void report(const char *what, int ok, const char *detail) {
    if (ok) n_pass++;
    else n_fail++;
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what, detail[0] ? ": " : "", detail);
}

#define GUARD      256
#define GUARD_BYTE 0xA5

/* Allocates bytes plus guard zones, returns a pointer misaligned by `mis`
 * bytes from a 128-byte boundary. */
static uint8_t *galloc(size_t bytes, int mis, uint8_t **base) {
    uint8_t *b = (uint8_t *)malloc(bytes + 2 * GUARD + 256);
    if (!b) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(b, GUARD_BYTE, bytes + 2 * GUARD + 256);
    uintptr_t a = ((uintptr_t)b + GUARD + 127) & ~(uintptr_t)127;
    *base = b;
    return (uint8_t *)a + mis;
}
static int guards_ok(const uint8_t *p, size_t bytes) {
    for (int i = 1; i <= GUARD / 2; i++)
        if (p[-i] != GUARD_BYTE || p[bytes + i - 1] != GUARD_BYTE) return 0;
    return 1;
}

/* ---------------------------------------------------------------- GEMM */
enum { FILL_RANDOM, FILL_MAX_POS, FILL_MAX_NEG, FILL_SMALL };

static void test_gemm(int m, int n, int k, int fill, int mis_prep, int mis_c) {
    const hx_kernels *h = hx_kernels_fast(), *r = &hx_kernels_ref;
    uint8_t *A = (uint8_t *)malloc((size_t)m * k + 1);
    int8_t *B = (int8_t *)malloc((size_t)k * n + 1);
    for (size_t i = 0; i < (size_t)m * k; i++)
        A[i] = fill == FILL_RANDOM ? (uint8_t)rnd() : fill == FILL_SMALL ? (uint8_t)(rnd() % 3) : 255;
    for (size_t i = 0; i < (size_t)k * n; i++)
        B[i] = fill == FILL_RANDOM    ? (int8_t)rnd()
               : fill == FILL_MAX_POS ? 127
               : fill == FILL_MAX_NEG ? -128
                                      : (int8_t)((int)(rnd() % 3) - 1);
    uint8_t *pb_base, *rb_base, *cb_base, *cr_base;
    size_t hpb = h->gemm_u8i8_prep_bytes(m, n, k), rpb = r->gemm_u8i8_prep_bytes(m, n, k);
    uint8_t *hp = galloc(hpb, mis_prep, &pb_base);
    uint8_t *rp = galloc(rpb, 0, &rb_base);
    size_t cbytes = (size_t)m * n * sizeof(int32_t);
    int32_t *hc = (int32_t *)galloc(cbytes, mis_c, &cb_base);
    int32_t *rc = (int32_t *)galloc(cbytes, 0, &cr_base);
    h->gemm_u8i8_prepare(A, B, m, n, k, hp);
    r->gemm_u8i8_prepare(A, B, m, n, k, rp);
    h->gemm_u8i8_run(hp, hc, m, n, k);
    r->gemm_u8i8_run(rp, rc, m, n, k);
    char what[128], detail[160] = "";
    snprintf(what, sizeof what, "gemm_u8i8 m=%d n=%d k=%d fill=%d mis_prep=%d mis_c=%d", m, n, k, fill, mis_prep,
             mis_c);
    int ok = guards_ok(hp, hpb) && guards_ok((uint8_t *)hc, cbytes);
    if (!ok) snprintf(detail, sizeof detail, "wrote outside its buffers");
    for (int i = 0; ok && i < m; i++)
        for (int j = 0; j < n; j++)
            if (hc[(size_t)i * n + j] != rc[(size_t)i * n + j]) {
                snprintf(detail, sizeof detail, "C[%d][%d] = %ld, reference %ld", i, j, (long)hc[(size_t)i * n + j],
                         (long)rc[(size_t)i * n + j]);
                ok = 0;
                break;
            }
    /* run() must be repeatable from the same prepared buffer */
    if (ok) {
        memset(hc, 0, cbytes);
        h->gemm_u8i8_run(hp, hc, m, n, k);
        if (memcmp(hc, rc, cbytes) != 0) {
            ok = 0;
            snprintf(detail, sizeof detail, "second run differs");
        }
    }
    report(what, ok, detail);
    free(A);
    free(B);
    free(pb_base);
    free(rb_base);
    free(cb_base);
    free(cr_base);
}

/* ---------------------------------------------------------------- vec_i16 */
static void test_vec(int rows, int cols, int passes, int r0, int r1, int fill, int mis) {
    const hx_kernels *h = hx_kernels_fast(), *r = &hx_kernels_ref;
    size_t nb = (size_t)rows * cols * sizeof(int16_t);
    uint8_t *xb, *hyb, *ryb;
    int16_t *x = (int16_t *)galloc(nb, 2 * mis, &xb);
    int16_t *hy = (int16_t *)galloc(nb, 2 * mis + 2, &hyb);
    int16_t *ry = (int16_t *)galloc(nb, 0, &ryb);
    for (size_t i = 0; i < (size_t)rows * cols; i++) {
        switch (fill) {
        case 0: x[i] = (int16_t)rnd(); break;
        case 1: x[i] = (int16_t)(i & 0xFFFF); break; /* every int16 value */
        case 2: x[i] = 32767; break;
        case 3: x[i] = -32768; break;
        case 4: x[i] = (int16_t)((int)(rnd() % 12289) - 6144); break; /* around the knees */
        default: x[i] = (i & 1) ? -32768 : 32767; break;
        }
    }
    int32_t *hs = (int32_t *)malloc(sizeof(int32_t) * rows), *rs = (int32_t *)malloc(sizeof(int32_t) * rows);
    int16_t *hm = (int16_t *)malloc(sizeof(int16_t) * rows), *rm = (int16_t *)malloc(sizeof(int16_t) * rows);
    for (int i = 0; i < rows; i++) {
        hs[i] = rs[i] = 0x5A5A5A5A;
        hm[i] = rm[i] = 0x5A5A;
    }
    memset(hy, 0x11, nb);
    memset(ry, 0x11, nb);
    h->vec_i16(x, hy, hs, hm, cols, passes, r0, r1);
    r->vec_i16(x, ry, rs, rm, cols, passes, r0, r1);
    char what[128], detail[160] = "";
    snprintf(what, sizeof what, "vec_i16 rows=%d cols=%d passes=%d rows[%d,%d) fill=%d mis=%d", rows, cols, passes, r0,
             r1, fill, mis);
    int ok = guards_ok((uint8_t *)hy, nb);
    if (!ok) snprintf(detail, sizeof detail, "wrote outside y");
    for (size_t i = 0; ok && i < (size_t)rows * cols; i++)
        if (hy[i] != ry[i]) {
            snprintf(detail, sizeof detail, "y[%zu] = %d, reference %d (x = %d)", i, hy[i], ry[i], x[i]);
            ok = 0;
        }
    for (int i = 0; ok && i < rows; i++)
        if (hs[i] != rs[i] || hm[i] != rm[i]) {
            snprintf(detail, sizeof detail, "row %d: sum %ld max %d, reference sum %ld max %d", i, (long)hs[i], hm[i],
                     (long)rs[i], rm[i]);
            ok = 0;
        }
    report(what, ok, detail);
    free(xb);
    free(hyb);
    free(ryb);
    free(hs);
    free(rs);
    free(hm);
    free(rm);
}

/* ---------------------------------------------------------------- copy2d */
static void test_copy(int rows, int row_bytes, int src_stride, int dst_stride, int desc_rows, int mis_src,
                      int mis_dst) {
    const hx_kernels *h = hx_kernels_fast(), *r = &hx_kernels_ref;
    size_t sb = (size_t)rows * src_stride, db = (size_t)rows * dst_stride;
    uint8_t *sbase, *hbase, *rbase;
    uint8_t *src = galloc(sb, mis_src, &sbase);
    uint8_t *hd = galloc(db, mis_dst, &hbase);
    uint8_t *rd = galloc(db, mis_dst, &rbase);
    for (size_t i = 0; i < sb; i++) src[i] = (uint8_t)rnd();
    memset(hd, 0x3C, db);
    memset(rd, 0x3C, db);
    int nd = (rows + desc_rows - 1) / desc_rows;
    hx_copy_desc *hdesc = (hx_copy_desc *)calloc((size_t)nd + 1, sizeof *hdesc);
    hx_copy_desc *rdesc = (hx_copy_desc *)calloc((size_t)nd + 1, sizeof *rdesc);
    for (int d = 0; d < nd; d++) {
        int rr = d * desc_rows, cnt = rows - rr < desc_rows ? rows - rr : desc_rows;
        hx_copy_desc c = {src + (size_t)rr * src_stride, NULL, (uint32_t)cnt, (uint32_t)row_bytes, (uint32_t)src_stride,
                          (uint32_t)dst_stride,          NULL};
        hdesc[d] = c;
        hdesc[d].dst = hd + (size_t)rr * dst_stride;
        hdesc[d].next = d + 1 < nd ? &hdesc[d + 1] : NULL;
        rdesc[d] = c;
        rdesc[d].dst = rd + (size_t)rr * dst_stride;
        rdesc[d].next = d + 1 < nd ? &rdesc[d + 1] : NULL;
    }
    h->copy2d(nd ? hdesc : NULL);
    r->copy2d(nd ? rdesc : NULL);
    char what[160], detail[160] = "";
    snprintf(what, sizeof what, "copy2d rows=%d row_bytes=%d src_stride=%d dst_stride=%d desc_rows=%d mis=%d/%d", rows,
             row_bytes, src_stride, dst_stride, desc_rows, mis_src, mis_dst);
    int ok = guards_ok(hd, db);
    if (!ok) snprintf(detail, sizeof detail, "wrote outside the destination");
    for (size_t i = 0; ok && i < db; i++)
        if (hd[i] != rd[i]) { /* also catches writes into the stride gaps */
            snprintf(detail, sizeof detail, "dst byte %zu = %u, reference %u", i, hd[i], rd[i]);
            ok = 0;
        }
    report(what, ok, detail);
    free(sbase);
    free(hbase);
    free(rbase);
    free(hdesc);
    free(rdesc);
}

/* ---------------------------------------------------------------- fp32 */
static void test_f32(void) {
    const hx_kernels *h = hx_kernels_fast(), *r = &hx_kernels_ref;
    int m = 7, n = 9, k = 5;
    float A[7 * 5], B[5 * 9], hc[7 * 9], rc[7 * 9];
    for (int i = 0; i < m * k; i++) A[i] = (float)((int)(rnd() % 200) - 100) / 16.0f;
    for (int i = 0; i < k * n; i++) B[i] = (float)((int)(rnd() % 200) - 100) / 16.0f;
    size_t pb = h->gemm_f32_prep_bytes(m, n, k);
    void *hp = malloc(pb), *rp = malloc(r->gemm_f32_prep_bytes(m, n, k));
    h->gemm_f32_prepare(A, B, m, n, k, hp);
    r->gemm_f32_prepare(A, B, m, n, k, rp);
    h->gemm_f32_run(hp, hc, m, n, k);
    r->gemm_f32_run(rp, rc, m, n, k);
    report("gemm_f32 (reference path) 7x9x5", memcmp(hc, rc, sizeof hc) == 0, "");
    float x[3 * 10], hy[30], ry[30], hs[3], rs[3], hm[3], rm[3];
    for (int i = 0; i < 30; i++) x[i] = (float)((int)(rnd() % 200) - 100) / 10.0f;
    h->vec_f32(x, hy, hs, hm, 10, 2, 0, 3);
    r->vec_f32(x, ry, rs, rm, 10, 2, 0, 3);
    report("vec_f32 (reference path) 3x10",
           memcmp(hy, ry, sizeof hy) == 0 && memcmp(hs, rs, sizeof hs) == 0 && memcmp(hm, rm, sizeof hm) == 0, "");
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    printf("backend: %s\n", hx_kernels_fast()->name);

    /* GEMM: shapes around the 4-deep k step, the 32-column panel, the
     * 4-row x 2-panel micro-kernel and their tails. */
    static const int shapes[][3] = {
        {1, 1, 1},    {1, 32, 4},     {4, 64, 4},   {3, 5, 7},    {5, 33, 9},    {4, 31, 3},  {8, 96, 12}, {7, 65, 13},
        {17, 65, 31}, {13, 100, 129}, {32, 32, 32}, {64, 64, 64}, {33, 97, 130}, {2, 200, 1}, {6, 1, 300},
    };
    int ns = (int)(sizeof shapes / sizeof shapes[0]);
    for (int s = 0; s < ns; s++) test_gemm(shapes[s][0], shapes[s][1], shapes[s][2], FILL_RANDOM, s % 7, 4 * (s % 3));
    test_gemm(9, 70, 37, FILL_MAX_POS, 1, 0);   /* 255 * 127 */
    test_gemm(9, 70, 37, FILL_MAX_NEG, 0, 4);   /* 255 * -128 */
    test_gemm(5, 40, 1000, FILL_MAX_NEG, 3, 0); /* large k, large magnitude */
    test_gemm(12, 48, 20, FILL_SMALL, 0, 0);
    if (!quick) {
        test_gemm(128, 128, 128, FILL_RANDOM, 0, 0);
        test_gemm(100, 130, 250, FILL_RANDOM, 5, 8);
    }

    /* vec_i16: the exhaustive int16 sweep, the knees at +-4096, saturating
     * extremes, cols around 64-halfword vectors, row ranges, misalignment. */
    test_vec(1, 65536, 1, 0, 1, 1, 0);
    test_vec(4, 16384, 1, 0, 4, 1, 1);
    test_vec(2, 65536, 3, 0, 2, 1, 0);
    static const int colsv[] = {1, 2, 63, 64, 65, 127, 128, 129, 191, 1000, 1024};
    for (int i = 0; i < (int)(sizeof colsv / sizeof colsv[0]); i++) {
        test_vec(5, colsv[i], 1 + i % 3, 0, 5, 0, i % 2);
        test_vec(6, colsv[i], 1, 2, 5, 4, 1);
    }
    test_vec(3, 300, 2, 0, 3, 2, 0);   /* all 32767 */
    test_vec(3, 300, 2, 0, 3, 3, 1);   /* all -32768 */
    test_vec(3, 301, 1, 0, 3, 5, 0);   /* alternating extremes */
    test_vec(2, 70000, 1, 0, 2, 2, 0); /* 70000 * 32767 wraps int32 */
    test_vec(4, 256, 0, 0, 4, 0, 0);   /* zero passes: plain reduction */
    test_vec(4, 256, 32, 1, 3, 4, 1);  /* many passes */
    test_vec(4, 100, 1, 2, 2, 0, 0);   /* empty row range */

    /* copy2d: row lengths around 128-byte vectors, strides, chains. */
    static const int rbv[] = {1, 5, 127, 128, 129, 255, 256, 511, 512, 513, 1000, 2048, 4099};
    for (int i = 0; i < (int)(sizeof rbv / sizeof rbv[0]); i++) {
        int rb = rbv[i];
        test_copy(9, rb, rb, rb, 4, 0, 0);
        test_copy(7, rb, 2 * rb + 3, rb + 1, 3, i % 5, (3 * i) % 7);
        test_copy(5, rb, rb + 130, 2 * rb, 64, 1, 127);
    }
    test_copy(0, 64, 64, 64, 4, 0, 0);
    test_copy(64, 2048, 4096, 2048, 64, 0, 0);

    test_f32();

    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
