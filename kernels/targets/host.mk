# The CPU of the machine at hand: real timings.
CC ?= cc
ifeq ($(CC),cc)
CC_NAME := $(shell cc --version | head -n1)
else
CC_NAME := $(shell $(CC) --version | head -n1)
endif
CFLAGS ?= -O3 -march=native -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread
LDFLAGS ?= -pthread -lm
FAST_SRC := src/kernels_host.c
PLATFORM_SRC := src/platform_posix.c
SELFTEST_SRC := src/selftest_posix.c src/selftest_host.c
RUN_PREFIX :=
