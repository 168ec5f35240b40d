# Hexagon v67 + 128-byte HVX, Linux/musl user mode, run under qemu-hexagon.
#   make -C kernels TARGET=hexagon-qemu   ->  build/hexagon-qemu/hxrun
#   qemu-hexagon kernels/build/hexagon-qemu/hxrun --precision u8i8 ...
# EMULATED: QEMU is a functional model.  Its timings are not Hexagon
# performance; results from this target are for correctness only.
#
# Tools: zig from PyPI (pip install ziglang==0.17.1) and Debian's qemu-user
# (apt-get install qemu-user), which provides qemu-hexagon for v66/v67 ELF.
# Do not pass -mhvx to zig cc (it crashes); the -mcpu feature form below
# enables HVX.  QEMU has no HVX floating point: the HVX backend is integer
# only and its fp32 entries fall back to scalar code (use --precision u8i8).
ZIG ?= python3 -m ziglang
HEXAGON_QEMU_CPU ?= hexagonv67+hvxv67+hvx_length128b
ZIG_VERSION := $(shell $(ZIG) version 2>/dev/null)
ifeq ($(ZIG_VERSION),)
$(error TARGET=hexagon-qemu needs zig: pip install ziglang==0.17.1 (or set ZIG to a zig command))
endif
CC := $(ZIG) cc -target hexagon-linux-musl
CC_NAME := zig $(ZIG_VERSION) cc -target hexagon-linux-musl -mcpu=$(HEXAGON_QEMU_CPU)
CFLAGS := -mcpu=$(HEXAGON_QEMU_CPU) -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread
LDFLAGS := -static -pthread -lm
# Every record of this target says it is emulated (see protocol.c).
TARGET_DEFS := -DHX_EMULATED=1 -DHX_CPU_MODEL='"Hexagon $(HEXAGON_QEMU_CPU) emulated by qemu-hexagon"'
FAST_SRC := hexagon/kernels_hvx.c
PLATFORM_SRC := src/platform_posix.c
# How to execute the binary on this machine (the pipeline prefixes hxrun with it).
QEMU_HEXAGON ?= qemu-hexagon
RUN_PREFIX := $(QEMU_HEXAGON)
