# An NVIDIA GPU (docs/gpu.md): the runner is hxrun-cuda (kernels/cuda/),
# CUDA C++ built with nvcc for the GPU this machine has (sm_90 on Hopper),
# copied to build/<target>/hxrun so the pipeline runs it like any runner.
# UNTESTED ON A GPU until tests/gpu/device_check.sh has run on one.
#
# The host-side C files it shares with hxrun (JSON Lines writer and digest,
# .npy writer, checksum, strict integer parser, the POSIX platform layer)
# are compiled with the machine's cc and these flags; the CUDA part with
# NVCC (kernels/cuda/cuda.mk: NVCC, CUDA_ARCH, NVCCFLAGS).
HX_CUDA := 1
CC_NAME := $(shell $(CC) --version | head -n1)
CFLAGS := -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread
LDFLAGS := -pthread -lm -ldl
FAST_SRC :=
PLATFORM_SRC := $(POSIX_PLATFORM_SRC)
SELFTEST_SRC :=
RUN_PREFIX :=
# Group B: one stream per task (gpu) or one CUDA graph with a parallel
# branch per task (gpu-graph.mk).  The runner's --b-mode overrides it.
HX_GPU_B ?= streams
