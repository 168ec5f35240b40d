/* Completion events: a 32-bit word set with release semantics and observed
 * with acquire semantics, so that everything the signalling engine wrote
 * before hx_event_signal() is visible to a thread that saw it signalled. */
#ifndef HX_EVENT_H
#define HX_EVENT_H
#include <stdint.h>

typedef enum { HX_WAIT_SPIN = 0, HX_WAIT_SPIN_BLOCK = 1 } hx_wait_strategy;

typedef struct hx_wait_policy {
    hx_wait_strategy strategy;
    uint64_t spin_ns; /* spin budget before sleeping (spin-block only) */
} hx_wait_policy;

typedef struct hx_event {
    uint32_t state;   /* 0 = pending, 1 = signalled; accessed atomically */
    uint32_t waiters; /* sleepers, so signal() skips the syscall when none */
} hx_event;

void hx_event_reset(hx_event *e);
void hx_event_signal(hx_event *e);
int hx_event_is_set(const hx_event *e);
void hx_event_wait(hx_event *e, const hx_wait_policy *p);

/* A counter that only grows; waiters sleep until it moves past a value they
 * saw.  Used for queue doorbells and for the host's early-completion channel. */
typedef struct hx_counter {
    uint32_t value;
    uint32_t waiters;
} hx_counter;

uint32_t hx_counter_load(const hx_counter *c);
void hx_counter_bump(hx_counter *c);
/* Returns the new value (!= seen). */
uint32_t hx_counter_wait_change(hx_counter *c, uint32_t seen, const hx_wait_policy *p);
#endif
