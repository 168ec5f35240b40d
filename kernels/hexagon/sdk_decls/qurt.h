/* Declarations only (sdk_decls/README.md): the QuRT names this project uses,
 * from qurt_thread.h, qurt_futex.h, qurt_hvx.h, qurt_cycles.h,
 * qurt_memory.h, qurt_sysenv.h and qurt_timer.h. */
#ifndef HX_DECL_QURT_H
#define HX_DECL_QURT_H
#include <stddef.h>
#include <stdint.h>
#define QURT_EOK                     0
#define QURT_THREAD_ATTR_NAME_MAXLEN 16
typedef unsigned int qurt_thread_t;
typedef struct {
    char name[QURT_THREAD_ATTR_NAME_MAXLEN];
    void *stack_addr;
    unsigned int stack_size;
    unsigned short priority;
} qurt_thread_attr_t;
void qurt_thread_attr_init(qurt_thread_attr_t *attr);
void qurt_thread_attr_set_name(qurt_thread_attr_t *attr, char *name);
void qurt_thread_attr_set_stack_addr(qurt_thread_attr_t *attr, void *stack_addr);
void qurt_thread_attr_set_stack_size(qurt_thread_attr_t *attr, unsigned int stack_size);
void qurt_thread_attr_set_priority(qurt_thread_attr_t *attr, unsigned short priority);
int qurt_thread_create(qurt_thread_t *thread_id, qurt_thread_attr_t *attr, void (*entrypoint)(void *), void *arg);
int qurt_thread_join(unsigned int tid, int *status);
void qurt_thread_exit(int status);
qurt_thread_t qurt_thread_get_id(void);
int qurt_thread_get_priority(qurt_thread_t threadid);

int qurt_futex_wait(void *lock, int val);
int qurt_futex_wake(void *lock, int n_to_wake);

typedef enum { QURT_HVX_MODE_64B = 0, QURT_HVX_MODE_128B = 1 } qurt_hvx_mode_t;
int qurt_hvx_lock(qurt_hvx_mode_t lock_mode);
int qurt_hvx_try_lock(qurt_hvx_mode_t lock_mode);
int qurt_hvx_unlock(void);
int qurt_hvx_get_units(void);

void qurt_profile_enable(int enable);
unsigned long long qurt_profile_get_thread_pcycles(void);

typedef struct {
    unsigned int max_hthreads;
} qurt_sysenv_max_hthreads_t;
int qurt_sysenv_get_max_hw_threads(qurt_sysenv_max_hthreads_t *max_hthreads);

typedef unsigned int qurt_addr_t;
typedef unsigned int qurt_size_t;
typedef enum {
    QURT_MEM_CACHE_FLUSH,
    QURT_MEM_CACHE_INVALIDATE,
    QURT_MEM_CACHE_FLUSH_INVALIDATE,
    QURT_MEM_CACHE_FLUSH_ALL,
    QURT_MEM_CACHE_FLUSH_INVALIDATE_ALL,
} qurt_mem_cache_op_t;
typedef enum { QURT_MEM_ICACHE, QURT_MEM_DCACHE } qurt_mem_cache_type_t;
int qurt_mem_cache_clean(qurt_addr_t addr, qurt_size_t size, qurt_mem_cache_op_t opcode, qurt_mem_cache_type_t type);

typedef unsigned long long qurt_timer_duration_t; /* microseconds */
int qurt_timer_sleep(qurt_timer_duration_t duration);
#endif
