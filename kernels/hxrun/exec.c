/* The executor's lifecycle: prepare the tasks, start the engines and the
 * fused entry, and stop them again.  What the tasks are and compute lives in
 * tasks.c, what runs on the engines in exec_device.c, how the host submits in
 * exec_host.c. */
#include <stdio.h>
#include <string.h>
#include "exec.h"
#include "json.h"
#include "platform.h"
#include "record.h"

/* A job that runs hx_engine_release_self on the engine it is pushed to: the
 * suspend signal of llama.cpp's HMX queue (ggml/src/ggml-hexagon/htp/
 * hmx-queue.c, HMX_QUEUE_SUSPEND: hmx_unlock on the worker thread). */
typedef struct {
    hx_job job;
    hx_event done;
} release_job;

static void release_self(hx_job *job, hx_engine *e) {
    (void)e;
    hx_engine_release_self();
    hx_event_signal(&((release_job *)job)->done);
}

/* hx_release_resources' helper (platform.h, hx_release_helper_set): at a
 * trial boundary the engines are idle; the mx engine gives its HMX lock back
 * on its own thread before the context is released. */
static void release_engines(void *ctx) {
    hx_exec *x = (hx_exec *)ctx;
    if (!x->mx.thread) return;
    static release_job j;
    j.job.run = release_self;
    hx_event_reset(&j.done);
    if (hx_engine_push(&x->mx, &j.job) == 0) hx_event_wait(&j.done, &x->cfg->wait);
}

int hx_exec_setup(hx_exec *x, const hx_config *cfg, const hx_kernels *kern, char *err, size_t errlen) {
    memset(x, 0, sizeof *x);
    x->cfg = cfg;
    x->kern = kern;
    x->epoch = hx_now_ns();
    int rc = hx_tasks_prepare(x, err, errlen);
    if (rc != 0) return rc;

    x->nvworkers = cfg->v_workers - 1;
    /* Before the first engine pins itself (and before main pins the host):
     * the cores a floating thread may use. */
    x->nallowed = hx_allowed_cores(x->allowed, HX_MAX_CORES);
    if (hx_engine_start(&x->vec, "vec", cfg->affinity[HX_ENG_VEC], &cfg->wait, err, errlen) ||
        hx_engine_start(&x->mx, "mx", cfg->affinity[HX_ENG_MX], &cfg->wait, err, errlen) ||
        hx_engine_start(&x->dma, "dma", cfg->affinity[HX_ENG_DMA], &cfg->wait, err, errlen))
        return -1;
    for (int i = 0; i < x->nvworkers; i++) {
        char name[16];
        snprintf(name, sizeof name, "vec%d", i + 1);
        if (hx_engine_start(&x->vworker[i], name, cfg->affinity[HX_ENG_VWORKER(i + 1)], &cfg->wait, err, errlen))
            return -1;
    }
    x->task[HX_M].engine = &x->mx, x->task[HX_V].engine = &x->vec, x->task[HX_D].engine = &x->dma;
    for (int i = 0; i < HX_NTASKS; i++) hx_task_init_jobs(&x->task[i]);
    if (hx_antagonists_start(&x->bw, cfg, err, errlen)) return -1;
    hx_fused_init(&x->fused, x);
    hx_release_helper_set(release_engines, x);
    /* Inputs are prepared: the fused entry's readiness check may pass. */
    for (int i = 0; i < HX_NTASKS; i++) __atomic_store_n(&x->task[i].ready, 1, __ATOMIC_RELEASE);
    return 0;
}

void hx_exec_teardown(hx_exec *x) {
    hx_release_helper_set(NULL, NULL);
    hx_antagonists_stop(&x->bw);
    hx_engine_stop(&x->vec);
    hx_engine_stop(&x->mx);
    hx_engine_stop(&x->dma);
    for (int i = 0; i < x->nvworkers; i++) hx_engine_stop(&x->vworker[i]);
    hx_tasks_free(x);
}

/* The in-process executor's records: everything ran here, on this platform. */
void hx_exec_write_device_meta(hx_json *j, const hx_exec *x) { (void)j, (void)x; }
const char *hx_exec_clock_source(void) { return hx_clock_source(); }
uint64_t hx_exec_clock_resolution_ns(void) { return hx_clock_resolution_ns(); }
int hx_exec_fetch_data(hx_exec *x, uint32_t mask, char *err, size_t errlen) {
    (void)x, (void)mask, (void)err, (void)errlen;
    return 0;
}
/* A device failure during the trials (platform.h, hx_failure: recorded by a
 * worker, which did not exit) is the end record's status. */
const char *hx_exec_finish(hx_exec *x, char *err, size_t errlen) {
    (void)x;
    if (!hx_failure()) return NULL;
    snprintf(err, errlen, "device error: %s", hx_failure());
    return "device_error";
}
void hx_exec_write_clock_drift(hx_json *j, hx_exec *x) {
    (void)x;
    hx_record_clock_drift(j, hx_clock_calibration_start(), hx_clock_calibrate());
}
int hx_exec_thread_cpu_available(const hx_exec *x) {
    (void)x;
    return hx_thread_cpu_available();
}
void hx_exec_write_resources(hx_json *j, hx_exec *x) {
    (void)x;
    hx_platform_resources(j);
}
