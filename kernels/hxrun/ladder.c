/* The log and watchdog every first-day ladder shares (ladder.h). */
#include "ladder.h"
#include <stdio.h>
#include <stdlib.h>
#include "json.h"
#include "platform.h"

static void out_lock(hx_ladder *l) {
    while (__atomic_exchange_n(&l->lock, 1u, __ATOMIC_ACQUIRE)) hx_cpu_relax();
}
static void out_unlock(hx_ladder *l) { __atomic_store_n(&l->lock, 0u, __ATOMIC_RELEASE); }

const char *hx_ladder_status_name(int s) {
    return s == HX_LADDER_PASS   ? "pass"
           : s == HX_LADDER_FAIL ? "fail"
           : s == HX_LADDER_NA   ? "not available on this target"
                                 : "?";
}

void hx_ladder_record(hx_ladder *l, int i, const char *status, const char *detail, double ms) {
    char line[600];
    snprintf(line, sizeof line, "%s%-*s %s%s%s", l->log_prefix, l->name_width, l->name(i), status,
             detail && detail[0] ? ": " : "", detail ? detail : "");
    l->log(line);
    out_lock(l);
    hx_json j;
    hx_json_begin(&j, l->out);
    hx_json_str(&j, "record", "selftest_step");
    hx_json_i64(&j, "index", i);
    hx_json_str(&j, "step", l->name(i));
    hx_json_str(&j, "status", status);
    if (detail) hx_json_str(&j, "detail", detail);
    if (ms >= 0) hx_json_f64(&j, "ms", ms);
    hx_json_end(&j);
    fflush(l->out);
    out_unlock(l);
}

static void list(hx_ladder *l, hx_json *j, const char *key, int want, int hung) {
    hx_json_arr(j, key);
    for (int i = 0; i < l->n; i++)
        if (l->status[i] == want && (i != hung || l->hung_in_not_run)) hx_json_str(j, NULL, l->name(i));
    hx_json_close(j, ']');
}

/* The one record of what passed; hung: the step the watchdog named, or -1. */
static void summary(hx_ladder *l, int hung) {
    int failed = -1;
    for (int i = 0; i < l->n && failed < 0; i++)
        if (l->status[i] == HX_LADDER_FAIL) failed = i;
    out_lock(l);
    hx_json j;
    hx_json_begin(&j, l->out);
    hx_json_str(&j, "record", "selftest");
    hx_json_str(&j, "status", hung >= 0 ? "hang" : failed >= 0 ? "failed" : "ok");
    hx_json_str(&j, "target", hx_platform_name());
    if (l->mode) hx_json_str(&j, "mode", l->mode);
    list(l, &j, "passed", HX_LADDER_PASS, hung);
    list(l, &j, "failed", HX_LADDER_FAIL, hung);
    if (l->lists_na) list(l, &j, "not_available", HX_LADDER_NA, hung);
    list(l, &j, "not_run", HX_LADDER_NOT_RUN, hung);
    hx_json_str(&j, "first_failure", failed >= 0 ? l->name(failed) : NULL);
    hx_json_str(&j, "hung", hung >= 0 ? l->name(hung) : NULL);
    hx_json_f64(&j, "step_timeout_s", (double)l->timeout_ns / 1e9);
    hx_json_end(&j);
    fflush(l->out);
    out_unlock(l);
}

/* A step that does not return within the timeout cannot be stopped from
 * here (it may sit in the kernel or on a DSP resource): name it, write the
 * summary, end the process. */
static void watchdog(void *arg) {
    hx_ladder *l = arg;
    while (!__atomic_load_n(&l->done, __ATOMIC_ACQUIRE)) {
        l->sleep_ms(20);
        int i = __atomic_load_n(&l->current, __ATOMIC_ACQUIRE);
        if (i < 0 || hx_now_ns() - __atomic_load_n(&l->t0, __ATOMIC_RELAXED) < l->timeout_ns) continue;
        char d[160];
        snprintf(d, sizeof d, "no result after %.1f s: this step hangs (named by the watchdog)",
                 (double)l->timeout_ns / 1e9);
        hx_ladder_record(l, i, "hang", d, -1);
        summary(l, i);
        fclose(l->out);
        _Exit(5);
    }
}

struct hx_thread *hx_ladder_start(hx_ladder *l, char *err, size_t errlen) {
    l->current = -1;
    l->done = 0;
    for (int i = 0; i < l->n; i++) l->status[i] = HX_LADDER_NOT_RUN;
    return hx_thread_start(watchdog, l, "st_watchdog", -1, err, errlen);
}

void hx_ladder_begin(hx_ladder *l, int i) {
    hx_ladder_record(l, i, "running", NULL, -1);
    __atomic_store_n(&l->t0, hx_now_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(&l->current, i, __ATOMIC_RELEASE);
}

void hx_ladder_end(hx_ladder *l, int i, int status, const char *detail) {
    __atomic_store_n(&l->current, -1, __ATOMIC_RELEASE);
    l->status[i] = status;
    hx_ladder_record(l, i, hx_ladder_status_name(status), detail,
                     (double)(hx_now_ns() - __atomic_load_n(&l->t0, __ATOMIC_RELAXED)) / 1e6);
}

int hx_ladder_finish(hx_ladder *l, struct hx_thread *wd) {
    __atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
    if (wd) hx_thread_join(wd);
    summary(l, -1);
    int failed = 0;
    for (int i = 0; i < l->n; i++) failed |= l->status[i] == HX_LADDER_FAIL;
    return fclose(l->out) != 0 || failed ? 1 : 0;
}
