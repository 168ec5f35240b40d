/* Memory references for benchmarks/bench_bandwidth.py, measured in the same
 * run as the runner's tasks:
 *   read    single-thread streaming read of a buffer far larger than the
 *           last-level cache (what one thread can pull from DDR);
 *   copy2d  the D pattern done with plain memcpy per row: `rows` rows of
 *           `row_bytes` out of a source with `stride`, window after window
 *           of a cold source (larger than the caches) into one destination
 *           window, exactly as hxrun's --d-repeat streams it.
 * With --antagonist N, N extra threads stream-read their own buffers during
 * every measurement (the runner's --antagonist, for a like-for-like effect).
 * Prints one JSON object: medians over --reps of bytes per second.
 *
 *   cc -O3 -march=native -pthread bwref.c -o bwref
 *   ./bwref --read-mib 256 --rows 1024 --row-bytes 2048 --stride 4096 --repeat 32 --reps 7 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *must(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 128, bytes)) {
        fprintf(stderr, "bwref: cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    memset(p, 1, bytes); /* fault every page in before timing */
    return p;
}

/* Four independent sums keep several loads in flight (as the antagonist). */
static uint64_t read_all(const uint64_t *p, size_t words) {
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= words; i += 4) s0 += p[i], s1 += p[i + 1], s2 += p[i + 2], s3 += p[i + 3];
    for (; i < words; i++) s0 += p[i];
    return s0 + s1 + s2 + s3;
}

static volatile int stop_antagonists;
static void *antagonist(void *arg) {
    size_t words = (size_t)64 << 17; /* 64 MiB */
    uint64_t *b = must(words * 8);
    volatile uint64_t sink = 0;
    (void)arg;
    while (!stop_antagonists) sink += read_all(b, words);
    free(b);
    return NULL;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    size_t read_mib = 256, rows = 1024, row_bytes = 2048, stride = 4096, repeat = 32;
    int reps = 7, nant = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        long v = atol(argv[i + 1]);
        if (v <= 0 && strcmp(argv[i], "--antagonist")) { fprintf(stderr, "bwref: bad %s\n", argv[i]); return 2; }
        if (!strcmp(argv[i], "--read-mib")) read_mib = (size_t)v;
        else if (!strcmp(argv[i], "--rows")) rows = (size_t)v;
        else if (!strcmp(argv[i], "--row-bytes")) row_bytes = (size_t)v;
        else if (!strcmp(argv[i], "--stride")) stride = (size_t)v;
        else if (!strcmp(argv[i], "--repeat")) repeat = (size_t)v;
        else if (!strcmp(argv[i], "--reps")) reps = (int)v;
        else if (!strcmp(argv[i], "--antagonist")) nant = (int)v;
        else { fprintf(stderr, "bwref: unknown option %s\n", argv[i]); return 2; }
    }
    if (reps > 64 || nant > 8 || stride < row_bytes) { fprintf(stderr, "bwref: bad arguments\n"); return 2; }
    size_t words = read_mib << 17;
    uint64_t *rb = must(words * 8);
    uint8_t *src = must(rows * stride * repeat), *dst = must(rows * row_bytes);
    pthread_t th[8];
    for (int i = 0; i < nant; i++) pthread_create(&th[i], NULL, antagonist, NULL);

    double rd[64], cp[64];
    volatile uint64_t sink = read_all(rb, words); /* warm the TLB, not the caches: the buffer is larger */
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = now_ns();
        sink += read_all(rb, words);
        rd[r] = (double)words * 8 / ((now_ns() - t0) * 1e-9);
        /* the copy: each pass streams every window of a source far larger
         * than the caches, so it is cold as in hxrun's alone-D trials */
        t0 = now_ns();
        for (size_t w = 0; w < repeat; w++)
            for (size_t i = 0; i < rows; i++)
                memcpy(dst + i * row_bytes, src + (w * rows + i) * stride, row_bytes);
        cp[r] = (double)rows * row_bytes * repeat / ((now_ns() - t0) * 1e-9);
        sink += dst[r % (rows * row_bytes)];
    }
    stop_antagonists = 1;
    for (int i = 0; i < nant; i++) pthread_join(th[i], NULL);
    qsort(rd, (size_t)reps, sizeof rd[0], cmp);
    qsort(cp, (size_t)reps, sizeof cp[0], cmp);
    printf("{\"read_bytes_per_s\": %.6g, \"read_min\": %.6g, \"read_max\": %.6g, "
           "\"copy2d_bytes_per_s\": %.6g, \"copy2d_min\": %.6g, \"copy2d_max\": %.6g, "
           "\"read_bytes\": %zu, \"copy2d_bytes\": %zu, \"antagonists\": %d, \"sink\": %llu}\n",
           rd[reps / 2], rd[0], rd[reps - 1], cp[reps / 2], cp[0], cp[reps - 1], words * 8,
           rows * row_bytes * repeat, nant, (unsigned long long)(sink & 1));
    return 0;
}
