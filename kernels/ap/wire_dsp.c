/* The skel's side of the wire (wire.h): the set-up reply and the task
 * records, filled from the DSP executor.  Executor times are ns since
 * x->epoch; what crosses is the absolute DSP clock after the test transform,
 * so the AP needs nothing of the DSP's epoch but dsp_epoch itself. */
#include <stdio.h>
#include <string.h>
#include "json.h"
#include "platform.h"
#include "record.h"
#include "wire.h"

uint64_t hx_wire_xform_apply(const hx_wire_xform *xf, uint64_t t) {
    if (t == 0) return 0; /* "never stamped" stays so */
    if (!xf || (xf->offset_ns == 0 && xf->drift_ppm == 0.0)) return t;
    double since = (double)(int64_t)(t - xf->t0);
    int64_t drift = (int64_t)(xf->drift_ppm * since / 1e6);
    uint64_t r = t + (uint64_t)xf->offset_ns + (uint64_t)drift; /* two's complement: signed add */
    return r ? r : 1;                                           /* a real stamp never reads as "never" */
}

/* ns since the executor's epoch -> transformed absolute DSP time. */
static uint64_t dsp_time(const hx_exec *x, const hx_wire_xform *xf, uint64_t t) {
    return t ? hx_wire_xform_apply(xf, x->epoch + t) : 0;
}

static void copy_name(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

/* meta.device of the run, as the DSP sees itself (protocol.c's write_machine
 * and write_clock keys; the AP writes the text into its meta record). */
static int device_json(char *buf, size_t cap, const hx_exec *x) {
    char model[256];
    hx_cpu_model(model, sizeof model);
    hx_json j;
    hx_json_begin_buf(&j, buf, cap);
    hx_json_str(&j, "target", hx_platform_name());
    hx_record_emulated(&j);
    hx_json_str(&j, "kernels", x->kern->name);
    hx_json_str(&j, "kernels_choice", x->kern->choice);
    hx_json_str(&j, "compiler", HX_COMPILER);
    hx_json_str(&j, "cflags", HX_CFLAGS);
    hx_json_str(&j, "cpu_model", model);
    hx_json_i64(&j, hx_cores_key(), hx_online_cores());
    hx_json_str(&j, "cores_words", hx_cores_words());
    hx_json_obj(&j, "clock");
    hx_json_str(&j, "source", hx_clock_source());
    hx_json_u64(&j, "resolution_ns", hx_clock_resolution_ns());
    double cal = hx_clock_calibration_start();
    if (cal > 0) hx_json_f64(&j, "core_cycles_per_us", cal);
    else hx_json_null(&j, "core_cycles_per_us");
    hx_json_close(&j, '}');
    hx_json_bool(&j, "thread_cpu_available", hx_thread_cpu_available());
    hx_json_end(&j);
    return j.truncated ? -1 : 0;
}

void hx_wire_fill_setup(hx_wire_setup_resp *r, const hx_exec *x, const hx_wire_xform *xf) {
    memset(r, 0, sizeof *r);
    r->version = HX_WIRE_VERSION;
    r->dsp_epoch = hx_wire_xform_apply(xf, x->epoch);
    copy_name(r->kernels, sizeof r->kernels, x->kern->name);
    copy_name(r->kernels_choice, sizeof r->kernels_choice, x->kern->choice);
    r->nvworkers = x->nvworkers;
    r->thread_cpu_available = hx_thread_cpu_available();
    for (int i = 0; i < x->nvworkers && i < HX_MAX_VWORKERS; i++)
        copy_name(r->vworker_name[i], sizeof r->vworker_name[i], x->vworker[i].name);
    for (int i = 0; i < HX_NTASKS; i++) {
        const hx_task *t = &x->task[i];
        copy_name(r->engine_name[i], sizeof r->engine_name[i], t->engine ? t->engine->name : NULL);
        r->calib_ns[i] = t->calib_ns;
    }
    r->arena_capacity = x->arena.capacity;
    r->arena_on_chip = x->arena.on_chip;
    for (int s = 0; s < HX_ARENA_SLOTS; s++) {
        copy_name(r->slot_name[s], sizeof r->slot_name[s], x->arena.slot_name[s]);
        r->slot_bytes[s] = x->arena.slot_bytes[s];
    }
    r->m_prep_bytes = x->m.prep_bytes;
    r->m_prep_ns = x->m.prep_ns; /* a duration: not a clock reading */
    r->d_dst_stride = x->d.dst_stride;
    r->d_ndesc = x->d.ndesc;
    r->d_dst_bytes = x->d.dst_bytes;
    r->v_in_scratch = x->v.in_scratch;
    r->v_stream_is_ref = x->v.stream_is_ref;
    /* A cut description would reach meta.device as invalid JSON: refuse the
     * run instead of recording half a machine. */
    if (device_json(r->device_json, sizeof r->device_json, x) != 0) {
        r->status = 1;
        snprintf(r->error, sizeof r->error, "the DSP's device description does not fit in %u bytes (wire.h)",
                 (unsigned)sizeof r->device_json);
    }
}

static void pack_worker(hx_wire_worker *w, const hx_worker_rec *s, const hx_exec *x, const hx_wire_xform *xf) {
    copy_name(w->engine, sizeof w->engine, s->engine);
    w->begin = dsp_time(x, xf, s->begin);
    w->end = dsp_time(x, xf, s->end);
    w->cpu_ns = s->cpu_ns;
    w->cpu_begin = s->cpu_begin, w->cpu_end = s->cpu_end;
    w->switches = s->switches;
    w->nckpt = s->nckpt < HX_CKPT_CAP ? s->nckpt : HX_CKPT_CAP;
    w->ckpt_total = s->ckpt_total;
}

void hx_wire_pack_ckpts(hx_wire_ckpts *c, const hx_task *t, const hx_exec *x, const hx_wire_xform *xf) {
    memset(c, 0, sizeof *c);
    int nw = t->nworkers < HX_MAX_VWORKERS ? t->nworkers : HX_MAX_VWORKERS;
    for (int i = 0; i < nw; i++) {
        const hx_worker_rec *s = &t->workers[i];
        int n = s->nckpt < HX_CKPT_CAP ? s->nckpt : HX_CKPT_CAP;
        for (int k = 0; k < n; k++) {
            c->ckpt[i][k] = dsp_time(x, xf, s->ckpt[k]);
            c->done[i][k] = s->ckpt_done[k];
        }
    }
}

void hx_wire_pack_task(hx_wire_task *w, const hx_task *t, const hx_exec *x, const hx_wire_xform *xf) {
    memset(w, 0, sizeof *w);
    w->id = (uint32_t)t->id;
    w->cpu_begin = t->cpu_begin, w->cpu_end = t->cpu_end;
    w->nworkers = t->nworkers < HX_MAX_VWORKERS ? t->nworkers : HX_MAX_VWORKERS;
    copy_name(w->ran_on, sizeof w->ran_on, t->ran_on);
    w->launch = dsp_time(x, xf, t->launch);
    w->begin = dsp_time(x, xf, t->begin);
    w->end = dsp_time(x, xf, t->end);
    w->cpu_ns = t->cpu_ns;
    w->switches = t->switches;
    for (int i = 0; i < w->nworkers; i++) pack_worker(&w->workers[i], &t->workers[i], x, xf);
}
