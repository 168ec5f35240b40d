#!/usr/bin/env bash
# make -C kernels sdk-check: catch SDK build breaks without the SDK.
#
#   1. Runs the SDK targets' make recipes (TARGET=hexagon in mode ap with
#      and without HexKL and in mode dsp-only, TARGET=hexagon-sim) against a
#      stub Hexagon SDK tree whose hexagon-clang and NDK clang only record
#      their command lines, so recipe and quoting errors, a wrong HexKL
#      library path or a missing source fail here.  Mode ap must produce
#      hxrun, libhxfuse_skel.so and hxrun-ap.
#   2. Replays every recorded compile command with the open toolchain, with
#      the SDK and HexKL headers replaced by the project's declarations
#      (hexagon/sdk_decls), -Werror: every DSP source (hxrun's and the
#      skel's) must compile for v73 + HVX, every AP source (hxrun-ap's) for
#      aarch64.  A planted call to an undeclared FastRPC-looking function in
#      one AP and one skel compile must fail (and the same compile with a
#      declared call pass), so the replay really rejects what the SDK's
#      clang 16+ would.
#   3. Checks that the fail-fast messages still name what is missing.
# Nothing here links or runs device code; see hexagon/README.md.
#
#   sdk_check.sh                      the whole check (exit 0 = no break found)
#   sdk_check.sh fake-sdk DIR [VER]   only build the stub tree in DIR (tools
#                                     version VER, default 19.0.04), for tests
set -euo pipefail
KERNELS=$(cd "$(dirname "$0")/.." && pwd)
DECLS=$KERNELS/hexagon/sdk_decls
ARCH=v73
ZIG_CPU=hexagonv73+hvxv73+hvx_length128b
ZIG=${ZIG:-python3 -m ziglang}
fail() { echo "sdk-check: FAIL: $*" >&2; exit 1; }

# fake_sdk DIR VERSION: DIR/sdk (Hexagon SDK layout) and DIR/hexkl (HexKL layout).
fake_sdk() {
    local d=$1 ver=${2:-19.0.04}
    local sdk=$d/sdk tools=$d/sdk/tools/HEXAGON_Tools/$ver
    mkdir -p "$sdk/incs/stddef" "$sdk/rtos/qurt/compute$ARCH/include/qurt" \
        "$sdk/rtos/qurt/compute$ARCH/include/posix" "$sdk/libs/qprintf/inc" "$tools/Tools/bin" \
        "$d/hexkl/include" "$d/hexkl/lib/hexagon_toolv19_$ARCH"
    cp "$DECLS"/AEEStdErr.h "$DECLS"/HAP_*.h "$DECLS"/remote.h "$DECLS"/dspqueue.h "$sdk/incs/"
    cp "$DECLS/qurt.h" "$sdk/rtos/qurt/compute$ARCH/include/qurt/"
    cp "$DECLS/hexkl_micro.h" "$d/hexkl/include/"
    : > "$d/hexkl/lib/hexagon_toolv19_$ARCH/libhexkl_micro.a"
    # The stub compiler: prints a version like the real one, records every
    # other command line (one shell-quoted line per call) in $HX_STUB_LOG and
    # creates the -o output so make proceeds.
    cat > "$tools/Tools/bin/hexagon-clang" <<STUB
#!/usr/bin/env bash
if [ "\${1:-}" = "--version" ]; then
    echo "QuIC LLVM Hexagon Clang version $ver"
    echo "Target: hexagon"
    exit 0
fi
[ -n "\${HX_STUB_LOG:-}" ] && { printf '%q ' "\$@"; echo; } >> "\$HX_STUB_LOG"
out="" prev=""
for a in "\$@"; do [ "\$prev" = "-o" ] && out=\$a; prev=\$a; done
if [ -n "\$out" ]; then mkdir -p "\$(dirname "\$out")"; : > "\$out"; fi
STUB
    # The stub NDK (the SDK ships one as tools/android-ndk-*): its aarch64
    # clang records like the stub hexagon-clang, into $HX_STUB_LOG_AP.
    local ndkbin=$sdk/tools/android-ndk-r25c/toolchains/llvm/prebuilt/linux-x86_64/bin
    mkdir -p "$ndkbin" "$sdk/incs/stddef" "$sdk/ipc/fastrpc/rpcmem/inc"
    sed -e 's/QuIC LLVM Hexagon Clang version [0-9.]*/Android (stub) clang version 14.0.7/' \
        -e 's/Target: hexagon/Target: aarch64-unknown-linux-android31/' -e 's/HX_STUB_LOG/HX_STUB_LOG_AP/g' \
        "$tools/Tools/bin/hexagon-clang" > "$ndkbin/aarch64-linux-android31-clang"
    printf '#!/bin/sh\necho "hexagon-sim stub"\n' > "$tools/Tools/bin/hexagon-sim"
    chmod +x "$tools/Tools/bin/hexagon-clang" "$tools/Tools/bin/hexagon-sim" "$ndkbin/aarch64-linux-android31-clang"
    # What sim.sh and device.sh look for (empty stand-ins).
    local q=$sdk/rtos/qurt/compute$ARCH ship=$sdk/libs/run_main_on_hexagon/ship
    mkdir -p "$tools/Tools/lib/iss" "$tools/Tools/target/hexagon/lib/$ARCH/G0/pic" "$q/sdksim_bin" "$q/debugger/lnx64" "$ship/hexagon_toolv19_$ARCH" \
        "$ship/android_aarch64"
    : > "$tools/Tools/lib/iss/qtimer.so"
    : > "$tools/Tools/lib/iss/l2vic.so"
    : > "$q/sdksim_bin/runelf.pbn"
    : > "$q/debugger/lnx64/qurt_model.so"
    : > "$ship/hexagon_toolv19_$ARCH/run_main_on_hexagon_sim"
    : > "$ship/hexagon_toolv19_$ARCH/librun_main_on_hexagon_skel.so"
    printf '#!/bin/sh\nexit 0\n' > "$ship/android_aarch64/run_main_on_hexagon"
    chmod +x "$ship/android_aarch64/run_main_on_hexagon"
}

if [ "${1:-}" = "fake-sdk" ]; then
    fake_sdk "$2" "${3:-19.0.04}"
    exit 0
fi

command -v make >/dev/null || fail "make is not installed"
$ZIG version >/dev/null 2>&1 || fail "zig is needed for the v73 compile check: pip install ziglang==0.17.1 (or set ZIG)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fake_sdk "$work" 19.0.04
SDK=$work/sdk TOOLS=$work/sdk/tools/HEXAGON_Tools/19.0.04 HEXKL=$work/hexkl

# 1. the recipes, with the stub toolchain
# (ANDROID_NDK_ROOT= unless a recipe names one: the NDK the SDK ships is
# found, never one of the caller's environment)
run_recipe() { # name make-args...
    local name=$1; shift
    local log=$work/$name.log b=$work/build-$name
    : > "$log"
    : > "$work/$name.ap.log"
    if ! HX_STUB_LOG=$log HX_STUB_LOG_AP=$work/$name.ap.log make -s -C "$KERNELS" HEXAGON_SDK_ROOT="$SDK" \
        HEXAGON_TOOLS_ROOT="$TOOLS" ANDROID_NDK_ROOT= HX_BUILD_ONLY=1 BUILD="$b" "$@" > "$work/$name.out" 2>&1; then
        cat "$work/$name.out" >&2
        fail "recipe $name (make $*) failed with the stub toolchain"
    fi
    grep -q -- ' -c ' "$log" || fail "recipe $name compiled nothing"
    grep -q -- '-shared' "$log" || fail "recipe $name has no shared-object link"
    [ -f "$b/hxrun" ] || fail "recipe $name produced no hxrun"
    grep -q "HX_GROUP_B=.*s own QuRT queue" "$b/flags" ||
        fail "recipe $name: the flags file lost HX_GROUP_B's text (shell quoting)"
    local ap=""
    if [ -s "$work/$name.ap.log" ]; then
        [ -f "$b/hxrun-ap" ] && [ -f "$b/libhxfuse_skel.so" ] ||
            fail "recipe $name (mode ap) produced no hxrun-ap or no libhxfuse_skel.so"
        grep -- "-o $b/libhxfuse_skel.so " "$log" | grep -q -- '-shared' ||
            fail "recipe $name: libhxfuse_skel.so is not linked -shared by hexagon-clang"
        grep -- "-o $b/hxrun-ap " "$work/$name.ap.log" | grep -q -- '-ldl' ||
            fail "recipe $name: hxrun-ap is not linked by the NDK clang with -ldl"
        grep -q "HX_GROUP_B=.*one dspqueue per engine" "$b/flags-ap" ||
            fail "recipe $name: the AP flags file lost hxrun-ap's HX_GROUP_B text (shell quoting)"
        ap=", $(grep -c -- ' -c ' "$work/$name.ap.log") AP compiles + link (hxrun, libhxfuse_skel.so, hxrun-ap)"
    elif [ -e "$b/hxrun-ap" ]; then
        fail "recipe $name built hxrun-ap without the NDK clang"
    fi
    echo "sdk-check: recipe $name: $(grep -c -- ' -c ' "$log") compiles + link$ap OK"
}
run_recipe hexagon TARGET=hexagon HX_DEVICE_SERIAL=stub ANDROID_NDK_ROOT="$SDK/tools/android-ndk-r25c"
run_recipe hexagon-hexkl TARGET=hexagon HEXKL_ROOT="$HEXKL"
run_recipe hexagon-dsp-only TARGET=hexagon HX_HEXAGON_MODE=dsp-only ANDROID_NDK_ROOT=/nonexistent
run_recipe hexagon-sim TARGET=hexagon-sim HEXKL_ROOT="$HEXKL"
for name in hexagon hexagon-hexkl; do
    [ -s "$work/$name.ap.log" ] || fail "recipe $name (mode ap, the default) did not compile the AP driver"
    grep -q -- 'ap/skel.c' "$work/$name.log" || fail "recipe $name does not compile ap/skel.c with hexagon-clang"
done
for name in hexagon-dsp-only hexagon-sim; do
    [ ! -s "$work/$name.ap.log" ] || fail "recipe $name (dsp-only) ran the NDK clang"
done
grep -q -- "$HEXKL/lib/hexagon_toolv19_$ARCH/libhexkl_micro.a" "$work/hexagon-hexkl.log" ||
    fail "the HexKL build does not link lib/hexagon_toolv19_$ARCH/libhexkl_micro.a"
grep -q -- 'kernels_hmx.c' "$work/hexagon-hexkl.log" || fail "the HexKL build does not compile kernels_hmx.c"

# 2. every recorded compile, replayed with zig's clang
# replay KIND LINE [ARGS]: compile one recorded command line (KIND dsp: for
# v73 + HVX; ap: for aarch64, the SDK's include directories replaced by
# sdk_decls), ARGS before the source.  Sets src; zig's status is the
# function's, its messages are in $work/zig-$n.err.
n=0
# replay_prep KIND LINE [ARGS]: the zig command line of one recorded compile
# (sets cmd, src and target; numbers it n).
replay_prep() {
    local kind=$1 line=$2 a prev=""
    shift 2
    eval "args=($line)"
    cmd=() src=""
    for a in "${args[@]}"; do
        if [ "$prev" = "-o" ]; then prev=""; continue; fi
        case "$kind:$a" in
            *:-o) prev=-o ;;
            dsp:-m"$ARCH" | dsp:-mhvx | dsp:-mhvx-length=128B | dsp:-mhmx | dsp:-G0) ;; # SDK-compiler spellings: -mcpu below
            ap:-I"$SDK"/*) cmd+=("-I$DECLS") ;;
            *.c) src=$a; cmd+=("$@" "$a") ;;
            *) cmd+=("$a") ;;
        esac
    done
    n=$((n + 1))
    if [ "$kind" = dsp ]; then target="-target hexagon-linux-musl -mcpu=${DSP_CPU:-$ZIG_CPU}"; else target="-target aarch64-linux-gnu"; fi
}
# replay_run N: compile what replay_prep set up as number N.
replay_run() {
    # shellcheck disable=SC2086 # target: two words
    (cd "$KERNELS" && $ZIG cc $target -std=gnu11 -Werror -Werror=implicit-function-declaration "${cmd[@]}" \
        -o "$work/zig-$1.o") 2> "$work/zig-$1.err"
}
replay() {
    replay_prep "$@"
    replay_run "$n"
}
compiles_of() { grep -- ' -c ' "$1" || true; }
# replay_all KIND LOG WHAT: every compile recorded in LOG replayed, as many
# at a time as there are cores (each is independent; one at a time the
# replays were most of the check's time), then judged in their recorded
# order, so the first failing source is the one named, as before.
JOBS=$(nproc 2>/dev/null || echo 2)
replay_all() {
    local kind=$1 log=$2 what=$3 line i running=0
    local -a nums=() srcs=() pids=()
    while IFS= read -r line; do
        replay_prep "$kind" "$line"
        replay_run "$n" &
        nums+=("$n") srcs+=("$src") pids+=("$!")
        running=$((running + 1))
        if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
    done < <(compiles_of "$log")
    for i in "${!pids[@]}"; do
        if ! wait "${pids[$i]}"; then
            cat "$work/zig-${nums[$i]}.err" >&2
            fail "${srcs[$i]} $what"
        fi
    done
}
for name in hexagon hexagon-hexkl; do
    replay_all dsp "$work/$name.log" "does not compile for $ARCH with the open toolchain ($name build flags)"
done
echo "sdk-check: $n device compiles for $ARCH (zig cc -mcpu=$ZIG_CPU -Werror; hxrun and libhxfuse_skel.so) OK"
# v75 (Snapdragon 8 Gen 3) takes other code paths: HMX powered with
# HAP_power_set_HMX_v2 and its clock voted (power_qurt.c, on
# __HEXAGON_ARCH__ >= 75).  Replay the HexKL build's device compiles once more
# for v75 so those paths compile too.
v75=$n
DSP_CPU=hexagonv75+hvxv75+hvx_length128b replay_all dsp "$work/hexagon-hexkl.log" \
    "does not compile for v75 with the open toolchain (hexagon-hexkl build flags)"
echo "sdk-check: $((n - v75)) device compiles for v75 (zig cc -mcpu=hexagonv75+hvxv75+hvx_length128b -Werror; the HMX v2 power path) OK"
m=$n
replay_all ap "$work/hexagon.ap.log" "does not compile for aarch64 with the open toolchain (hxrun-ap build flags)"
echo "sdk-check: $((n - m)) AP compiles for aarch64 (zig cc -target aarch64-linux-gnu -Werror) OK"

# The planted call: a forced include whose function calls an undeclared
# dspqueue_* name must fail one AP and one skel compile, naming it; the same
# include calling a declared one must pass, so the failure is the call.
cat > "$work/planted_ok.h" <<'EOF'
#include <dspqueue.h>
int hx_planted_probe(dspqueue_t q);
int hx_planted_probe(dspqueue_t q) { return (int)dspqueue_close(q); }
EOF
sed 's/dspqueue_close(q)/dspqueue_undeclared_probe(q)/' "$work/planted_ok.h" > "$work/planted_bad.h"
plant() { # kind log source-to-prefer
    local kind=$1 log=$2 want=$3 line
    line=$(compiles_of "$log" | grep -F -- " $want " | head -n1 || true)
    [ -n "$line" ] || line=$(compiles_of "$log" | head -n1)
    [ -n "$line" ] || fail "no $kind compile to plant an undeclared call in"
    if ! replay "$kind" "$line" -I"$DECLS" -include "$work/planted_ok.h"; then
        cat "$work/zig-$n.err" >&2
        fail "the $kind compile of $src with a declared dspqueue call does not compile"
    fi
    if replay "$kind" "$line" -I"$DECLS" -include "$work/planted_bad.h"; then
        fail "a planted call to the undeclared dspqueue_undeclared_probe() compiles in $src ($kind): the replay would not catch an undeclared SDK call"
    fi
    if ! grep -q 'dspqueue_undeclared_probe' "$work/zig-$n.err"; then
        cat "$work/zig-$n.err" >&2
        fail "the planted undeclared call in $src ($kind) failed for another reason"
    fi
}
plant ap "$work/hexagon.ap.log" ap/wire_ap.c
echo "sdk-check: a planted undeclared call fails the AP compile ($src): OK"
plant dsp "$work/hexagon.log" ap/skel.c
echo "sdk-check: a planted undeclared call fails the skel compile ($src): OK"

# 3. fail-fast messages
expect_fail() { # what message make-args...
    local what=$1 msg=$2; shift 2
    local out
    if out=$(make -s -C "$KERNELS" BUILD="$work/build-x" "$@" 2>&1); then fail "$what: make succeeded"; fi
    printf '%s' "$out" | grep -qF -- "$msg" || { echo "$out" >&2; fail "$what: the message does not say \"$msg\""; }
}
expect_fail "no SDK" "needs the Qualcomm Hexagon SDK" TARGET=hexagon HEXAGON_SDK_ROOT=
fake_sdk "$work/old" 8.7.06
expect_fail "HexKL with tools 8.7" "links only with Hexagon tools 19 or newer" TARGET=hexagon HX_BUILD_ONLY=1 \
    HEXAGON_SDK_ROOT="$work/old/sdk" HEXAGON_TOOLS_ROOT="$work/old/sdk/tools/HEXAGON_Tools/8.7.06" HEXKL_ROOT="$HEXKL"
expect_fail "HexKL without the library" "has no lib/hexagon_toolv*_$ARCH/libhexkl_micro.a" TARGET=hexagon \
    HX_BUILD_ONLY=1 HEXAGON_SDK_ROOT="$SDK" HEXAGON_TOOLS_ROOT="$TOOLS" HEXKL_ROOT="$work/old/sdk"
mkdir -p "$work/bin" && printf '#!/bin/sh\nexit 0\n' > "$work/bin/adb" && chmod +x "$work/bin/adb"
PATH="$work/bin:$PATH" expect_fail "no device serial" "needs the device serial" TARGET=hexagon \
    HEXAGON_SDK_ROOT="$SDK" HEXAGON_TOOLS_ROOT="$TOOLS" HX_DEVICE_SERIAL= HX_DEVICE_SERIALS=
# mode ap without an NDK (an SDK tree that ships none, none given)
fake_sdk "$work/nondk" 19.0.04
rm -rf "$work/nondk/sdk/tools"/android-ndk-*
expect_fail "no NDK" "builds the application-processor driver hxrun-ap with the Android NDK, and none was found" \
    TARGET=hexagon HX_BUILD_ONLY=1 HEXAGON_SDK_ROOT="$work/nondk/sdk" \
    HEXAGON_TOOLS_ROOT="$work/nondk/sdk/tools/HEXAGON_Tools/19.0.04" ANDROID_NDK_ROOT=
expect_fail "an NDK without the API's clang" "no Android NDK clang at" TARGET=hexagon HX_BUILD_ONLY=1 \
    HEXAGON_SDK_ROOT="$SDK" HEXAGON_TOOLS_ROOT="$TOOLS" ANDROID_NDK_ROOT="$SDK/tools/android-ndk-r25c" HX_ANDROID_API=19
expect_fail "a bad mode" "HX_HEXAGON_MODE must be ap or dsp-only" TARGET=hexagon HX_BUILD_ONLY=1 \
    HEXAGON_SDK_ROOT="$SDK" HEXAGON_TOOLS_ROOT="$TOOLS" HX_HEXAGON_MODE=split
expect_fail "the simulator in mode ap" "builds only the dsp-only runner hxrun" TARGET=hexagon-sim \
    HEXAGON_SDK_ROOT="$SDK" HEXAGON_TOOLS_ROOT="$TOOLS" HX_HEXAGON_MODE=ap
echo "sdk-check: fail-fast messages OK"
echo "sdk-check: OK"
