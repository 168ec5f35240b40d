/* The loopback tests' checks (test_queue.c, test_skel.c): a failed check
 * names its file, line and condition and ends the test at once. */
#ifndef HX_LOOPBACK_TEST_CHECK_H
#define HX_LOOPBACK_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                            \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)
#define RC(expr, want)                                                                                                 \
    do {                                                                                                               \
        int rc_ = (expr);                                                                                              \
        CHECK(rc_ == (want), "got %d, want %d", rc_, (want));                                                          \
    } while (0)
#endif
