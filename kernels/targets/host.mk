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
# The tuned backend: the generic vector-extension kernels, and on x86-64
# AVX2 and AVX-512 variants chosen at run time (common/kernels_host_x86.c).
# Each variant file is compiled for its own ISA (ISA_CFLAGS, added after
# CFLAGS), not the build machine's, so a binary built on an AVX-512 machine
# still runs its AVX2 variant on an AVX2 one, and one built on an AVX2
# machine carries the AVX-512 variant.
ifneq ($(filter x86_64-% amd64-%,$(shell $(CC) -dumpmachine)),)
FAST_SRC := common/kernels_host.c common/kernels_host_x86.c common/kernels_host_avx2.c common/kernels_host_avx512.c
%/kernels_host_avx2.o: ISA_CFLAGS := -mavx2 -mfma -mno-avx512f
%/kernels_host_avx512.o: ISA_CFLAGS := -mavx2 -mfma -mavx512f -mavx512vl -mavx512bw -mavx512dq
else
FAST_SRC := common/kernels_host.c common/kernels_host_any.c
endif
PLATFORM_SRC := $(POSIX_PLATFORM_SRC)
SELFTEST_SRC := hxrun/selftest_posix.c hxrun/selftest_host.c
RUN_PREFIX :=
