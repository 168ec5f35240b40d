#!/usr/bin/env bash
# Deploy and run the cDSP runner on an Android device over adb.
# STATUS: written against the documented Hexagon SDK tools, not yet run on
# hardware.
#
#   device.sh check
#   device.sh deploy [kernels/build/hexagon/hxrun]
#   device.sh run -- kernels/build/hexagon/hxrun --out R.jsonl --npy-dir N [hxrun options]
#
# `run` pushes the runner (as libhxrun.so) and the SDK's run_main_on_hexagon
# with its skel to $HX_DEVICE_DIR, rewrites --out/--npy-dir to paths under
# $HX_DEVICE_DIR/out, runs `run_main_on_hexagon 3 libhxrun.so ...` (3 = cDSP)
# with ADSP_LIBRARY_PATH set, then pulls the JSON Lines and .npy files back
# to the requested local paths.  Warm-up and trials are the runner's own
# (--warmup, --rounds).  Exit codes of hxrun are passed through.
#
# Environment: HEXAGON_SDK_ROOT (required), HX_DEVICE_SERIAL (required),
# HX_DEVICE_DIR (default /data/local/tmp/hxfuse), HEXAGON_ARCH (default v73).
set -euo pipefail
die() { echo "device.sh: error: $*" >&2; exit 2; }
: "${HX_DEVICE_DIR:=/data/local/tmp/hxfuse}"
: "${HEXAGON_ARCH:=v73}"

check() {
    [ -n "${HEXAGON_SDK_ROOT:-}" ] || die "HEXAGON_SDK_ROOT is not set: install the Qualcomm Hexagon SDK and source <sdk>/setup_sdk_env.source"
    command -v adb >/dev/null || die "adb is not installed: apt-get install adb (or Android platform-tools)"
    [ -n "${HX_DEVICE_SERIAL:-}" ] || die "HX_DEVICE_SERIAL is not set: pick the serial of the phone from \`adb devices\`"
    adb -s "$HX_DEVICE_SERIAL" get-state >/dev/null 2>&1 || die "device $HX_DEVICE_SERIAL is not reachable over adb (\`adb devices\`; authorise USB debugging)"
    RMOH="$HEXAGON_SDK_ROOT/libs/run_main_on_hexagon/ship/android_aarch64/run_main_on_hexagon"
    [ -x "$RMOH" ] || die "no run_main_on_hexagon at $RMOH (build it in the SDK: libs/run_main_on_hexagon)"
    SKEL=$(ls "$HEXAGON_SDK_ROOT"/libs/run_main_on_hexagon/ship/hexagon_*"$HEXAGON_ARCH"*/librun_main_on_hexagon_skel.so 2>/dev/null | tail -n1)
    [ -n "$SKEL" ] || die "no librun_main_on_hexagon_skel.so for $HEXAGON_ARCH under $HEXAGON_SDK_ROOT/libs/run_main_on_hexagon/ship"
}

ADB() { adb -s "$HX_DEVICE_SERIAL" "$@"; }

deploy() {
    local so=${1:-kernels/build/hexagon/hxrun}
    [ -f "$so" ] || die "no runner at $so: make -C kernels TARGET=hexagon first"
    ADB shell mkdir -p "$HX_DEVICE_DIR/out"
    ADB push "$RMOH" "$HX_DEVICE_DIR/run_main_on_hexagon" >/dev/null
    ADB shell chmod 755 "$HX_DEVICE_DIR/run_main_on_hexagon"
    ADB push "$SKEL" "$HX_DEVICE_DIR/" >/dev/null
    ADB push "$so" "$HX_DEVICE_DIR/libhxrun.so" >/dev/null
}

run() {
    [ "${1:-}" = "--" ] && shift
    local so=$1; shift
    deploy "$so"
    local args=() out="" npy="" stamp
    stamp=$(date +%s%N)
    while [ $# -gt 0 ]; do
        case "$1" in
            --out) out=$2; args+=(--out "$HX_DEVICE_DIR/out/$stamp.jsonl"); shift 2 ;;
            --npy-dir) npy=$2; args+=(--npy-dir "$HX_DEVICE_DIR/out/$stamp.npy"); shift 2 ;;
            *) args+=("$1"); shift ;;
        esac
    done
    [ -n "$out" ] || die "run needs --out"
    set +e
    ADB shell "cd $HX_DEVICE_DIR && ADSP_LIBRARY_PATH='$HX_DEVICE_DIR;/vendor/lib/rfsa/adsp;/vendor/dsp/cdsp;/system/lib/rfsa/adsp;/dsp' ./run_main_on_hexagon 3 libhxrun.so ${args[*]}; echo hxrun-exit=\$?" | tee "$out.device.log"
    set -e
    local rc
    rc=$(sed -n 's/.*hxrun-exit=\([0-9]*\).*/\1/p' "$out.device.log" | tail -n1)
    ADB pull "$HX_DEVICE_DIR/out/$stamp.jsonl" "$out" >/dev/null || die "the run left no $HX_DEVICE_DIR/out/$stamp.jsonl (see $out.device.log and adb logcat -s adsprpc)"
    if [ -n "$npy" ]; then
        mkdir -p "$npy"
        ADB pull "$HX_DEVICE_DIR/out/$stamp.npy/." "$npy" >/dev/null
    fi
    ADB shell rm -rf "$HX_DEVICE_DIR/out/$stamp.jsonl" "$HX_DEVICE_DIR/out/$stamp.npy"
    exit "${rc:-1}"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
    check) check; echo "device.sh: ready: $HX_DEVICE_SERIAL, $HX_DEVICE_DIR, $HEXAGON_ARCH" ;;
    deploy) check; deploy "$@" ;;
    run) check; run "$@" ;;
    *) die "usage: device.sh check | deploy [so] | run -- SO [hxrun options]" ;;
esac
