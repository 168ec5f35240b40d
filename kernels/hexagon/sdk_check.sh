#!/usr/bin/env bash
# make -C kernels sdk-check: catch SDK build breaks without the SDK.
#
#   1. Runs the SDK targets' make recipes (TARGET=hexagon with and without
#      HexKL, TARGET=hexagon-sim) against a stub Hexagon SDK tree whose
#      hexagon-clang only records its command line, so recipe and quoting
#      errors, a wrong HexKL library path or a missing source fail here.
#   2. Replays every recorded compile command with the open toolchain (zig's
#      clang for v73 + HVX), with the SDK and HexKL headers replaced by the
#      project's declarations (hexagon/sdk_decls), -Werror: every device
#      source must compile for v73.
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
    cp "$DECLS"/AEEStdErr.h "$DECLS"/HAP_*.h "$sdk/incs/"
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
    printf '#!/bin/sh\necho "hexagon-sim stub"\n' > "$tools/Tools/bin/hexagon-sim"
    chmod +x "$tools/Tools/bin/hexagon-clang" "$tools/Tools/bin/hexagon-sim"
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
run_recipe() { # name make-args...
    local name=$1; shift
    local log=$work/$name.log
    : > "$log"
    if ! HX_STUB_LOG=$log make -s -C "$KERNELS" HEXAGON_SDK_ROOT="$SDK" HEXAGON_TOOLS_ROOT="$TOOLS" \
        HX_BUILD_ONLY=1 BUILD="$work/build-$name" "$@" > "$work/$name.out" 2>&1; then
        cat "$work/$name.out" >&2
        fail "recipe $name (make $*) failed with the stub toolchain"
    fi
    grep -q -- ' -c ' "$log" || fail "recipe $name compiled nothing"
    grep -q -- '-shared' "$log" || fail "recipe $name has no shared-object link"
    [ -f "$work/build-$name/hxrun" ] || fail "recipe $name produced no hxrun"
    grep -q "HX_GROUP_B=.*s own QuRT queue" "$work/build-$name/flags" ||
        fail "recipe $name: the flags file lost HX_GROUP_B's text (shell quoting)"
    echo "sdk-check: recipe $name: $(grep -c -- ' -c ' "$log") compiles + link OK"
}
run_recipe hexagon TARGET=hexagon HX_DEVICE_SERIAL=stub
run_recipe hexagon-hexkl TARGET=hexagon HEXKL_ROOT="$HEXKL"
run_recipe hexagon-sim TARGET=hexagon-sim HEXKL_ROOT="$HEXKL"
grep -q -- "$HEXKL/lib/hexagon_toolv19_$ARCH/libhexkl_micro.a" "$work/hexagon-hexkl.log" ||
    fail "the HexKL build does not link lib/hexagon_toolv19_$ARCH/libhexkl_micro.a"
grep -q -- 'kernels_hmx.c' "$work/hexagon-hexkl.log" || fail "the HexKL build does not compile kernels_hmx.c"

# 2. every recorded compile, replayed for v73 with zig's clang
n=0
for name in hexagon hexagon-hexkl; do
    while IFS= read -r line; do
        case "$line" in *" -c "*) ;; *) continue ;; esac
        eval "args=($line)"
        cmd=() src="" prev=""
        for a in "${args[@]}"; do
            if [ "$prev" = "-o" ]; then prev=""; continue; fi
            case "$a" in
                -o) prev=-o ;;
                -m"$ARCH" | -mhvx | -mhvx-length=128B | -mhmx | -G0) ;; # SDK-compiler spellings: -mcpu below
                *.c) src=$a; cmd+=("$a") ;;
                *) cmd+=("$a") ;;
            esac
        done
        n=$((n + 1))
        if ! (cd "$KERNELS" && $ZIG cc -target hexagon-linux-musl -mcpu="$ZIG_CPU" -Werror \
            -Werror=implicit-function-declaration "${cmd[@]}" -o "$work/zig-$n.o") 2> "$work/zig-$n.err"; then
            cat "$work/zig-$n.err" >&2
            fail "$src does not compile for $ARCH with the open toolchain ($name build flags)"
        fi
    done < "$work/$name.log"
done
echo "sdk-check: $n device compiles for $ARCH (zig cc -mcpu=$ZIG_CPU -Werror) OK"

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
echo "sdk-check: fail-fast messages OK"
echo "sdk-check: OK"
