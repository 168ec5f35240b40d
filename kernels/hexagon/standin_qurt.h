/* What a test can ask the QuRT/HAP/HexKL stand-in (standin_qurt.c) about
 * what the code under test did.  Tests only. */
#ifndef HX_STANDIN_QURT_H
#define HX_STANDIN_QURT_H
/* Prints "qurt stand-in: VIOLATION: ..." and exits 70: where the cDSP would
 * fault and end the PD. */
void standin_violation(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Threads created so far, with the priority each was created at. */
typedef struct {
    unsigned id;
    int prio;
    char name[16];
} standin_created;
int standin_threads(const standin_created **list);
int standin_hvx_held_here(void);
/* The thread holding the HMX lock (0: none) and how many unlocks were made
 * on the locking thread. */
unsigned standin_hmx_owner(void);
int standin_hmx_unlocks(void);
/* hexkl_micro_hmx_mm_u8i8 calls so far. */
int standin_mm_calls(void);
/* HAP_power_set request types, in the order they were granted. */
int standin_power_requests(const int **types);
#endif
