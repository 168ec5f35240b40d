# The same SDK build, executed by the Hexagon SDK's instruction-set simulator
# (hexagon-sim) instead of a phone.
# STATUS: written against the documented Hexagon SDK, not yet run.
#   make -C kernels TARGET=hexagon-sim HEXAGON_SDK_ROOT=... [HEXAGON_ARCH=v73]
# Needs no adb or device.  Simulator timings are a cycle model, not a phone:
# label them as simulated.  Run with kernels/hexagon/sim.sh.
HX_NEED_DEVICE := 0
# Always the dsp-only runner hxrun: the simulator has no application
# processor to run hxrun-ap on.
ifeq ($(HX_HEXAGON_MODE),ap)
ifneq ($(origin HX_HEXAGON_MODE),file)
$(error TARGET=hexagon-sim builds only the dsp-only runner hxrun (the simulator has no application processor for hxrun-ap): drop HX_HEXAGON_MODE=ap, or use TARGET=hexagon)
endif
endif
override HX_HEXAGON_MODE := dsp-only
include targets/hexagon.mk
HEXAGON_SIM := $(HEXAGON_TOOLS_ROOT)/Tools/bin/hexagon-sim
ifeq ($(wildcard $(HEXAGON_SIM)),)
$(error no hexagon-sim at '$(HEXAGON_SIM)': set HEXAGON_TOOLS_ROOT to the SDK's tools/HEXAGON_Tools/<version>)
endif
RUN_PREFIX := kernels/hexagon/sim.sh --

# The simulator is a cycle model, not a phone: its records say emulated, so
# no table, figure or verdict presents them as performance.
TARGET_DEFS += -DHX_EMULATED=1
