#!/usr/bin/env bash
# Run the SDK build on the Hexagon instruction-set simulator.
# STATUS: written against the documented Hexagon SDK tools and the public
# simulator invocations of the SDK's own CMake flow, Qualcomm's hexagon-mlir
# and HexKL's examples; command line tested here with a stub SDK tree
# (tests/test_hexagon_device.py), not yet run on hexagon-sim.
#
#   sim.sh -- kernels/build/hexagon-sim/hxrun --out R.jsonl [hxrun options]
#
# hexagon-sim boots QuRT (runelf.pbn), which loads run_main_on_hexagon_sim
# and then our shared object.  The platform around the core comes from two
# files written next to the runner:
#   q6ss.cfg  cosim plug-ins: the QTimer (19.2 MHz, the runner's clock and
#             its cycle calibration) and the L2 interrupt controller;
#   osam.cfg  the QuRT OS-awareness model (resource-manager services such as
#             HAP_compute_res/VTCM behave only with it);
# and --l2tcm_base 0xd800 places VTCM where the SDK's v7x memory map has it.
# The core model is -m<arch>na_1 (HexKL's HMX examples run on v73na_1);
# override with HX_SIM_CPU (e.g. v73 for the plain model).  The runner gets
# a 4 MiB stack (stack_size=, as hexagon-mlir passes).  Paths are the host's
# (semihosted I/O).  Simulated timings are a cycle model: label them so.
#
# Environment: HEXAGON_SDK_ROOT, HEXAGON_TOOLS_ROOT (or the SDK default),
# HEXAGON_ARCH (default v73), HX_SIM_CPU, HX_SIM_STACK (default 0x400000),
# HX_SIM_DRY_RUN=1 (print the command instead of running it).
set -euo pipefail
die() { echo "sim.sh: error: $*" >&2; exit 2; }
[ "${1:-}" = "--" ] && shift
[ $# -ge 1 ] || die "usage: sim.sh -- RUNNER.so [hxrun options]"
[ -n "${HEXAGON_SDK_ROOT:-}" ] || die "HEXAGON_SDK_ROOT is not set: install the Qualcomm Hexagon SDK and source <sdk>/setup_sdk_env.source"
: "${HEXAGON_ARCH:=v73}"
: "${HX_SIM_CPU:=${HEXAGON_ARCH}na_1}"
: "${HX_SIM_STACK:=0x400000}"
TOOLS=${HEXAGON_TOOLS_ROOT:-${DEFAULT_HEXAGON_TOOLS_ROOT:-$(ls -d "$HEXAGON_SDK_ROOT"/tools/HEXAGON_Tools/* 2>/dev/null | tail -n1)}}
SIM="$TOOLS/Tools/bin/hexagon-sim"
ISS="$TOOLS/Tools/lib/iss"
[ -x "$SIM" ] || die "no hexagon-sim at $SIM: set HEXAGON_TOOLS_ROOT"
for plugin in qtimer.so l2vic.so; do
    [ -f "$ISS/$plugin" ] || die "no simulator plug-in $ISS/$plugin (the QTimer/L2VIC cosim): incomplete Hexagon tools?"
done
Q="$HEXAGON_SDK_ROOT/rtos/qurt/compute$HEXAGON_ARCH"
[ -f "$Q/sdksim_bin/runelf.pbn" ] || die "no QuRT runelf.pbn under $Q/sdksim_bin"
[ -f "$Q/debugger/lnx64/qurt_model.so" ] || die "no QuRT model $Q/debugger/lnx64/qurt_model.so (needed by --rtos)"
RMOH=$(ls "$HEXAGON_SDK_ROOT"/libs/run_main_on_hexagon/ship/hexagon_*"$HEXAGON_ARCH"*/run_main_on_hexagon_sim 2>/dev/null | tail -n1)
[ -n "$RMOH" ] || die "no run_main_on_hexagon_sim for $HEXAGON_ARCH under $HEXAGON_SDK_ROOT/libs/run_main_on_hexagon/ship"
so=$1; shift
[ -f "$so" ] || die "no runner at $so: make -C kernels TARGET=hexagon-sim first"
dir=$(cd "$(dirname "$so")" && pwd)
printf '%s\n%s\n' "$ISS/qtimer.so --csr_base=0xFC900000 --irq_p=1 --freq=19200000 --cnttid=1" \
    "$ISS/l2vic.so 32 0xFC910000" > "$dir/q6ss.cfg"
printf '%s\n' "$Q/debugger/lnx64/qurt_model.so" > "$dir/osam.cfg"
# --usefs: the tools' position-independent target libraries (where the
# loader finds libc/libm and friends for the .so); the runner by absolute path
# (hexagon-mlir and Halide run it so), its own I/O paths are the host's.
PIC="$TOOLS/Tools/target/hexagon/lib/$HEXAGON_ARCH/G0/pic"
[ -d "$PIC" ] || die "no $PIC (the tools' target libraries for $HEXAGON_ARCH, needed by --usefs)"
cmd=("$SIM" -m"$HX_SIM_CPU" --simulated_returnval --usefs "$PIC" --cosim_file "$dir/q6ss.cfg"
     --l2tcm_base 0xd800 --rtos "$dir/osam.cfg" "$Q/sdksim_bin/runelf.pbn" --
     "$RMOH" "stack_size=$HX_SIM_STACK" -- "$dir/$(basename "$so")" "$@")
if [ "${HX_SIM_DRY_RUN:-0}" = 1 ]; then
    printf '%q ' "${cmd[@]}"
    echo
    exit 0
fi
exec "${cmd[@]}"
