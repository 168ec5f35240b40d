/* Scratch arena: the VTCM analogue.  Every task gets a fixed slot in one
 * buffer plan computed once (so A, B, C and D share the same memory layout);
 * reserving marks slots live, and the arena tracks live and peak occupancy. */
#ifndef HX_ARENA_H
#define HX_ARENA_H
#include <stddef.h>
#include <stdint.h>

#define HX_ARENA_SLOTS 4

typedef struct hx_arena {
    size_t capacity;
    uint8_t *base;
    int on_chip; /* the platform gave real on-chip memory (VTCM) */
    const char *slot_name[HX_ARENA_SLOTS];
    size_t slot_offset[HX_ARENA_SLOTS];
    size_t slot_bytes[HX_ARENA_SLOTS];
    uint32_t live_mask;  /* atomically updated */
    uint64_t live_bytes; /* atomically updated */
    uint64_t peak_bytes; /* atomically updated */
} hx_arena;

/* Plans slots of the given sizes (64-byte aligned, names for messages).
 * Returns 0, or -1 with a message naming every task's demand on overflow. */
int hx_arena_plan(hx_arena *a, size_t capacity, int nslots, const char *const names[], const size_t bytes[], char *err,
                  size_t errlen);
void hx_arena_free(hx_arena *a);
uint8_t *hx_arena_slot(const hx_arena *a, int slot);
/* Reserve a set of slots at once.  Returns -1 if any is already live (a
 * lifetime bug, reported rather than silently sharing memory). */
int hx_arena_reserve(hx_arena *a, uint32_t mask);
void hx_arena_release(hx_arena *a, uint32_t mask);
void hx_arena_reset_peak(hx_arena *a);
uint64_t hx_arena_peak(const hx_arena *a);
/* Bytes of every slot together: what the plan reserves from the capacity. */
uint64_t hx_arena_total(const hx_arena *a);
#endif
