# The CPU of the machine at hand: real timings.
CC ?= cc
ifeq ($(CC),cc)
CC_NAME := $(shell cc --version | head -n1)
else
CC_NAME := $(shell $(CC) --version | head -n1)
endif
# The flags are this file's, never the environment's: a conda compiler
# activation exports CFLAGS and LDFLAGS (-march=nocona -O2, no -lm), which a
# `?=` would silently take instead, building another binary (or failing to
# link).  A CFLAGS=... on make's command line (config build.cflags) still
# wins, and every run records the flags it was built with (meta cflags).
CFLAGS := -O3 -march=native -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread
LDFLAGS := -pthread -lm
FAST_SRC := common/kernels_host.c
PLATFORM_SRC := common/platform_posix.c
SELFTEST_SRC := hxrun/selftest_posix.c hxrun/selftest_host.c
RUN_PREFIX :=
