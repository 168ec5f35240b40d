#include <stdio.h>
#include <string.h>
#include "antagonist.h"

/* Reads one 1 MiB block at a time and checks the flag in between: a pause
 * takes effect within about one block (tens of microseconds), and each
 * block's bytes are counted whole.  Four independent sums let the compiler
 * keep several loads in flight (a single chain would be latency-bound). */
#define BLOCK_WORDS ((size_t)1 << 17)

static void antagonist_main(void *arg) {
    hx_antagonist *a = (hx_antagonist *)arg;
    hx_antagonists *s = a->set;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t pos = 0;
    for (;;) {
        if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) break;
        if (!__atomic_load_n(&s->active, __ATOMIC_ACQUIRE)) {
            hx_word_wait(&s->active, 0);
            continue;
        }
        size_t end = pos + BLOCK_WORDS < a->words ? pos + BLOCK_WORDS : a->words;
        const uint64_t *p = a->buf;
        size_t i = pos;
        for (; i + 4 <= end; i += 4) s0 += p[i], s1 += p[i + 1], s2 += p[i + 2], s3 += p[i + 3];
        for (; i < end; i++) s0 += p[i];
        __atomic_store_n(&a->bytes, a->bytes + (end - pos) * 8, __ATOMIC_RELAXED);
        pos = end == a->words ? 0 : end;
    }
    a->sink = s0 + s1 + s2 + s3;
}

int hx_antagonists_start(hx_antagonists *s, const hx_config *cfg, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < cfg->antagonists; i++) {
        hx_antagonist *a = &s->t[i];
        a->set = s, a->index = i;
        a->words = cfg->antagonist_bytes / 8;
        a->buf = (uint64_t *)hx_alloc(a->words * 8, 128);
        if (!a->buf) {
            snprintf(err, errlen, "cannot allocate %zu bytes for antagonist bw%d", cfg->antagonist_bytes, i);
            return -1;
        }
        /* touch every page now: first-touch faults must not count as streaming */
        for (size_t w = 0; w < a->words; w++) a->buf[w] = w * 0x9E3779B97F4A7C15ull;
        char name[16];
        snprintf(name, sizeof name, "bw%d", i);
        a->thread = hx_thread_start(antagonist_main, a, name, cfg->affinity[HX_ENG_BW(i)], err, errlen);
        if (!a->thread) return -1;
        s->n = i + 1;
    }
    return 0;
}

void hx_antagonists_set_active(hx_antagonists *s, int on) {
    if (!s->n || __atomic_load_n(&s->active, __ATOMIC_RELAXED) == (uint32_t)on) return;
    uint64_t now = hx_now_ns();
    if (on) s->active_since = now;
    else s->active_ns += now - s->active_since;
    __atomic_store_n(&s->active, (uint32_t)on, __ATOMIC_RELEASE);
    if (on) hx_word_wake_all(&s->active);
}

uint64_t hx_antagonists_bytes(const hx_antagonists *s) {
    uint64_t b = 0;
    for (int i = 0; i < s->n; i++) b += __atomic_load_n(&s->t[i].bytes, __ATOMIC_RELAXED);
    return b;
}

void hx_antagonists_stop(hx_antagonists *s) {
    __atomic_store_n(&s->stop, 1u, __ATOMIC_RELEASE);
    __atomic_store_n(&s->active, 1u, __ATOMIC_RELEASE); /* wake sleepers so they see stop */
    hx_word_wake_all(&s->active);
    for (int i = 0; i < HX_MAX_ANTAGONISTS; i++) {
        if (s->t[i].thread) hx_thread_join(s->t[i].thread);
        s->t[i].thread = NULL;
        hx_free(s->t[i].buf);
        s->t[i].buf = NULL;
    }
    s->n = 0;
}
