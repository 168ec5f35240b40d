# Hexagon v73 (or v67) + 128-byte HVX, Linux/musl user mode, run under qemu-hexagon.
#   make -C kernels TARGET=hexagon-qemu   ->  build/hexagon-qemu/hxrun
#   qemu-hexagon kernels/build/hexagon-qemu/hxrun --precision u8i8 ...
# EMULATED: QEMU is a functional model.  Its timings are not Hexagon
# performance; results from this target are for correctness only.
#
# Tools: zig from PyPI (pip install ziglang==0.17.1) and qemu-hexagon from
# Debian's qemu-user.  The phones this project targets are v73, so that is
# what we emulate when the emulator can: qemu-user 10.x (Debian
# bookworm-backports: apt-get install -t bookworm-backports qemu-user) runs
# v66..v73; Debian 12's own 7.2 runs v66/v67 only.  HEXAGON_QEMU_ARCH:
#   auto (default)  v73 if `$(QEMU_HEXAGON) -cpu help` lists it, else v67
#   v73 | v67       that architecture; v73 with an emulator that lacks it is
#                   an error naming the package to install
# The architecture in use is in every record (meta.cpu_model, meta.cflags).
# Do not pass -mhvx to zig cc (it crashes); the -mcpu feature form below
# enables HVX.  QEMU has no HVX floating point (10.x aborts on it): the HVX
# backend is integer only and its fp32 entries are the scalar reference
# (use --precision u8i8).
ZIG ?= python3 -m ziglang
QEMU_HEXAGON ?= qemu-hexagon
HEXAGON_QEMU_ARCH ?= auto
QEMU_HAS_V73 := $(shell $(QEMU_HEXAGON) -cpu help 2>/dev/null | grep -qw v73 && echo yes)
ifeq ($(HEXAGON_QEMU_ARCH),auto)
override HEXAGON_QEMU_ARCH := $(if $(QEMU_HAS_V73),v73,v67)
else ifeq ($(HEXAGON_QEMU_ARCH),v73)
ifneq ($(QEMU_HAS_V73),yes)
$(error HEXAGON_QEMU_ARCH=v73 needs a qemu-hexagon that emulates v73 (qemu-user 10.x: apt-get install -t bookworm-backports qemu-user, or set QEMU_HEXAGON); '$(QEMU_HEXAGON)' does not)
endif
else ifneq ($(HEXAGON_QEMU_ARCH),v67)
$(error HEXAGON_QEMU_ARCH must be auto, v73 or v67, not '$(HEXAGON_QEMU_ARCH)')
endif
HEXAGON_QEMU_CPU ?= hexagon$(HEXAGON_QEMU_ARCH)+hvx$(HEXAGON_QEMU_ARCH)+hvx_length128b
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
PLATFORM_SRC := $(POSIX_PLATFORM_SRC)
# --selftest: the POSIX steps plus HVX against the reference and the user-DMA
# descriptors under the software model (no DMA engine in QEMU).
SELFTEST_SRC := hxrun/selftest_posix.c hexagon/selftest_hvx.c hexagon/dma_plan.c
# How to execute the binary on this machine (the pipeline prefixes hxrun with
# it); qemu-hexagon picks the CPU from the ELF's architecture flags.
RUN_PREFIX := $(QEMU_HEXAGON)
