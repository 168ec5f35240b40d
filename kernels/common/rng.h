/* splitmix64: the one generator behind input data (tasks.c) and the
 * per-round trial order (protocol.c). */
#ifndef HX_RNG_H
#define HX_RNG_H
#include <stdint.h>

static inline uint64_t hx_splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
#endif
