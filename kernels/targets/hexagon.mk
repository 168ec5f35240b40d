# Hexagon cDSP device build (SDK-gated).
# STATUS: written against the documented Hexagon SDK and Android NDK; its
# recipes run in CI with a stub toolchain, every DSP source compiles for v73
# and every AP source for aarch64 with the open toolchain (make -C kernels
# sdk-check); not yet run on a simulator or phone.  Which binary is which
# mode:
#   build/hexagon/hxrun             mode dsp-only: the whole runner on the cDSP
#                                   (run_main_on_hexagon), so the "host" is a
#                                   DSP thread; answers C vs D only;
#   build/hexagon/hxrun-ap          mode ap: the application-processor driver
#   build/hexagon/libhxfuse_skel.so   and its DSP skel (FastRPC + dspqueue),
#                                   the real host/engine split.
#
#   make -C kernels TARGET=hexagon HEXAGON_SDK_ROOT=... [HEXAGON_ARCH=v73] \
#        [HEXKL_ROOT=...] [HX_DEVICE_SERIAL=...|HX_DEVICE_SERIALS="s1 s2"] [HX_ALLOW_FALLBACK=1] [HX_D_SRC_CACHE=l2|bypass] \
#        [HX_HEXAGON_MODE=ap|dsp-only] [ANDROID_NDK_ROOT=...] [HX_ANDROID_API=31]
# produces build/hexagon/hxrun, a shared object for the cDSP that the SDK's
# run_main_on_hexagon executes (its main() is the runner's main()), and, in
# mode ap (the default), build/hexagon/libhxfuse_skel.so (loaded on the cDSP
# by FastRPC from ADSP_LIBRARY_PATH) and build/hexagon/hxrun-ap (an aarch64
# Android executable; it dlopens libcdsprpc.so at run time, so it is built
# against the SDK's headers only, with the NDK's clang).
# HX_HEXAGON_MODE=dsp-only builds hxrun alone and needs no NDK.  Deploy and
# run with kernels/hexagon/device.sh (adb push to HX_DEVICE_DIR, adb shell
# with ADSP_LIBRARY_PATH, adb pull of the results).
#
# Fails at once, naming what is missing, when the SDK, its compiler, the
# NDK (mode ap), adb or a device serial is absent, or when HexKL is asked for
# with tools older than 19 (HexKL's archive is LLVM 19 bitcode).
# HX_BUILD_ONLY=1 skips the adb/device checks (to compile without a phone
# attached).
#
# HX_ALLOW_FALLBACK=1 lets the runner continue when it cannot get what it
# was built for (VTCM -> DDR arena in HVX-only builds, a chain the user DMA
# cannot express -> scalar copy, a GEMM too big for the HMX region -> HVX);
# every fallback is counted in the run's resources record.  The default (0)
# stops the run with a message naming what could not be had.
HEXAGON_ARCH ?= v73
HX_DEVICE_DIR ?= /data/local/tmp/hxfuse

ifeq ($(strip $(HEXAGON_SDK_ROOT)),)
$(error TARGET=$(TARGET) needs the Qualcomm Hexagon SDK: install it (Qualcomm Package Manager / qpm-cli, Hexagon SDK 6.x; 5.x builds only without HexKL) and set HEXAGON_SDK_ROOT, e.g. `source <sdk>/setup_sdk_env.source` or `make TARGET=$(TARGET) HEXAGON_SDK_ROOT=/opt/qcom/Hexagon_SDK/6.x`)
endif
ifeq ($(wildcard $(HEXAGON_SDK_ROOT)/incs/HAP_perf.h),)
$(error HEXAGON_SDK_ROOT=$(HEXAGON_SDK_ROOT) does not look like a Hexagon SDK (no incs/HAP_perf.h))
endif
# hexagon-clang: HEXAGON_TOOLS_ROOT, else the SDK's DEFAULT_HEXAGON_TOOLS_ROOT,
# else the newest tools directory inside the SDK.
HEXAGON_TOOLS_ROOT ?= $(DEFAULT_HEXAGON_TOOLS_ROOT)
ifeq ($(strip $(HEXAGON_TOOLS_ROOT)),)
HEXAGON_TOOLS_ROOT := $(lastword $(sort $(wildcard $(HEXAGON_SDK_ROOT)/tools/HEXAGON_Tools/*)))
endif
HEXAGON_CLANG := $(HEXAGON_TOOLS_ROOT)/Tools/bin/hexagon-clang
ifeq ($(wildcard $(HEXAGON_CLANG)),)
$(error no hexagon-clang at '$(HEXAGON_CLANG)': set HEXAGON_TOOLS_ROOT to the SDK's tools/HEXAGON_Tools/<version>)
endif
# "QuIC LLVM Hexagon Clang version 19.0.04" -> 19 (SDK 5.x ships 8.x tools).
# It matters for HexKL (below); otherwise it is only recorded (CC_NAME).
HEXAGON_CLANG_VERSION := $(shell $(HEXAGON_CLANG) --version 2>/dev/null | sed -n 's/.*[Cc]lang version \([0-9][0-9.]*\).*/\1/p' | head -n1)
HEXAGON_CLANG_MAJOR := $(firstword $(subst ., ,$(HEXAGON_CLANG_VERSION)))
ifneq ($(HX_BUILD_ONLY),1)
ifneq ($(HX_NEED_DEVICE),0)
ifeq ($(shell command -v adb 2>/dev/null),)
$(error TARGET=$(TARGET) deploys with adb, which is not installed: apt-get install adb (or Android platform-tools), or set HX_BUILD_ONLY=1 to compile only)
endif
ifeq ($(strip $(HX_DEVICE_SERIAL)$(HX_DEVICE_SERIALS)),)
$(error TARGET=$(TARGET) needs the device serial: set HX_DEVICE_SERIAL (see `adb devices`) or, for a device farm, HX_DEVICE_SERIALS, or HX_BUILD_ONLY=1 to compile only)
endif
endif
endif

QURT_ARCH := compute$(HEXAGON_ARCH)
SDK_INCS := -I$(HEXAGON_SDK_ROOT)/incs -I$(HEXAGON_SDK_ROOT)/incs/stddef \
            -I$(HEXAGON_SDK_ROOT)/rtos/qurt/$(QURT_ARCH)/include/qurt \
            -I$(HEXAGON_SDK_ROOT)/rtos/qurt/$(QURT_ARCH)/include/posix \
            -I$(HEXAGON_SDK_ROOT)/libs/qprintf/inc
CC := $(HEXAGON_CLANG)
CC_NAME := $(shell $(HEXAGON_CLANG) --version 2>/dev/null | head -n1) -m$(HEXAGON_ARCH)
# gnu11, not c11: the shared code uses POSIX calls (strtok_r, strndup, mkdir)
# that a strict C mode hides, and clang 16+ rejects undeclared calls.
# Public SDK builds (llama.cpp, HexKL's examples) use the GNU default too.
CFLAGS := -m$(HEXAGON_ARCH) -mhvx -mhvx-length=128B -O2 -G0 -fPIC -std=gnu11 -Wall -Wextra \
          -DHX_HVX_NO_FAST_ENTRY $(SDK_INCS)
# No -lm: the object is loaded by the DSP's dynamic loader, which resolves
# libc/libm symbols against the system image (as Qualcomm's hexagon-mlir
# links its device libraries: -shared -fPIC -G0 only).
LDFLAGS := -shared -G0
FAST_SRC := hexagon/kernels_hvx.c hexagon/kernels_device.c hexagon/device_fatal.c
PLATFORM_SRC := hexagon/platform_qurt.c hexagon/clock_qurt.c hexagon/vtcm_qurt.c hexagon/power_qurt.c hexagon/dma_hexagon.c \
                hexagon/dma_plan.c
# --selftest: the QuRT/HAP steps (VTCM, power, HVX contexts, DMA engine,
# HMX) and the HVX steps shared with hexagon-qemu.
SELFTEST_SRC := hexagon/selftest_qurt.c hexagon/selftest_hvx.c
HX_ALLOW_FALLBACK ?= 0
ifeq ($(filter 0 1,$(HX_ALLOW_FALLBACK)),)
$(error HX_ALLOW_FALLBACK must be 0 or 1, not '$(HX_ALLOW_FALLBACK)')
endif
TARGET_DEFS += -DHX_ALLOW_FALLBACK=$(HX_ALLOW_FALLBACK)
# D's DDR source through L2 (l2, default) or bypassing the caches (bypass:
# streaming reads that do not evict M's and V's lines); recorded in every
# run's resources (udma.src_cache).
HX_D_SRC_CACHE ?= l2
ifeq ($(filter l2 bypass,$(HX_D_SRC_CACHE)),)
$(error HX_D_SRC_CACHE must be l2 or bypass, not '$(HX_D_SRC_CACHE)')
endif
TARGET_DEFS += -DHX_D_SRC_BYPASS=$(if $(filter bypass,$(HX_D_SRC_CACHE)),1,0)
# HMX needs HexKL (hexkl_micro.h, libhexkl_micro.a); without it M runs on HVX
# (kernels "hvx-nohmx+udma", and no HMX attribute or power vote is asked for).
ifneq ($(strip $(HEXKL_ROOT)),)
ifeq ($(HEXAGON_CLANG_MAJOR),)
$(error HEXKL_ROOT is set but $(HEXAGON_CLANG) --version printed no "clang version N.M": HexKL needs Hexagon tools 19 or newer (Hexagon SDK 6.x); is HEXAGON_TOOLS_ROOT a Hexagon tools directory?)
endif
ifneq ($(shell test $(HEXAGON_CLANG_MAJOR) -ge 19 && echo ok),ok)
$(error HEXKL_ROOT is set but $(HEXAGON_CLANG) is version $(HEXAGON_CLANG_VERSION): HexKL's libhexkl_micro.a is LLVM 19 bitcode and links only with Hexagon tools 19 or newer (Hexagon SDK 6.x); set HEXAGON_TOOLS_ROOT to <sdk>/tools/HEXAGON_Tools/19.x, or build without HEXKL_ROOT (M on HVX))
endif
CFLAGS += -mhmx -DHX_WITH_HEXKL=1 -I$(HEXKL_ROOT)/include
# HexKL ships one library per tools/arch pair: lib/hexagon_toolv19_v73/.
HEXKL_LIB ?= $(lastword $(sort $(wildcard $(HEXKL_ROOT)/lib/hexagon_toolv*_$(HEXAGON_ARCH)/libhexkl_micro.a)))
ifeq ($(HEXKL_LIB),)
$(error HEXKL_ROOT=$(HEXKL_ROOT) has no lib/hexagon_toolv*_$(HEXAGON_ARCH)/libhexkl_micro.a: check HEXAGON_ARCH, or set HEXKL_LIB to the library for $(HEXAGON_ARCH))
endif
ifeq ($(wildcard $(HEXKL_ROOT)/include/hexkl_micro.h),)
$(error HEXKL_ROOT=$(HEXKL_ROOT) has no include/hexkl_micro.h)
endif
FAST_SRC += hexagon/kernels_hmx.c
LDFLAGS += $(HEXKL_LIB)
endif
# The runner is a shared object: run_main_on_hexagon loads it on the cDSP.
# The same prefix runs hxrun-ap (device.sh tells the modes by the runner's name).
RUN_PREFIX := kernels/hexagon/device.sh run --

# What group B is in hxrun, mode dsp-only (recorded in every run's
# meta.group_mapping): the whole runner runs on the cDSP under
# run_main_on_hexagon, so the "host" is a cDSP thread and B's independent
# requests go to DSP-side QuRT queue threads.  The application processor's
# dspqueue/FastRPC path is hxrun-ap's (mode ap, below).
TARGET_DEFS += -DHX_GROUP_B='"dsp-only mode (hxrun under run_main_on_hexagon): one request per task to each engine'"'"'s own QuRT queue thread on the cDSP, submitted at once; the host is a cDSP thread, so the AP-side dspqueue/FastRPC concurrency is not exercised (limitation; mode ap, hxrun-ap, exercises it)"'

# Mode: ap (default) also builds the AP driver and the skel; dsp-only only
# hxrun.  targets/hexagon-sim.mk forces dsp-only: the simulator has no AP.
HX_HEXAGON_MODE ?= ap
ifeq ($(filter ap dsp-only,$(HX_HEXAGON_MODE)),)
$(error HX_HEXAGON_MODE must be ap or dsp-only, not '$(HX_HEXAGON_MODE)')
endif
ifeq ($(HX_HEXAGON_MODE),ap)
HX_AP_SPLIT := 1
# The AP compiler: the Android NDK's clang for aarch64 at API HX_ANDROID_API
# (31: Android 12, the oldest of the v73 phones' system images).  The NDK is
# ANDROID_NDK_ROOT, else the newest tools/android-ndk-* the SDK ships.
# Listing sources (print-SOURCES-*) needs no compiler: the pipeline's
# preflight names a missing NDK itself.
# (HX_NDK: ANDROID_NDK_ROOT= on the command line still finds the SDK's.)
HX_NDK := $(strip $(ANDROID_NDK_ROOT))
ifeq ($(HX_NDK),)
HX_NDK := $(lastword $(sort $(wildcard $(HEXAGON_SDK_ROOT)/tools/android-ndk-*)))
endif
HX_ANDROID_API ?= 31
AP_CC := $(HX_NDK)/toolchains/llvm/prebuilt/linux-x86_64/bin/aarch64-linux-android$(HX_ANDROID_API)-clang
ifneq ($(HX_LISTING),1)
ifeq ($(HX_NDK),)
$(error TARGET=$(TARGET) (mode ap) builds the application-processor driver hxrun-ap with the Android NDK, and none was found: set ANDROID_NDK_ROOT to an NDK (r25 or newer; the Hexagon SDK ships one as tools/android-ndk-*), or HX_HEXAGON_MODE=dsp-only to build only the cDSP runner hxrun)
endif
ifeq ($(wildcard $(AP_CC)),)
$(error no Android NDK clang at '$(AP_CC)': set ANDROID_NDK_ROOT to an NDK with toolchains/llvm/prebuilt/linux-x86_64 (Linux x86-64 host), and HX_ANDROID_API to an API level it ships (default 31))
endif
AP_CC_NAME := $(shell $(AP_CC) --version 2>/dev/null | head -n1) aarch64-linux-android$(HX_ANDROID_API)
endif
# remote.h and AEEStdErr.h are in incs; dspqueue.h is in incs on SDK 6.x,
# rpcmem.h under ipc/fastrpc/rpcmem/inc (the include dirs public SDK builds
# pass, e.g. llama.cpp's ggml-hexagon).  No -lcdsprpc: rpc_dl.c dlopens
# libcdsprpc.so on the phone, so the build needs the headers only.
AP_SDK_INCS := -I$(HEXAGON_SDK_ROOT)/incs -I$(HEXAGON_SDK_ROOT)/incs/stddef \
               -I$(HEXAGON_SDK_ROOT)/ipc/fastrpc/rpcmem/inc
AP_CFLAGS := -std=gnu11 -O2 -Wall -Wextra $(AP_SDK_INCS)
AP_LDFLAGS := -ldl -lm
# What group B is in hxrun-ap (its meta.group_mapping).
AP_TARGET_DEFS := -DHX_GROUP_B='"ap mode (hxrun-ap with libhxfuse_skel.so): one dspqueue per engine, the requests of all tasks written at once from AP threads, each engine'"'"'s DSP thread reading its own queue; completions come back per task over the response queues"'
endif
