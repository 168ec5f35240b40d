/* Platform layer: the only place that knows about the OS.
 *
 * The executor, kernels and protocol call these functions and nothing else
 * OS-specific.  platform_posix*.c implement them for Linux (host and
 * hexagon-linux-musl under QEMU; four files by concern, platform_posix.c
 * lists them); hexagon/platform_qurt.c implements them on
 * the cDSP with QuRT and HAP (SDK only). */
#ifndef HX_PLATFORM_H
#define HX_PLATFORM_H
#include <stddef.h>
#include <stdint.h>

/* Monotonic clock in nanoseconds since an arbitrary origin. */
uint64_t hx_now_ns(void);
/* CPU time consumed by the calling thread, ns (calibration tasks busy-wait on
 * this so that oversubscribed cores serialise them honestly). */
uint64_t hx_thread_cpu_ns(void);
/* 0 where per-thread CPU time does not advance on this platform (QuRT: an
 * unsigned PD may read 0 pcycles): the records then say null, not 0. */
int hx_thread_cpu_available(void);
/* Resolution the OS claims for hx_now_ns, ns. */
uint64_t hx_clock_resolution_ns(void);
const char *hx_clock_source(void);

typedef struct hx_thread hx_thread;
typedef void (*hx_thread_fn)(void *arg);
/* core < 0: let the OS place the thread.  Returns NULL and fills err on failure. */
hx_thread *hx_thread_start(hx_thread_fn fn, void *arg, const char *name, int core, char *err, size_t errlen);
void hx_thread_join(hx_thread *t);
/* Pins the calling thread; returns 0 on success. */
int hx_pin_self(int core);
/* Core the calling thread runs on right now, or -1 where the platform cannot
 * tell.  Recorded at the begin and end of every task, so a timeline can show
 * which core ran it (and a migration in between). */
int hx_current_cpu(void);

/* Wait primitives on a 32-bit word (futex semantics): sleep while *addr ==
 * expected (spurious wake-ups allowed); wake every sleeper on addr. */
void hx_word_wait(uint32_t *addr, uint32_t expected);
void hx_word_wake_all(uint32_t *addr);
/* As hx_word_wait, but for at most timeout_ns (UINT64_MAX: no limit).
 * POSIX targets only: its caller, hxserve's dispatcher, is not built for the
 * cDSP. */
void hx_word_wait_timeout(uint32_t *addr, uint32_t expected, uint64_t timeout_ns);
/* Sleeps at least ns (POSIX targets only, as above). */
void hx_sleep_ns(uint64_t ns);
/* Asks the OS to fire the calling process's timers within ns of their time
 * instead of its default slack (Linux: 50 us), which would otherwise be added
 * to every timed wait; a no-op where there is no such setting. */
void hx_set_timer_slack_ns(unsigned long ns);
/* One iteration of a polite spin loop. */
void hx_cpu_relax(void);
void hx_yield(void);

/* Parallel execution units the OS offers: online cores on POSIX; on the cDSP
 * hardware threads, which are not cores (they share a core's pipeline).
 * hx_cores_key is the meta record's key for the count ("online_cores" or
 * "hw_threads") and hx_cores_words what it counts, in words. */
int hx_online_cores(void);
/* The most threads that may be ready to run at once, or 0 for no limit.
 * POSIX: 0 (the kernel time-slices threads of equal priority).  QuRT: the
 * hardware thread count (qurt_sysenv_get_max_hw_threads): QuRT does not
 * time-slice ready threads of one priority, and `pause` hands no hardware
 * thread to another software thread, so a thread beyond that count may never
 * run while the others spin.  There, starting an engine or antagonist that
 * would exceed it is an error (hx_thread_start), and so are spin waits
 * (hx_engine_start: a spinning waiter never gives its hardware thread up). */
int hx_max_ready_threads(void);
const char *hx_cores_key(void);
const char *hx_cores_words(void);
/* Writes a human-readable CPU model into buf. */
void hx_cpu_model(char *buf, size_t len);
/* Machine state that affects timings; -1 / "unknown" where not readable. */
double hx_load_average_1min(void);
/* Cores kept busy by everything on the machine during the next `ms`
 * milliseconds (the caller idles meanwhile, so this is other work); -1 where
 * unreadable.  Unlike the 1-minute load average it does not remember the
 * previous sweep point's run. */
double hx_busy_cores(unsigned ms);
/* Time the hypervisor gave this machine's cores to someone else while they
 * wanted to run (steal, the eighth number of /proc/stat's "cpu" line, summed
 * over the cores), ns so far; -1 where the platform has no such reading.  A
 * stolen core runs nothing of ours, yet neither a thread's CPU clock nor
 * cpuacct advances while it is stolen, so only this shows it. */
int64_t hx_steal_ns(void);
void hx_cpu_governor(char *buf, size_t len);

/* Interference evidence: what the runner can observe of other work on its
 * cores (docs/runner.md, `interference`).  Every reader returns -1 where the
 * platform cannot tell: never a made-up 0, which would read as "no other
 * work".
 *
 * CPU time every thread of every process has run on the listed cores since
 * an arbitrary origin, ns. */
int64_t hx_cores_busy_ns(const int *cores, int ncores);
/* Where hx_cores_busy_ns reads ("unavailable" where it cannot), and the
 * granularity of its values in ns (0 where unavailable). */
const char *hx_cores_busy_source(void);
uint64_t hx_cores_busy_resolution_ns(void);
/* CPU time of this whole process, all its threads, ns.  Read before
 * hx_cores_busy_ns so that the calling thread's own running time is
 * accounted in both (POSIX: the same kernel update charges both). */
int64_t hx_process_cpu_ns(void);
/* Involuntary context switches so far: of the calling thread, of the whole
 * process (the scheduler took the core from a runnable thread). */
int64_t hx_thread_involuntary_switches(void);
int64_t hx_process_involuntary_switches(void);
/* The cores this process may run on (its affinity mask before any pinning):
 * fills cores[0..n) and returns n, or -1 where the platform cannot tell. */
int hx_allowed_cores(int *cores, int max);
/* Name of the target this binary was built for ("host", "hexagon-qemu", ...). */
const char *hx_platform_name(void);

/* 1 if path names a directory, else 0.  hx_make_dir creates one (mode 0777
 * less the umask); returns 0, or -1 (it may already exist). */
int hx_is_directory(const char *path);
int hx_make_dir(const char *path);

void *hx_alloc(size_t bytes, size_t align);
void hx_free(void *p);
/* Memory for the scratch arena: plain memory on POSIX, VTCM on the cDSP
 * (hexagon/vtcm_qurt.c).  *on_chip says whether it really is on-chip. */
void *hx_scratch_alloc(size_t bytes, int *on_chip);
void hx_scratch_free(void *p);

/* Clock calibration.  Where the platform derives times from a core clock it
 * calibrated (the cDSP: thread CPU time = pcycles / cycles per us, measured
 * against the QTimer at start-up), hx_clock_calibration_start is that
 * start-up value and hx_clock_calibrate measures it again now (about 2 ms;
 * the runner does so after the last trial, so thermal throttling during the
 * run is seen).  Both are cycles per us, 0 where the platform calibrates
 * nothing (POSIX: its clocks read ns). */
double hx_clock_calibration_start(void);
double hx_clock_calibrate(void);

/* Preemption.  A higher-priority client of the NPU (a QNN/HTP session, the
 * camera) may ask this run to give its on-chip resources back; QuRT's
 * resource manager does so through the HAP_compute_res release callback and
 * asks for the release within 5 ms.  hx_release_ask records the request
 * (callback-safe: an atomic store and a clock read, no lock, no wait); the
 * runner polls hx_release_asked at every trial boundary (a trial cannot give
 * VTCM back while engines use it) and then calls hx_release_resources, which
 * gives everything on-chip back at once, and ends the run.  POSIX holds
 * nothing on-chip and no resource manager calls it there: only the runner's
 * test hook (--preempt-at-trial) does.  hx_release_asked returns 1 once a
 * request came, with its time (hx_now_ns) in *at_ns. */
void hx_release_ask(void);
int hx_release_asked(uint64_t *at_ns);
void hx_release_resources(void);
/* Gives back what the calling engine thread holds of the on-chip units, from
 * that thread: on the cDSP the HMX lock, which only its locking thread may
 * use or unlock (HAP_compute_res.h).  Engine threads call it when they exit.
 * Nothing on POSIX.  hx_release_helper_set registers what
 * hx_release_resources runs first to have each engine thread do so (the
 * executor: a job on its `mx` engine that calls hx_engine_release_self);
 * NULL unregisters.  hx_release_helper_run runs it, if any (release.c). */
void hx_engine_release_self(void);
/* A device failure that ends the run (the cDSP's hx_device_fatal: a HexKL
 * error, a DMA fault, an HMX lock on the wrong thread).  Recorded, first one
 * wins, callback- and thread-safe, never exit(): a worker that exits kills
 * the PD (in mode ap the AP then sees a dead session, not the reason) and
 * skips the resource releases.  The runner checks hx_failure after set-up
 * (an error before any trial) and at the end (the end record's status
 * device_error, the reason in resources.device_failure). release.c. */
void hx_failure_set(const char *msg);
const char *hx_failure(void);
void hx_release_helper_set(void (*fn)(void *ctx), void *ctx);
void hx_release_helper_run(void);

/* Writes the object "resources" into the open JSON record: what the run
 * really held and used on this platform (power votes, on-chip memory, matrix
 * engine and DMA use, vector contexts, fallbacks taken).  Same keys on every
 * platform, null where the platform has no such resource.  Called once, when
 * the run is over, so the counts are final. */
struct hx_json;
void hx_platform_resources(struct hx_json *j);
#endif
