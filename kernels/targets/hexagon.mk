# Hexagon cDSP device build (SDK-gated).
# STATUS: written against the documented Hexagon SDK, not yet run on hardware.
#
#   make -C kernels TARGET=hexagon HEXAGON_SDK_ROOT=... [HEXAGON_ARCH=v73] \
#        [HEXKL_ROOT=...] [HX_DEVICE_SERIAL=...]
# produces build/hexagon/hxrun, a shared object for the cDSP that the SDK's
# run_main_on_hexagon executes (its main() is the runner's main()).  Deploy
# and run with kernels/hexagon/device.sh (adb push to HX_DEVICE_DIR, adb shell
# with ADSP_LIBRARY_PATH, adb pull of the results).
#
# Fails at once, naming what is missing, when the SDK, its compiler, adb or a
# device serial is absent.  HX_BUILD_ONLY=1 skips the adb/device checks (to
# compile without a phone attached).
HEXAGON_ARCH ?= v73
HX_DEVICE_DIR ?= /data/local/tmp/hxfuse

ifeq ($(strip $(HEXAGON_SDK_ROOT)),)
$(error TARGET=$(TARGET) needs the Qualcomm Hexagon SDK: install it (Qualcomm Package Manager / qpm-cli, Hexagon SDK 5.x or 6.x) and set HEXAGON_SDK_ROOT, e.g. `source <sdk>/setup_sdk_env.source` or `make TARGET=$(TARGET) HEXAGON_SDK_ROOT=/opt/qcom/Hexagon_SDK/6.x`)
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
ifneq ($(HX_BUILD_ONLY),1)
ifneq ($(HX_NEED_DEVICE),0)
ifeq ($(shell command -v adb 2>/dev/null),)
$(error TARGET=$(TARGET) deploys with adb, which is not installed: apt-get install adb (or Android platform-tools), or set HX_BUILD_ONLY=1 to compile only)
endif
ifeq ($(strip $(HX_DEVICE_SERIAL)),)
$(error TARGET=$(TARGET) needs the device serial: set HX_DEVICE_SERIAL (see `adb devices`), or HX_BUILD_ONLY=1 to compile only)
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
CFLAGS := -m$(HEXAGON_ARCH) -mhvx -mhvx-length=128B -O2 -G0 -fPIC -std=c11 -Wall -Wextra \
          -DHX_HVX_NO_FAST_ENTRY $(SDK_INCS)
LDFLAGS := -shared -G0 -lm
FAST_SRC := hexagon/kernels_hvx.c hexagon/kernels_device.c
PLATFORM_SRC := hexagon/platform_qurt.c hexagon/vtcm_qurt.c hexagon/dma_hexagon.c
# HMX needs HexKL (hexkl_micro.h, libhexkl_micro.a); without it M runs on HVX.
ifneq ($(strip $(HEXKL_ROOT)),)
CFLAGS += -mhmx -DHX_WITH_HEXKL=1 -I$(HEXKL_ROOT)/include
HEXKL_LIB ?= $(firstword $(wildcard $(HEXKL_ROOT)/lib/$(HEXAGON_ARCH)/*hexkl_micro*.a $(HEXKL_ROOT)/lib/*hexkl_micro*.a))
ifeq ($(HEXKL_LIB),)
$(error HEXKL_ROOT=$(HEXKL_ROOT) has no hexkl_micro library: set HEXKL_LIB to the .a for $(HEXAGON_ARCH))
endif
FAST_SRC += hexagon/kernels_hmx.c
LDFLAGS += $(HEXKL_LIB)
endif
# The runner is a shared object: run_main_on_hexagon loads it on the cDSP.
RUN_PREFIX := kernels/hexagon/device.sh run --

# What group B is in this build (recorded in every run's meta.group_mapping):
# the whole runner runs on the cDSP under run_main_on_hexagon, so the "host"
# is a cDSP thread and B's independent requests go to DSP-side QuRT queue
# threads.  The application processor's dspqueue/FastRPC path that a real
# backend would use for B is not exercised (kernels/hexagon/README.md).
TARGET_DEFS += -DHX_GROUP_B='"one request per task to each engine'"'"'s own QuRT queue thread on the cDSP, submitted at once; the host is a cDSP thread, so the AP-side dspqueue/FastRPC concurrency of a real backend is not exercised (limitation)"'
