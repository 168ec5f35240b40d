/* POSIX/Linux implementation of platform.h: threads and their placement
 * (pthreads, sched_setaffinity), futex waits, and the per-thread readings
 * (current core, involuntary switches).  The rest of the POSIX platform:
 * platform_posix.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "platform.h"

struct hx_thread {
    pthread_t tid;
    hx_thread_fn fn;
    void *arg;
    int core;
    int pin_rc;       /* errno of the thread's own pinning, 0 on success */
    uint32_t started; /* set once pin_rc is valid */
    char name[16];
};
/* The thread pins itself before it runs anything and reports the result, so
 * that a core the process may not use fails hx_thread_start with a message
 * instead of leaving the engine floating.  A floating thread inherits the
 * creator's mask: the host pins itself only after the engines exist. */
static void *trampoline(void *p) {
    hx_thread *t = (hx_thread *)p;
    int rc = t->core >= 0 && hx_pin_self(t->core) != 0 ? errno : 0;
    t->pin_rc = rc;
    __atomic_store_n(&t->started, 1u, __ATOMIC_RELEASE);
    if (rc == 0) t->fn(t->arg);
    return NULL;
}
hx_thread *hx_thread_start(hx_thread_fn fn, void *arg, const char *name, int core, char *err, size_t errlen) {
    hx_thread *t = (hx_thread *)calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory creating thread %s", name);
        return NULL;
    }
    t->fn = fn;
    t->arg = arg;
    t->core = core;
    snprintf(t->name, sizeof t->name, "%s", name);
    int rc = pthread_create(&t->tid, NULL, trampoline, t);
    if (rc != 0) {
        snprintf(err, errlen, "pthread_create(%s): %s", name, strerror(rc));
        free(t);
        return NULL;
    }
    pthread_setname_np(t->tid, t->name);
    while (!__atomic_load_n(&t->started, __ATOMIC_ACQUIRE)) hx_yield();
    if (t->pin_rc != 0) {
        snprintf(err, errlen, "cannot pin thread %s to core %d: %s", name, core, strerror(t->pin_rc));
        pthread_join(t->tid, NULL);
        free(t);
        return NULL;
    }
    return t;
}
void hx_engine_release_self(void) {} /* no on-chip units on POSIX (platform.h) */
void hx_thread_join(hx_thread *t) {
    if (!t) return;
    pthread_join(t->tid, NULL);
    free(t);
}
int hx_pin_self(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -1;
}
void hx_word_wait(uint32_t *addr, uint32_t expected) {
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}
void hx_word_wait_timeout(uint32_t *addr, uint32_t expected, uint64_t timeout_ns) {
    struct timespec ts, *tp = NULL;
    if (timeout_ns != UINT64_MAX) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000u), ts.tv_nsec = (long)(timeout_ns % 1000000000u);
        tp = &ts;
    }
    /* FUTEX_WAIT's timeout is relative */
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, tp, NULL, 0);
}
void hx_word_wake_all(uint32_t *addr) { syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0); }
void hx_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
void hx_yield(void) { sched_yield(); }
int hx_current_cpu(void) { return sched_getcpu(); }
static int64_t nivcsw(int who) {
    struct rusage ru;
    return getrusage(who, &ru) == 0 ? (int64_t)ru.ru_nivcsw : -1;
}
int64_t hx_thread_involuntary_switches(void) { return nivcsw(RUSAGE_THREAD); }
int64_t hx_process_involuntary_switches(void) { return nivcsw(RUSAGE_SELF); }
int hx_allowed_cores(int *cores, int max) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cores[n++] = c;
    return n;
}
