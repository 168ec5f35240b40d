/* An engine: one device-side thread serving one work queue (the analogue of a
 * Hexagon HMX queue, HVX work queue or DMA queue).  Producers push jobs and
 * ring a doorbell; the engine sleeps on the doorbell per the wait policy. */
#ifndef HX_ENGINE_H
#define HX_ENGINE_H
#include "event.h"
#include "platform.h"

#define HX_QUEUE_CAP 64u

struct hx_engine;
typedef struct hx_job {
    void (*run)(struct hx_job *job, struct hx_engine *engine);
} hx_job;

typedef struct hx_engine {
    char name[16];
    int core;
    hx_job *ring[HX_QUEUE_CAP];
    uint32_t head; /* next slot the engine pops */
    uint32_t tail; /* next slot a producer fills */
    uint32_t lock; /* producers may be the host or another engine */
    hx_counter doorbell;
    uint32_t stop;
    const hx_wait_policy *wait;
    hx_thread *thread;
} hx_engine;

int hx_engine_start(hx_engine *e, const char *name, int core, const hx_wait_policy *wait, char *err, size_t errlen);
/* Queues a job and rings the doorbell.  Returns 0, or -1 when HX_QUEUE_CAP
 * jobs are queued and not yet taken: the job is then not queued and the
 * caller decides what to do.  hxrun has at most one job per task and V
 * worker of a trial on an engine, far below the capacity; hxserve keeps the
 * excess in its own backlog; hxgraph, whose graphs may put up to
 * HXG_MAX_NODES nodes on one engine, yields until the engine takes one
 * (engines never wait on the pusher, so room always comes). */
int hx_engine_push(hx_engine *e, hx_job *job);
void hx_engine_stop(hx_engine *e);
#endif
