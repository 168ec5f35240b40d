#include <stdio.h>
#include <string.h>
#include "arena.h"
#include "platform.h"

int hx_arena_plan(hx_arena *a, size_t capacity, int nslots, const char *const names[], const size_t bytes[], char *err,
                  size_t errlen) {
    memset(a, 0, sizeof *a);
    a->capacity = capacity;
    size_t off = 0;
    for (int i = 0; i < nslots; i++) {
        a->slot_name[i] = names[i];
        a->slot_offset[i] = off;
        a->slot_bytes[i] = bytes[i];
        off += (bytes[i] + 63) & ~(size_t)63;
    }
    if (off > capacity) {
        int n = snprintf(err, errlen, "scratch overflow: tasks need %zu bytes, arena capacity is %zu (", off, capacity);
        for (int i = 0; i < nslots && n > 0 && (size_t)n < errlen; i++)
            n += snprintf(err + n, errlen - n, "%s%s=%zu", i ? ", " : "", names[i], bytes[i]);
        if (n > 0 && (size_t)n < errlen) snprintf(err + n, errlen - n, "); raise --scratch-bytes or shrink the tasks");
        return -1;
    }
    a->base = (uint8_t *)hx_scratch_alloc(capacity ? capacity : 64, &a->on_chip);
    if (!a->base) {
        snprintf(err, errlen, "cannot allocate a scratch arena of %zu bytes", capacity);
        return -1;
    }
    return 0;
}

void hx_arena_free(hx_arena *a) {
    if (a->base) hx_scratch_free(a->base);
    a->base = NULL;
}

uint8_t *hx_arena_slot(const hx_arena *a, int slot) {
    return a->slot_bytes[slot] ? a->base + a->slot_offset[slot] : NULL;
}

static uint64_t mask_bytes(const hx_arena *a, uint32_t mask) {
    uint64_t b = 0;
    for (int i = 0; i < HX_ARENA_SLOTS; i++)
        if (mask & (1u << i)) b += a->slot_bytes[i];
    return b;
}

int hx_arena_reserve(hx_arena *a, uint32_t mask) {
    uint32_t old = __atomic_fetch_or(&a->live_mask, mask, __ATOMIC_ACQ_REL);
    if (old & mask) return -1;
    uint64_t live = __atomic_add_fetch(&a->live_bytes, mask_bytes(a, mask), __ATOMIC_ACQ_REL);
    uint64_t peak = __atomic_load_n(&a->peak_bytes, __ATOMIC_RELAXED);
    while (live > peak &&
           !__atomic_compare_exchange_n(&a->peak_bytes, &peak, live, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {}
    return 0;
}

void hx_arena_release(hx_arena *a, uint32_t mask) {
    uint32_t old = __atomic_fetch_and(&a->live_mask, ~mask, __ATOMIC_ACQ_REL);
    __atomic_sub_fetch(&a->live_bytes, mask_bytes(a, mask & old), __ATOMIC_ACQ_REL);
}

void hx_arena_reset_peak(hx_arena *a) {
    __atomic_store_n(&a->peak_bytes, __atomic_load_n(&a->live_bytes, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

uint64_t hx_arena_peak(const hx_arena *a) { return __atomic_load_n(&a->peak_bytes, __ATOMIC_ACQUIRE); }

uint64_t hx_arena_total(const hx_arena *a) { return mask_bytes(a, ~0u); }
