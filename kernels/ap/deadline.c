#include "deadline.h"
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static int started;
static hx_deadline_hook hook_fn;
static void *hook_ctx;
/* the armed call: what, its bound and when it expires (CLOCK_MONOTONIC);
 * what == NULL: nothing armed */
static const char *armed_what;
static double armed_s;
static struct timespec armed_at;
static unsigned long generation, armed_count;

static struct timespec after(double s) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long long ns = (long long)(s * 1e9);
    t.tv_sec += (time_t)(ns / 1000000000LL);
    t.tv_nsec += (long)(ns % 1000000000LL);
    if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
    return t;
}

static int passed(const struct timespec *at) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > at->tv_sec || (now.tv_sec == at->tv_sec && now.tv_nsec >= at->tv_nsec);
}

static void *watchdog(void *arg) {
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        if (!armed_what) {
            pthread_cond_wait(&cv, &mu);
            continue;
        }
        unsigned long gen = generation;
        struct timespec at = armed_at;
        pthread_cond_timedwait(&cv, &mu, &at);
        /* still the same call, and its time is up */
        if (armed_what && gen == generation && passed(&at)) {
            const char *what = armed_what;
            double s = armed_s;
            hx_deadline_hook h = hook_fn;
            void *ctx = hook_ctx;
            pthread_mutex_unlock(&mu);
            fprintf(stderr,
                    "hxrun-ap: error: %s did not return within %.3g s: the DSP may have crashed or hung (a FastRPC "
                    "call cannot be cancelled, so the process ends; see the DSP log, logcat -s adsprpc)\n",
                    what, s);
            fflush(stderr);
            if (h) h(what, s, ctx);
            _exit(HX_DEADLINE_EXIT);
        }
    }
    return NULL;
}

int hx_deadline_init(hx_deadline_hook hook, void *ctx) {
    pthread_mutex_lock(&mu);
    hook_fn = hook, hook_ctx = ctx;
    int rc = 0;
    if (!started) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&cv, &ca);
        pthread_condattr_destroy(&ca);
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&t, &a, watchdog, NULL) == 0 ? 0 : -1;
        pthread_attr_destroy(&a);
        __atomic_store_n(&started, rc == 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void hx_deadline_arm(const char *what, double seconds) {
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE) && hx_deadline_init(NULL, NULL)) {
        fprintf(stderr, "hxrun-ap: warning: no watchdog thread: %s runs without a time bound\n", what);
        return;
    }
    pthread_mutex_lock(&mu);
    armed_what = what ? what : "a FastRPC call";
    armed_s = seconds > 0 ? seconds : 1e-3;
    armed_at = after(armed_s);
    generation++, armed_count++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

void hx_deadline_disarm(void) {
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE)) return; /* never armed */
    pthread_mutex_lock(&mu);
    armed_what = NULL;
    generation++;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

unsigned long hx_deadline_armed_count(void) {
    pthread_mutex_lock(&mu);
    unsigned long n = armed_count;
    pthread_mutex_unlock(&mu);
    return n;
}
