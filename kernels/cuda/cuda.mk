# hxrun-cuda, the GPU runner (docs/gpu.md), included by kernels/Makefile.
#   make -C kernels cuda                 build/<TARGET>/hxrun-cuda (any TARGET; records target gpu
#                                        unless TARGET is gpu or gpu-graph)
#   make -C kernels TARGET=gpu           build/gpu/hxrun (the same binary, for the pipeline)
# NVCC: the CUDA compiler (the machine's, or the PyPI one:
#   pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl
# puts it at <site-packages>/nvidia/cu13/bin/nvcc; hxfuse.config.gpu finds it).
# CUDA_ARCH: the GPU's compute capability without the dot, from nvidia-smi
# when a GPU is present, else 90 (Hopper: TMA bulk copies need sm_90).
NVCC ?= nvcc
CUDA_ARCH ?= $(or $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' .'),90)
NVCCFLAGS ?= -O3 -std=c++17 -gencode arch=compute_$(CUDA_ARCH),code=sm_$(CUDA_ARCH) -Xcompiler -Wall
CUDA_TARGET_NAME := $(if $(filter 1,$(HX_CUDA)),$(TARGET),gpu)
CUDA_C_SRC := common/json.c common/npy.c common/checksum.c common/cli.c common/record.c common/release.c $(POSIX_PLATFORM_SRC)
CUDA_C_OBJ := $(patsubst %.c,$(OBJDIR)/%.o,$(CUDA_C_SRC))
CUDA_SRC := cuda/hxrun_cuda.cu
CUDA_H := $(wildcard cuda/*.cuh) $(COMMON_H)
CUDA_DEFS = -DHX_COMPILER='"$(NVCC_NAME)"' -DHX_CFLAGS='"$(NVCCFLAGS)"' -DHX_PLATFORM_NAME='"$(CUDA_TARGET_NAME)"' \
            -DHX_GPU_B_DEFAULT='"$(HX_GPU_B)"'
HX_GPU_B ?= streams
NVCC_NAME = $(shell $(NVCC) --version 2>/dev/null | grep -m1 release)
CUDA_FLAGS_LINE = $(NVCC) $(NVCCFLAGS) $(CUDA_DEFS)

$(BUILD)/cuda-flags: FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' $(call sh_quote,$(CUDA_FLAGS_LINE)) | cmp -s - $@ || printf '%s\n' $(call sh_quote,$(CUDA_FLAGS_LINE)) > $@

$(BUILD)/hxrun-cuda: $(CUDA_SRC) $(CUDA_H) $(CUDA_C_OBJ) $(BUILD)/cuda-flags
	@command -v $(firstword $(NVCC)) >/dev/null 2>&1 || { echo "hxrun-cuda needs nvcc, and '$(NVCC)' is not found: install the CUDA toolkit, or pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl and set NVCC=<site-packages>/nvidia/cu13/bin/nvcc" >&2; exit 2; }
	$(NVCC) $(NVCCFLAGS) $(CUDA_DEFS) -Icommon -Icuda -o $@ $(CUDA_SRC) $(CUDA_C_OBJ) -ldl -lpthread

cuda: $(BUILD)/hxrun-cuda
.PHONY: cuda

ifeq ($(HX_CUDA),1)
$(BUILD)/hxrun: $(BUILD)/hxrun-cuda
	cp $< $@
SOURCES-hxrun = $(sort $(CUDA_SRC) $(CUDA_H) $(CUDA_C_SRC) cuda/cuda.mk targets/gpu.mk)
endif
