#!/usr/bin/env bash
# Run the SDK build on the Hexagon instruction-set simulator.
# STATUS: written against the documented Hexagon SDK tools, not yet run.
#
#   sim.sh -- kernels/build/hexagon-sim/hxrun --out R.jsonl [hxrun options]
#
# Uses the SDK's simulator flow for dynamic objects: hexagon-sim loads QuRT's
# bootimage and runelf.pbn, which loads run_main_on_hexagon_sim and then our
# shared object.  Paths on the simulator are the host's (semihosted I/O).
# Environment: HEXAGON_SDK_ROOT, HEXAGON_TOOLS_ROOT (or the SDK default),
# HEXAGON_ARCH (default v73).
set -euo pipefail
die() { echo "sim.sh: error: $*" >&2; exit 2; }
[ "${1:-}" = "--" ] && shift
[ -n "${HEXAGON_SDK_ROOT:-}" ] || die "HEXAGON_SDK_ROOT is not set: install the Qualcomm Hexagon SDK and source <sdk>/setup_sdk_env.source"
: "${HEXAGON_ARCH:=v73}"
TOOLS=${HEXAGON_TOOLS_ROOT:-${DEFAULT_HEXAGON_TOOLS_ROOT:-$(ls -d "$HEXAGON_SDK_ROOT"/tools/HEXAGON_Tools/* 2>/dev/null | tail -n1)}}
SIM="$TOOLS/Tools/bin/hexagon-sim"
[ -x "$SIM" ] || die "no hexagon-sim at $SIM: set HEXAGON_TOOLS_ROOT"
Q="$HEXAGON_SDK_ROOT/rtos/qurt/compute$HEXAGON_ARCH"
[ -f "$Q/sdksim_bin/runelf.pbn" ] || die "no QuRT runelf.pbn under $Q/sdksim_bin"
RMOH=$(ls "$HEXAGON_SDK_ROOT"/libs/run_main_on_hexagon/ship/hexagon_*"$HEXAGON_ARCH"*/run_main_on_hexagon_sim 2>/dev/null | tail -n1)
[ -n "$RMOH" ] || die "no run_main_on_hexagon_sim for $HEXAGON_ARCH under $HEXAGON_SDK_ROOT/libs/run_main_on_hexagon/ship"
so=$1; shift
exec "$SIM" -m"$HEXAGON_ARCH" --simulated_returnval --usefs "$(dirname "$so")" \
    "$Q/sdksim_bin/runelf.pbn" -- "$RMOH" -- "$(basename "$so")" "$@"
