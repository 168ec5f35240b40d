#include "record.h"
#include "json.h"
#include "platform.h"

#include <math.h>
#include "rng.h"

int hx_out_open(hx_out *o, const char *prog, const char *path) {
    o->prog = prog, o->path = path;
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp", path);
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        fprintf(stderr, "%s: error: cannot open %s for writing\n", prog, o->tmp);
        return -1;
    }
    return 0;
}

int hx_out_close(hx_out *o, int rc, const char *err) {
    char werr[1024];
    if (fclose(o->f) != 0 && rc == 0) {
        snprintf(werr, sizeof werr, "write error on %.900s", o->tmp);
        err = werr, rc = 1;
    }
    o->f = NULL;
    if (rc == 1) {
        fprintf(stderr, "%s: error: %s\n", o->prog, err);
        remove(o->tmp);
        return 1;
    }
    if (rename(o->tmp, o->path) != 0) {
        fprintf(stderr, "%s: error: cannot rename %s to %s\n", o->prog, o->tmp, o->path);
        return 1;
    }
    return rc;
}

/* The steal reading and the time at hx_record_before: a run writes one meta
 * and one end record, so one pair per process. */
static int64_t steal_at_start = -1;
static uint64_t steal_since_ns;

void hx_record_before(hx_json *j) {
    hx_json_f64(j, "load_average_before", hx_load_average_1min());
    hx_json_f64(j, "other_busy_cores_before", hx_busy_cores(200));
    steal_at_start = hx_steal_ns();
    steal_since_ns = hx_now_ns();
}

/* Share of the cores' time between the two records that the hypervisor took
 * (0: none, 1: all of every core); NaN (written null) where unreadable. */
static double steal_share(void) {
    int64_t s1 = hx_steal_ns();
    uint64_t t1 = hx_now_ns();
    int cores = hx_online_cores();
    if (steal_at_start < 0 || s1 < steal_at_start || t1 <= steal_since_ns || cores < 1) return NAN;
    return (double)(s1 - steal_at_start) / ((double)cores * (double)(t1 - steal_since_ns));
}

void hx_record_after(hx_json *j) {
    hx_json_f64(j, "load_average_after", hx_load_average_1min());
    hx_json_f64(j, "other_busy_cores_after", hx_busy_cores(200));
    hx_json_f64(j, "steal_share", steal_share());
}

void hx_record_end_begin(hx_json *j, FILE *f, const char *status) {
    hx_json_begin_end_record(j, f);
    hx_json_str(j, "status", status);
}

void hx_record_clock_drift(hx_json *j, double start, double end) {
    if (!(start > 0) || !(end > 0)) {
        hx_json_null(j, "clock_drift");
        return;
    }
    double drift = end / start - 1.0;
    hx_json_obj(j, "clock_drift");
    hx_json_f64(j, "cycles_per_us_start", start);
    hx_json_f64(j, "cycles_per_us_end", end);
    hx_json_f64(j, "drift", drift);
    hx_json_f64(j, "tolerance", HX_CLOCK_DRIFT_TOL);
    hx_json_bool(j, "drifted", drift > HX_CLOCK_DRIFT_TOL || drift < -HX_CLOCK_DRIFT_TOL);
    hx_json_close(j, '}');
}

void hx_shuffle(int *a, int n, uint64_t *state) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(hx_splitmix64(state) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[j], a[j] = t;
    }
}

void hx_record_emulated(hx_json *j) {
#ifdef HX_EMULATED
    hx_json_bool(j, "emulated", 1);
#else
    hx_json_bool(j, "emulated", 0);
#endif
}
