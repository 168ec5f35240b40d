#!/usr/bin/env bash
# Deploy and run the runner on an Android phone over adb, in either mode.
# STATUS: written against the documented Hexagon SDK tools, Qualcomm's
# public run_main_on_hexagon usage (hexagon-mlir) and FastRPC's documented
# ADSP_LIBRARY_PATH / runtime FARF conventions; tested here with a fake adb
# and a stub SDK tree (tests/hexagon/test_hexagon_device.py), not yet run on
# a phone.  Untested on hardware in particular: that run_main_on_hexagon
# loads libhxrun.so with the stack size given, that hxrun-ap finds
# libcdsprpc.so (LD_LIBRARY_PATH=/vendor/lib64, as public FastRPC clients run
# from /data/local/tmp) and that FastRPC loads libhxfuse_skel.so from
# $HX_DEVICE_DIR through ADSP_LIBRARY_PATH (an unsigned skel needs an
# unsigned PD, or a test-signed device), and the FARF mask file names.
#
#   device.sh check
#   device.sh deploy [kernels/build/hexagon/hxrun | kernels/build/hexagon/hxrun-ap]
#   device.sh run -- kernels/build/hexagon/hxrun --out R.jsonl [--npy-dir N] [hxrun options]
#   device.sh run -- kernels/build/hexagon/hxrun-ap --out R.jsonl [--npy-dir N] [hxrun options]
#
# The mode is the runner's name (kernels/targets/hexagon.mk):
#   hxrun     dsp-only: the whole runner on the cDSP.  `run` pushes it (as
#             libhxrun.so), the SDK's run_main_on_hexagon and its skel to
#             $HX_DEVICE_DIR, enables FARF logging
#             (run_main_on_hexagon.farf) and runs `run_main_on_hexagon 3
#             libhxrun.so ...` (3 = cDSP);
#   hxrun-ap  ap: the AP driver.  `run` pushes it (chmod 755) and
#             libhxfuse_skel.so from beside it, enables FARF logging
#             (hxrun-ap.farf) and runs `./hxrun-ap ...` in $HX_DEVICE_DIR;
#             run_main_on_hexagon is neither checked nor pushed.
# In both, `run` creates the output directories with adb (the DSP's file
# proxy may not create directories), rewrites --out/--npy-dir to paths under
# $HX_DEVICE_DIR/out, runs with ADSP_LIBRARY_PATH set ($HX_DEVICE_DIR first)
# and every argument shell-quoted, and pulls the results back to the
# requested local paths.
#
# Exit status: taken from the runner's output file, not from
# run_main_on_hexagon (no public source shows it returning the DSP main()'s
# status) nor the remote shell: an `end` record with status ok -> 0,
# checksum_mismatch -> 4, clock_unaligned -> 7 (hxrun-ap could not map the
# DSP's clock onto its own within tolerance); no end record -> the echoed
# status if it is an error, else 1; a `--selftest` run's closing record: ok
# -> 0, failed or hang -> 6 (the file is kept: it names the step).  When the
# runner's final rename failed on the device, a complete FILE.tmp (it ends
# with the end record) is accepted.
#
# DSP log: `adb logcat -s adsprpc` is streamed into OUT.dsp.log for the whole
# run (a hang or a crash of the cDSP then leaves what it printed up to that
# point, FARF lines of the selftest included); on failure the buffered log
# (`logcat -d`) is appended.
#
# Launch (dsp-only): run_main_on_hexagon gets stack_size=$HX_DEVICE_STACK
# (default 0x40000, 256 KiB, what hexagon-mlir passes on a device; the
# runner's main thread would otherwise get the loader's default);
# HX_DEVICE_STACK= (empty) leaves it out.  Untested on hardware.
#
# Provenance: the phone's SoC (ro.soc.model, else ro.board.platform), the
# cDSP build (the cdsp entry of the firmware's ver_info.txt), the SDK and the
# Hexagon tools versions go into the meta record as labels soc, dsp_build,
# hexagon_sdk and hexagon_tools ("unknown" when not readable).
#
# Phones: HX_DEVICE_SERIAL names one phone.  HX_DEVICE_SERIALS="s1 s2 ..."
# names a farm: each run leases a free serial for its whole duration through
# an exclusive lock (flock) on $HX_DEVICE_LOCK_DIR/<serial>.lock (default
# /tmp/hxfuse-device-locks: one place per host, not $TMPDIR, which a
# scheduler may make per job), so two runs never share a phone, and adds
# --label device_serial=<serial> so every record names its phone.  Only the
# listed phones that this host's adb lists as attached (`adb devices`) are
# leased, so one list can name the phones of several device hosts; none
# attached here is an error.  The lock belongs to this script's process: it
# is released when the run ends or is killed (a killed run leaves no stale
# lock), and adb runs with the lock's descriptor closed, so an adb server
# started by this run cannot keep the phone locked after it.  Run at most as
# many at once as there are serials (the pipeline's `device` resource); a run
# that finds none free waits (HX_DEVICE_LEASE_TIMEOUT s, default 3600).
#
# Time bounds: every adb step runs under GNU timeout, in its own process
# group: HX_DEVICE_STEP_TIMEOUT s (default 120) for each push, shell command
# and query, HX_DEVICE_PULL_TIMEOUT s (default 600) for each pull and
# HX_DEVICE_RUN_TIMEOUT s (default 7200) for the run itself.  A step that
# overruns is stopped with everything its adb started (TERM, then KILL
# HX_DEVICE_KILL_GRACE s later, default 5), named on stderr ("step '...'
# did not finish within N s") and the script exits 124.  Killing the local
# adb does not stop a process on the phone (adbd keeps it; a runner stuck in
# a FastRPC call after a DSP crash writes nothing that would fail), so the
# remote runner is started in the background with its pid in
# $HX_DEVICE_DIR/out/<stamp>.pid, and a run that overruns, or a device.sh
# stopped by SIGTERM, SIGINT or SIGHUP (the pipeline's own timeout), kills it
# there (TERM, then KILL after the grace), itself bounded.  Nothing this
# script started is left running: the logcat stream, the current step's
# process group and the remote runner are stopped on every exit, a SIGKILL
# included (by a guard process that holds the lease until it has done so:
# "the guard" below).
#
# Environment: HEXAGON_SDK_ROOT (required), HX_DEVICE_SERIAL or
# HX_DEVICE_SERIALS (required), HX_DEVICE_DIR (default
# /data/local/tmp/hxfuse), HEXAGON_ARCH (default v73).
set -euo pipefail
die() { echo "device.sh: error: $*" >&2; exit 2; }
: "${HX_DEVICE_DIR:=/data/local/tmp/hxfuse}"
: "${HEXAGON_ARCH:=v73}"
: "${HX_DEVICE_LOCK_DIR:=/tmp/hxfuse-device-locks}"
: "${HX_DEVICE_LEASE_TIMEOUT:=3600}"
: "${HX_DEVICE_STACK=0x40000}"
: "${HX_DEVICE_STEP_TIMEOUT:=120}"
: "${HX_DEVICE_PULL_TIMEOUT:=600}"
: "${HX_DEVICE_RUN_TIMEOUT:=7200}"
: "${HX_DEVICE_KILL_GRACE:=5}"
for v in HX_DEVICE_STEP_TIMEOUT HX_DEVICE_PULL_TIMEOUT HX_DEVICE_RUN_TIMEOUT HX_DEVICE_KILL_GRACE; do
    case "${!v}" in '' | *[!0-9]* | 0) die "$v=${!v}: expected a whole number of seconds > 0" ;; esac
done
command -v timeout >/dev/null || die "timeout (GNU coreutils) is needed to bound each adb step"

# --- time bounds -----------------------------------------------------------
# What a cleanup needs, as files under $HX_STATE (a step may run in a
# subshell, and the guard below is another process, where variables would
# not reach): steps/ holds the process groups of the steps running now (one
# file per group leader), logcat the stream's pid and start time, remote the
# serial and the pid file of a runner that may run on the phone.  Made below,
# once it is known that this process is not the guard.
HX_STATE=""
HX_STEPS=""
HX_GUARD_PID=""
HX_LOGCAT_PID=""
HX_REMOTE_PID_FILE="" # on the phone, while the runner may run there
HX_SERIAL_FOR_STOP=""

# bounded SECONDS NAME CMD...: CMD under `timeout`, whose own process group
# holds CMD and all it starts.  Returns CMD's status, or 124 (and names the
# step) when it overran and was stopped.
bounded() {
    local s=$1 name=$2 pid rc=0 t0=$SECONDS
    shift 2
    timeout -k "$HX_DEVICE_KILL_GRACE" "$s" "$@" </dev/null &
    pid=$!
    : >"$HX_STEPS/$pid"
    wait "$pid" || rc=$?
    rm -f "$HX_STEPS/$pid"
    # 124: stopped by TERM; 137: it needed the KILL (only a timeout when the
    # bound had passed: else something else killed it)
    if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ $((SECONDS - t0)) -ge "$s" ]; }; then
        echo "device.sh: error: step '$name' did not finish within $s s; it was stopped with everything it started" >&2
        return 124
    fi
    return "$rc"
}

# stop_steps: the process groups of the steps running now.
stop_steps() {
    local f
    for f in "$HX_STEPS"/*; do
        [ -e "$f" ] || continue
        kill -TERM -- "-${f##*/}" 2>/dev/null || true
        rm -f "$f"
    done
}

# remote_may_run SERIAL PIDFILE: from now the runner may run on that phone
# (stop_remote stops it); with no arguments: it no longer does.
remote_may_run() {
    HX_SERIAL_FOR_STOP=${1:-} HX_REMOTE_PID_FILE=${2:-}
    if [ $# -gt 0 ]; then printf '%s\n%s\n' "$1" "$2" >"$HX_STATE/remote"; else rm -f "$HX_STATE/remote"; fi
}

# stop_remote: the runner on the phone, if it may still run (its pid file).
stop_remote() {
    local f=$HX_REMOTE_PID_FILE g=$HX_DEVICE_KILL_GRACE
    [ -n "$f" ] && [ -n "$HX_SERIAL_FOR_STOP" ] || return 0
    HX_REMOTE_PID_FILE=""
    bounded "$((HX_DEVICE_STEP_TIMEOUT + g))" "stop the runner on the phone" adb -s "$HX_SERIAL_FOR_STOP" shell \
        "p=\$(cat $f 2>/dev/null); [ -n \"\$p\" ] || exit 0; kill -TERM \$p 2>/dev/null && echo \"device.sh: stopping the runner (pid \$p) on the phone\" >&2; i=0; while kill -0 \$p 2>/dev/null && [ \$i -lt $g ]; do sleep 1; i=\$((i + 1)); done; kill -KILL \$p 2>/dev/null; rm -f $f; exit 0" 9>&- ||
        echo "device.sh: warning: could not stop the runner on $HX_SERIAL_FOR_STOP (pid file $f); stop it by hand" >&2
}

cleanup() {
    stop_steps
    stop_remote
    [ -z "$HX_LOGCAT_PID" ] || kill "$HX_LOGCAT_PID" 2>/dev/null || true
    rm -rf "$HX_STATE"
    # last: the guard holds the phone's lock too, until it exits
    [ -z "$HX_GUARD_PID" ] || kill "$HX_GUARD_PID" 2>/dev/null || true
}
on_signal() {
    trap - EXIT
    echo "device.sh: stopped by signal $1: stopping its steps and the runner on the phone" >&2
    cleanup
    exit $((128 + $1))
}

# --- the guard ---------------------------------------------------------------
# No trap runs on SIGKILL, and SIGKILL is what a cancelled run usually gets:
# the pipeline's wrapper sends it to the run's whole process group when its
# job is stopped (hxfuse/runner/runpoint.py), and so do a scheduler after its
# grace and the OOM killer.  The current step, in a process group of its own
# (timeout's), would outlive this script, the runner would go on on the
# phone, and the phone's lock would be released at once: the next run would
# lease a phone that is still measuring, and both would measure wrong.  So a
# guard (this script again, in a session of its own, which the kill does not
# reach) holds the lease beside this process and watches it; when it dies
# without its cleanup, the guard does that cleanup (the steps' groups, the
# logcat stream, the runner on the phone) and only then exits, freeing the
# phone.  A normal exit stops the guard at the end of the cleanup.

# stat_of PID: /proc/PID/stat from field 3 (the state) on, past the command
# name, which may hold spaces; nothing where PID is gone.
stat_of() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null; }
# start_of PID: its start time (field 22); empty where there is no /proc.
start_of() { [ ! -d /proc/self ] || stat_of "$1" | cut -d' ' -f20; }
# alive PID START: PID is still the process that started at START (pids are
# reused; a zombie is dead); kill -0 alone where there is no /proc.
alive() {
    local f
    if [ -d /proc/self ]; then
        read -r -a f < <(stat_of "$1") || return 1
        [ "${#f[@]}" -gt 19 ] && [ "${f[0]}" != Z ] && [ "${f[0]}" != X ] && [ "${f[19]}" = "$2" ]
    else
        kill -0 "$1" 2>/dev/null
    fi
}

# start_guard: after the lease (fd 9 is inherited: the guard holds the lock).
start_guard() {
    if ! command -v setsid >/dev/null; then
        echo "device.sh: warning: no setsid (util-linux): if this run is killed with SIGKILL, its adb step and the runner on the phone go on running" >&2
        return 0
    fi
    setsid "$BASH" "${BASH_SOURCE[0]}" __guard "$$" "$(start_of $$)" "$HX_STATE" </dev/null >/dev/null &
    HX_GUARD_PID=$!
}

# guard PID START STATE: the cleanup of the script PID once it is gone,
# unless it removed its STATE itself.
guard() {
    local pid=$1 start=$2 f
    HX_STATE=$3 HX_STEPS=$3/steps
    trap 'exit 0' TERM
    trap '' INT HUP
    while alive "$pid" "$start"; do
        sleep 0.2 &
        wait $! || true
    done
    [ -d "$HX_STATE" ] || exit 0
    echo "device.sh: the run (pid $pid) was killed before its cleanup: stopping its steps and the runner on the phone" >&2
    stop_steps
    if [ -s "$HX_STATE/logcat" ]; then
        read -r -a f <"$HX_STATE/logcat" || true
        if [ "${#f[@]}" -eq 2 ] && alive "${f[0]}" "${f[1]}"; then kill "${f[0]}" 2>/dev/null || true; fi
    fi
    if [ -s "$HX_STATE/remote" ]; then
        { read -r HX_SERIAL_FOR_STOP && read -r HX_REMOTE_PID_FILE; } <"$HX_STATE/remote" || true
        stop_remote
    fi
    rm -rf "$HX_STATE"
}
if [ "${1:-}" = __guard ]; then
    guard "$2" "$3" "$4"
    exit 0
fi

HX_STATE=$(mktemp -d "${TMPDIR:-/tmp}/hxfuse-device.XXXXXX")
HX_STEPS=$HX_STATE/steps
mkdir "$HX_STEPS"
trap cleanup EXIT
trap 'on_signal 1' HUP
trap 'on_signal 2' INT
trap 'on_signal 15' TERM

# lease: sets HX_DEVICE_SERIAL to a free serial of HX_DEVICE_SERIALS attached
# to this host and keeps its lock (fd 9) until this process exits.
lease() {
    [ -n "${HX_DEVICE_SERIALS:-}" ] || return 0
    command -v flock >/dev/null || die "flock is needed to share a device farm (util-linux)"
    command -v adb >/dev/null || die "adb is not installed: apt-get install adb (or Android platform-tools)"
    mkdir -p "$HX_DEVICE_LOCK_DIR"
    local waited=0 s attached here=""
    attached=$(bounded "$HX_DEVICE_STEP_TIMEOUT" "adb devices" adb devices 9>&- 2>/dev/null | awk 'NR > 1 && $2 == "device" { print $1 }')
    for s in $HX_DEVICE_SERIALS; do
        if printf '%s\n' "$attached" | grep -qxF -e "$s"; then here="$here $s"; fi
    done
    [ -n "$here" ] || die "none of the device farm's phones ($HX_DEVICE_SERIALS) is attached to $(hostname 2>/dev/null || echo this host): \`adb devices\` lists '$(echo $attached)' (authorise USB debugging; a farm over several hosts needs a phone on each host its jobs run on)"
    while :; do
        for s in $here; do
            exec 9>"$HX_DEVICE_LOCK_DIR/$s.lock"
            if flock -n 9; then
                HX_DEVICE_SERIAL=$s
                return 0
            fi
            exec 9>&-
        done
        [ "$waited" -lt "$((HX_DEVICE_LEASE_TIMEOUT * 10))" ] ||
            die "no free device among '$HX_DEVICE_SERIALS' after ${HX_DEVICE_LEASE_TIMEOUT}s (locks in $HX_DEVICE_LOCK_DIR)"
        sleep 0.1
        waited=$((waited + 1))
    done
}

# mode_of RUNNER: ap for the AP driver hxrun-ap, else dsp-only (hxrun).
mode_of() {
    case "$(basename "$1")" in
        hxrun-ap) echo ap ;;
        *) echo dsp-only ;;
    esac
}

check() {
    [ -n "${HEXAGON_SDK_ROOT:-}" ] || die "HEXAGON_SDK_ROOT is not set: install the Qualcomm Hexagon SDK and source <sdk>/setup_sdk_env.source"
    command -v adb >/dev/null || die "adb is not installed: apt-get install adb (or Android platform-tools)"
    [ -n "${HX_DEVICE_SERIAL:-}" ] || die "HX_DEVICE_SERIAL is not set: pick the serial of the phone from \`adb devices\` (or list a farm in HX_DEVICE_SERIALS)"
    bounded "$HX_DEVICE_STEP_TIMEOUT" "adb get-state" adb -s "$HX_DEVICE_SERIAL" get-state >/dev/null 2>&1 9>&- || die "device $HX_DEVICE_SERIAL is not reachable over adb (\`adb devices\`; authorise USB debugging)"
}

# check_rmoh: the SDK's run_main_on_hexagon and its skel (dsp-only mode).
check_rmoh() {
    RMOH="$HEXAGON_SDK_ROOT/libs/run_main_on_hexagon/ship/android_aarch64/run_main_on_hexagon"
    [ -x "$RMOH" ] || die "no run_main_on_hexagon at $RMOH (build it in the SDK: libs/run_main_on_hexagon)"
    SKEL=$(ls "$HEXAGON_SDK_ROOT"/libs/run_main_on_hexagon/ship/hexagon_*"$HEXAGON_ARCH"*/librun_main_on_hexagon_skel.so 2>/dev/null | tail -n1)
    [ -n "$SKEL" ] || die "no librun_main_on_hexagon_skel.so for $HEXAGON_ARCH under $HEXAGON_SDK_ROOT/libs/run_main_on_hexagon/ship (some SDK installs ship none: build it in libs/run_main_on_hexagon)"
}

# fd 9 (the farm's lock) closed: an adb server this call starts must not hold
# it.  Each call is one bounded step, named by its adb command line.
ADB() { bounded "$HX_DEVICE_STEP_TIMEOUT" "adb $*" adb -s "$HX_DEVICE_SERIAL" "$@" 9>&-; }
ADB_PULL() { bounded "$HX_DEVICE_PULL_TIMEOUT" "adb pull $*" adb -s "$HX_DEVICE_SERIAL" pull "$@" 9>&-; }

deploy() {
    local so=${1:-kernels/build/hexagon/hxrun}
    if [ "$(mode_of "$so")" = ap ]; then
        deploy_ap "$so"
        return
    fi
    check_rmoh
    [ -f "$so" ] || die "no runner at $so: make -C kernels TARGET=hexagon first"
    ADB shell mkdir -p "$HX_DEVICE_DIR/out"
    ADB push "$RMOH" "$HX_DEVICE_DIR/run_main_on_hexagon" >/dev/null
    ADB shell chmod 755 "$HX_DEVICE_DIR/run_main_on_hexagon"
    ADB push "$SKEL" "$HX_DEVICE_DIR/" >/dev/null
    ADB push "$so" "$HX_DEVICE_DIR/libhxrun.so" >/dev/null
    # FARF runtime logging for the process (mask file beside the executable).
    ADB shell "echo 0x1f > $HX_DEVICE_DIR/run_main_on_hexagon.farf"
}

# deploy_ap EXE: the AP driver and the skel beside it (mode ap).
deploy_ap() {
    local exe=$1 skel
    skel=$(dirname "$exe")/libhxfuse_skel.so
    [ -f "$exe" ] || die "no AP driver at $exe: make -C kernels TARGET=hexagon first (mode ap; it needs the Android NDK)"
    [ -f "$skel" ] || die "no libhxfuse_skel.so beside $exe (the DSP half of mode ap, loaded by FastRPC): make -C kernels TARGET=hexagon"
    ADB shell mkdir -p "$HX_DEVICE_DIR/out"
    ADB push "$exe" "$HX_DEVICE_DIR/hxrun-ap" >/dev/null
    ADB shell chmod 755 "$HX_DEVICE_DIR/hxrun-ap"
    ADB push "$skel" "$HX_DEVICE_DIR/libhxfuse_skel.so" >/dev/null
    # FARF runtime logging of the skel (mask file named after the process).
    ADB shell "echo 0x1f > $HX_DEVICE_DIR/hxrun-ap.farf"
}

# launch_line MODE QUOTED PIDFILE: the remote shell command of one run.  The
# runner runs in the background with its pid in PIDFILE (so that a run that
# overruns can be stopped on the phone), and its own status is echoed;
# device.sh decides from the output file (above).
launch_line() {
    local mode=$1 quoted=$2 pidfile=$3 stack="" env cmd
    if [ "$mode" = ap ]; then
        # the skel from $HX_DEVICE_DIR first, then the system's DSP library dirs
        env="LD_LIBRARY_PATH=/vendor/lib64 ADSP_LIBRARY_PATH='$HX_DEVICE_DIR;/vendor/dsp/cdsp;/vendor/lib/rfsa/adsp;/system/lib/rfsa/adsp;/dsp'"
        cmd="./hxrun-ap $quoted"
    else
        [ -z "$HX_DEVICE_STACK" ] || stack="stack_size=$HX_DEVICE_STACK "
        env="ADSP_LIBRARY_PATH='$HX_DEVICE_DIR;/vendor/lib/rfsa/adsp;/vendor/dsp/cdsp;/system/lib/rfsa/adsp;/dsp'"
        cmd="./run_main_on_hexagon 3 ${stack}libhxrun.so $quoted"
    fi
    printf '%s' "cd $HX_DEVICE_DIR || exit 1; $env $cmd & echo \$! > $pidfile; wait \$!; echo hxrun-exit=\$?"
}

# versions: the --label arguments naming the phone's SoC, its cDSP build and
# the SDK/tools this runner was built with.
versions() {
    local soc dsp sdk tools
    soc=$(ADB shell getprop ro.soc.model 2>/dev/null | tr -d '\r' || true)
    [ -n "$soc" ] || soc=$(ADB shell getprop ro.board.platform 2>/dev/null | tr -d '\r' || true)
    dsp=$(ADB shell cat /vendor/firmware_mnt/verinfo/ver_info.txt 2>/dev/null |
        sed -n 's/.*"cdsp"[^"]*"\([^"]*\)".*/\1/p' | head -n1 || true)
    sdk=$(basename "$HEXAGON_SDK_ROOT")
    tools=${HEXAGON_TOOLS_ROOT:-${DEFAULT_HEXAGON_TOOLS_ROOT:-}}
    tools=${tools:+$(basename "$tools")}
    printf '%s\n' --label "soc=${soc:-unknown}" --label "dsp_build=${dsp:-unknown}" \
        --label "hexagon_sdk=${sdk:-unknown}" --label "hexagon_tools=${tools:-unknown}"
}

# status_of FILE: 0 ok, 4 checksum mismatch, 7 clocks not aligned, 6 a
# failed self-test, 1 no end record.
status_of() {
    local last
    last=$(tail -n1 "$1" 2>/dev/null || true)
    case "$last" in
        *'"record":"end"'*'"status":"ok"'*) return 0 ;;
        *'"record":"end"'*'"status":"checksum_mismatch"'*) return 4 ;;
        *'"record":"end"'*'"status":"clock_unaligned"'*) return 7 ;;
        *'"record":"selftest"'*'"status":"ok"'*) return 0 ;;
        *'"record":"selftest"'*) return 6 ;;
        *) return 1 ;;
    esac
}

run() {
    [ "${1:-}" = "--" ] && shift
    [ $# -ge 1 ] || die "usage: device.sh run -- hxrun|hxrun-ap [hxrun options]"
    local so=$1 mode
    shift
    mode=$(mode_of "$so")
    deploy "$so"
    local args=() out="" npy="" stamp workloads=mvd
    stamp=$(date +%s%N)
    local dout="$HX_DEVICE_DIR/out/$stamp.jsonl" dnpy="$HX_DEVICE_DIR/out/$stamp.npy"
    while [ $# -gt 0 ]; do
        case "$1" in
            --out) out=$2; args+=(--out "$dout"); shift 2 ;;
            --npy-dir) npy=$2; args+=(--npy-dir "$dnpy"); shift 2 ;;
            --workloads) workloads=$2; args+=("$1" "$2"); shift 2 ;;
            *) args+=("$1"); shift ;;
        esac
    done
    [ -n "$out" ] || die "run needs --out"
    args+=(--label "device_serial=$HX_DEVICE_SERIAL")
    local v
    while IFS= read -r v; do args+=("$v"); done < <(versions)
    if [ -n "$npy" ]; then
        local wl dirs=("$dnpy")
        for wl in ${workloads//,/ }; do dirs+=("$dnpy/$wl"); done
        ADB shell mkdir -p "${dirs[@]}"
    fi
    local quoted pidfile="$HX_DEVICE_DIR/out/$stamp.pid" run_rc=0
    quoted=$(printf '%q ' "${args[@]}")
    ADB logcat -c >/dev/null 2>&1 || true
    # adb itself in the background (not the ADB function's subshell), so its
    # pid is the one to stop; the stream has no bound of its own: it is
    # stopped when the run ends, however it ends (cleanup)
    adb -s "$HX_DEVICE_SERIAL" logcat -s adsprpc > "$out.dsp.log" 2>&1 9>&- &
    HX_LOGCAT_PID=$!
    echo "$HX_LOGCAT_PID $(start_of "$HX_LOGCAT_PID")" >"$HX_STATE/logcat"
    remote_may_run "$HX_DEVICE_SERIAL" "$pidfile"
    local teefd teepid
    exec {teefd}> >(tee "$out.device.log")
    teepid=$!
    bounded "$HX_DEVICE_RUN_TIMEOUT" "run $(basename "$so") on the phone (HX_DEVICE_RUN_TIMEOUT)" \
        adb -s "$HX_DEVICE_SERIAL" shell "$(launch_line "$mode" "$quoted" "$pidfile")" 9>&- >&"$teefd" || run_rc=$?
    exec {teefd}>&-
    # a run that overran may still run on the phone: stop it there (first:
    # whatever it holds of the log's pipe ends with it)
    if [ "$run_rc" -eq 124 ]; then stop_remote; fi
    remote_may_run
    wait "$teepid" 2>/dev/null || true # tee has written the whole log
    kill "$HX_LOGCAT_PID" 2>/dev/null || true
    wait "$HX_LOGCAT_PID" 2>/dev/null || true
    HX_LOGCAT_PID=""
    rm -f "$HX_STATE/logcat"
    local echoed rc=1 got=""
    echoed=$(sed -n 's/.*hxrun-exit=\([0-9]*\).*/\1/p' "$out.device.log" | tail -n1)
    rm -f "$out.pulled"
    if ADB_PULL "$dout" "$out.pulled" >/dev/null 2>&1; then
        got=$dout
    elif ADB_PULL "$dout.tmp" "$out.pulled" >/dev/null 2>&1; then
        got="$dout.tmp"
    fi
    if [ -n "$got" ]; then
        set +e
        status_of "$out.pulled"
        rc=$?
        set -e
        if [ "$rc" -ne 1 ]; then
            mv "$out.pulled" "$out"
            [ "$got" = "$dout" ] || echo "device.sh: note: the runner could not rename $got on the device; its end record says the run completed" >&2
        else
            mv "$out.pulled" "$out.incomplete"
        fi
    fi
    if [ "$rc" -eq 1 ] && [ -n "$echoed" ] && [ "$echoed" -ne 0 ]; then rc=$echoed; fi
    # an overrun is the run's status, whatever it left (named above)
    if [ "$run_rc" -eq 124 ]; then rc=124; fi
    if [ -n "$npy" ] && [ "$rc" -ne 1 ] && [ "$rc" -ne 124 ]; then
        mkdir -p "$npy"
        ADB_PULL "$dnpy/." "$npy" >/dev/null
    fi
    if [ "$rc" -ne 0 ]; then
        { echo "--- logcat -d -s adsprpc after the failure ---"; ADB logcat -d -s adsprpc 2>&1; } >> "$out.dsp.log" || true
        echo "device.sh: error: the run on $HX_DEVICE_SERIAL failed (status $rc${got:+, output $got}${got:-, no output file}); see $out.device.log and the DSP log $out.dsp.log" >&2
    fi
    ADB shell rm -rf "$dout" "$dout.tmp" "$dnpy" "$pidfile"
    exit "$rc"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
    check) lease; start_guard; check; check_rmoh; echo "device.sh: ready: $HX_DEVICE_SERIAL, $HX_DEVICE_DIR, $HEXAGON_ARCH" ;;
    deploy) lease; start_guard; check; deploy "$@" ;;
    run) lease; start_guard; check; run "$@" ;;
    *) die "usage: device.sh check | deploy [hxrun | hxrun-ap] | run -- hxrun|hxrun-ap [hxrun options]" ;;
esac
