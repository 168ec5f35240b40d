/* A time bound on a call that cannot be cancelled: the FastRPC methods and
 * the teardown of hxrun-ap (open, SETUP, START, CONTROL, STOP, close,
 * dspqueue_close).
 *
 * A FastRPC call blocks in the kernel driver until the DSP answers; after a
 * DSP crash or a hang in the skel it may never return, and nothing in the
 * public API interrupts it (remote_handle64_invoke has no timeout; quic/
 * fastrpc's fastrpc_apps_user.c waits in the driver's ioctl).  The only
 * bound that holds is to end the process: a watchdog thread that, when the
 * armed call overruns, names it (stderr and an optional hook, e.g. the end
 * record), and calls _exit.  The kernel then releases the process's FastRPC
 * session (the driver cleans up a dead client's handles).
 *
 *   hx_deadline_arm("CONTROL PING", 60.0);
 *   rc = hxfuse_control(...);
 *   hx_deadline_disarm();
 *
 * One call is armed at a time (arming again replaces it: the calls are made
 * from one thread, the driver's); arm and disarm are cheap (a mutex and a
 * condition signal), so every method may be bounded. */
#ifndef HX_AP_DEADLINE_H
#define HX_AP_DEADLINE_H

/* The process's exit status when a bounded call overran. */
#define HX_DEADLINE_EXIT 1

/* Called once on the watchdog thread when `what` overran `seconds` (the
 * armed call still blocks on another thread: the hook must not wait for
 * it, nor take a lock it may hold).  It may write a last record; the
 * process exits when it returns. */
typedef void (*hx_deadline_hook)(const char *what, double seconds, void *ctx);

/* Starts the watchdog (once; later calls only replace the hook).  Returns
 * 0, or -1 when the thread cannot be started. */
int hx_deadline_init(hx_deadline_hook hook, void *ctx);

/* Bounds the next call: `what` (kept by pointer: a string literal or one
 * that lives until disarm) must return within `seconds` (> 0).  Starts the
 * watchdog with no hook when init was not called. */
void hx_deadline_arm(const char *what, double seconds);
void hx_deadline_disarm(void);

/* For the tests: how many calls were armed, and the exit status used. */
unsigned long hx_deadline_armed_count(void);
#endif
