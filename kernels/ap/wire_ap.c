/* The AP's side of the wire: the mirror executor from the DSP's set-up
 * reply, and task records from its replies.  The mirror holds no task data
 * and starts no engine; it holds what protocol.c reads, with every string
 * owned by the mirror (the reply buffers are reused for the next packet). */
#include <stdio.h>
#include <string.h>
#include "wire.h"

/* The kernel table's name and choice: protocol.c reads x->kern->name and
 * ->choice; the DSP's backend is described by strings only. */
static hx_kernels mirror_kern;
static char kern_name[HX_WIRE_NAME], kern_choice[HX_WIRE_NAME];
static char slot_names[HX_ARENA_SLOTS][16];

/* Copies a fixed-size wire string, always terminated (the peer's array may
 * be full). */
static void wire_str(char *dst, size_t cap, const char *src, size_t src_cap) {
    size_t n = strnlen(src, src_cap);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* The mirror's engine of that name (vec, mx, dma, vec1..), or NULL. */
static hx_engine *engine_named(hx_exec *x, const char *name, size_t cap) {
    char n[16];
    wire_str(n, sizeof n, name, cap);
    if (!strcmp(n, x->vec.name)) return &x->vec;
    if (!strcmp(n, x->mx.name)) return &x->mx;
    if (!strcmp(n, x->dma.name)) return &x->dma;
    for (int i = 0; i < x->nvworkers; i++)
        if (!strcmp(n, x->vworker[i].name)) return &x->vworker[i];
    return NULL;
}

/* The DSP's answer to hx_thread_cpu_available (set-up reply): the records'
 * CPU times are the DSP threads'. */
static int dsp_thread_cpu = 1;
int hx_wire_thread_cpu_available(void) { return dsp_thread_cpu; }

int hx_wire_apply_setup(hx_exec *x, const hx_wire_setup_resp *r, char *err, size_t errlen) {
    if (r->version != HX_WIRE_VERSION) {
        snprintf(err, errlen, "the DSP skel speaks wire version %u, this hxrun-ap speaks %u: rebuild them together",
                 r->version, HX_WIRE_VERSION);
        return -1;
    }
    wire_str(kern_name, sizeof kern_name, r->kernels, sizeof r->kernels);
    wire_str(kern_choice, sizeof kern_choice, r->kernels_choice, sizeof r->kernels_choice);
    mirror_kern.name = kern_name;
    mirror_kern.choice = kern_choice[0] ? kern_choice : NULL;
    x->kern = &mirror_kern;
    if (r->nvworkers < 0 || r->nvworkers > HX_MAX_VWORKERS - 1) {
        snprintf(err, errlen, "the DSP reported %d extra vector workers (at most %d)", r->nvworkers,
                 HX_MAX_VWORKERS - 1);
        return -1;
    }
    /* The mirror's engines are names only: the engines run on the DSP. */
    snprintf(x->vec.name, sizeof x->vec.name, "vec");
    snprintf(x->mx.name, sizeof x->mx.name, "mx");
    snprintf(x->dma.name, sizeof x->dma.name, "dma");
    x->nvworkers = r->nvworkers;
    dsp_thread_cpu = !!r->thread_cpu_available;
    for (int i = 0; i < x->nvworkers; i++)
        wire_str(x->vworker[i].name, sizeof x->vworker[i].name, r->vworker_name[i], sizeof r->vworker_name[i]);
    for (int i = 0; i < HX_NTASKS; i++) {
        hx_task *t = &x->task[i];
        t->id = i;
        t->x = x;
        t->engine = engine_named(x, r->engine_name[i], sizeof r->engine_name[i]);
        if (!t->engine) {
            char n[16];
            wire_str(n, sizeof n, r->engine_name[i], sizeof r->engine_name[i]);
            snprintf(err, errlen, "the DSP runs task %s on an engine this driver does not know ('%s')",
                     hx_task_names[i], n);
            return -1;
        }
        t->calib_ns = r->calib_ns[i];
    }
    x->arena.capacity = r->arena_capacity;
    x->arena.on_chip = r->arena_on_chip;
    for (int i = 0; i < HX_ARENA_SLOTS; i++) {
        wire_str(slot_names[i], sizeof slot_names[i], r->slot_name[i], sizeof r->slot_name[i]);
        x->arena.slot_name[i] = slot_names[i];
        x->arena.slot_bytes[i] = r->slot_bytes[i];
    }
    x->m.prep_bytes = r->m_prep_bytes;
    x->m.prep_ns = r->m_prep_ns;
    x->d.dst_stride = r->d_dst_stride;
    x->d.ndesc = r->d_ndesc;
    x->d.dst_bytes = r->d_dst_bytes;
    x->v.in_scratch = r->v_in_scratch;
    x->v.stream_is_ref = r->v_stream_is_ref;
    return 0;
}

static const char *ran_on_name(hx_exec *x, const char *name, size_t cap) {
    hx_engine *e = engine_named(x, name, cap);
    return e ? e->name : NULL; /* an unknown or empty name: the record says null */
}

void hx_wire_unpack_task(hx_task *t, const hx_wire_task *w, hx_exec *x, hx_wire_map_fn map, void *ctx) {
    t->cpu_begin = w->cpu_begin, t->cpu_end = w->cpu_end;
    t->ran_on = ran_on_name(x, w->ran_on, sizeof w->ran_on);
    t->launch = map(ctx, w->launch);
    t->begin = map(ctx, w->begin);
    t->end = map(ctx, w->end);
    t->cpu_ns = w->cpu_ns; /* a duration: no mapping */
    t->switches = w->switches;
    int nw = w->nworkers < 0 ? 0 : w->nworkers > HX_MAX_VWORKERS ? HX_MAX_VWORKERS : w->nworkers;
    t->nworkers = nw;
    for (int i = 0; i < nw; i++) {
        const hx_wire_worker *ww = &w->workers[i];
        hx_worker_rec *r = &t->workers[i];
        r->engine = ran_on_name(x, ww->engine, sizeof ww->engine);
        r->begin = map(ctx, ww->begin);
        r->end = map(ctx, ww->end);
        r->cpu_ns = ww->cpu_ns;
        r->cpu_begin = ww->cpu_begin, r->cpu_end = ww->cpu_end;
        r->switches = ww->switches;
        r->nckpt = ww->nckpt < 0 ? 0 : ww->nckpt > HX_CKPT_CAP ? HX_CKPT_CAP : ww->nckpt;
        r->ckpt_total = ww->ckpt_total;
    }
}

void hx_wire_unpack_ckpts(hx_task *t, const hx_wire_ckpts *c, hx_wire_map_fn map, void *ctx) {
    for (int i = 0; i < t->nworkers && i < HX_MAX_VWORKERS; i++) {
        hx_worker_rec *r = &t->workers[i];
        for (int k = 0; k < r->nckpt; k++) {
            r->ckpt[k] = map(ctx, c->ckpt[i][k]);
            r->ckpt_done[k] = c->done[i][k];
        }
    }
}
