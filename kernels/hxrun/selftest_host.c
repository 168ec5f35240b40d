/* The self-test's backend part on the host: the host SIMD kernels have no
 * device engines to probe (their exactness is tests/ territory), so every
 * engine step of the ladder is "not available on this target". */
#include "selftest.h"

const hx_st_step hx_st_backend_steps[] = {{NULL, NULL}};
