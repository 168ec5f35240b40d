/* The trial checksum (see kernels.h).  A position-weighted sum rather than a
 * byte-serial hash: it is cheap enough to run after every trial and numpy can
 * recompute it in vectorised form. */
#include <string.h>
#include "kernels.h"

uint64_t hx_checksum(const void *data, size_t bytes) {
    const uint8_t *p = (const uint8_t *)data;
    uint64_t h = 0;
    size_t words = bytes / 8, i;
    for (i = 0; i < words; i++) {
        uint64_t w;
        memcpy(&w, p + 8 * i, 8); /* little-endian on every target we build */
        h += (w ^ 0x9E3779B97F4A7C15ull) * (((uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull) | 1ull);
    }
    if (bytes % 8) {
        uint64_t w = 0;
        memcpy(&w, p + 8 * words, bytes % 8);
        h += (w ^ 0x9E3779B97F4A7C15ull) * (((uint64_t)(words + 1) * 0xBF58476D1CE4E5B9ull) | 1ull);
    }
    return h;
}
