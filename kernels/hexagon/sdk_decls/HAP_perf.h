/* Declarations only (sdk_decls/README.md). */
#ifndef HX_DECL_HAP_PERF_H
#define HX_DECL_HAP_PERF_H
#include <stdint.h>
uint64_t HAP_perf_get_qtimer_count(void);
uint64_t HAP_perf_qtimer_count_to_us(uint64_t count);
uint64_t HAP_perf_get_pcycles(void);
uint64_t HAP_perf_get_time_us(void);
#endif
