"""The simulator and phone scripts without the SDK, a simulator or a phone.

* ``kernels/hexagon/sim.sh`` (HX_SIM_DRY_RUN=1) against a stub SDK tree: the
  hexagon-sim command carries the QTimer/L2VIC cosim file, the QuRT model,
  --l2tcm_base, the HMX-capable core model and the runner's stack size, and a
  missing piece is named.
* ``kernels/hexagon/device.sh run`` against a fake ``adb`` whose "phones" are
  local directories and whose run_main_on_hexagon writes what the runner
  would (and always exits 0, as nothing says the real one passes the DSP
  status on): the exit status comes from the output file, directories are
  created with adb, arguments survive the remote shell, a failure saves the
  DSP log, and a farm of serials is leased so that two runs never share a
  phone and every record names its serial.
* the same in mode ap (the runner given is hxrun-ap): the driver (mode 755)
  and libhxfuse_skel.so from beside it are pushed, run_main_on_hexagon is
  neither needed nor pushed, the remote command runs ./hxrun-ap in the
  device directory with ADSP_LIBRARY_PATH naming it first, arguments and
  labels survive, and the end status clock_unaligned gives 7.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "kernels"
DEVDIR = "/hxfuse-fake-device"

FAKE_ADB = r"""#!/usr/bin/env bash
# adb -s SERIAL CMD...: the phone is $FAKE_PHONES/SERIAL (paths under DEVDIR mapped there)
# adb devices: the phones of $FAKE_ATTACHED (default: those device.sh was given)
if [ "$1" = devices ]; then
    echo "List of devices attached"
    for s in ${FAKE_ATTACHED-$HX_DEVICE_SERIALS ${HX_DEVICE_SERIAL:-}}; do printf '%s\tdevice\n' "$s"; done
    exit 0
fi
[ "$1" = -s ] || { echo "fake adb: -s SERIAL first" >&2; exit 1; }
serial=$2; shift 2
root=$FAKE_PHONES/$serial
map() { printf '%s' "$1" | sed "s#DEVDIR#$root/DEVDIR#g"; }
echo "$serial $*" >> "$FAKE_PHONES/adb.log"
# FAKE_HANG=<adb command>: that command never returns (a child that must be
# stopped with it: its pid in hang.pid)
if [ "${FAKE_HANG:-}" = "$1" ]; then sleep 611 & echo $! > "$FAKE_PHONES/hang.pid"; wait $!; fi
case "$1" in
    get-state) echo device ;;
    push) dst=$(map "$3"); case "$3" in */) mkdir -p "$dst" ;; *) mkdir -p "$(dirname "$dst")" ;; esac; cp "$2" "$dst" ;;
    pull) src=$(map "$2"); [ -e "$src" ] || { echo "adb: error: remote object '$2' does not exist" >&2; exit 1; }
          if [ -d "$src" ]; then mkdir -p "$3"; cp -r "$src"/. "$3"; else cp "$src" "$3"; fi ;;
    logcat) case "${2:-}" in
                -d) echo "fake DSP log of $serial" ;;
                -s) echo "fake adsprpc stream of $serial"; echo $$ > "$FAKE_PHONES/logcat.pid"; exec sleep 600 ;;  # streams until killed
            esac; exit 0 ;;
    # the "phone" runs the command in its own session, as adbd does: killing
    # this client does not stop it
    shell) shift; FAKE_SERIAL=$serial setsid sh -c "$(map "$*")" & wait $! ;;
    *) echo "fake adb: unknown $1" >&2; exit 1 ;;
esac
""".replace("DEVDIR", DEVDIR)

# What the runner would leave behind; run_main_on_hexagon itself exits 0.
FAKE_RMOH = r"""#!/usr/bin/env bash
shift  # 3 (the cDSP)
case "$1" in stack_size=*) echo "$1" > "$FAKE_PHONES/stack.log"; shift ;; esac
shift  # libhxrun.so
out="" npy="" labels="" args=""
while [ $# -gt 0 ]; do
    args="$args[$1]"
    case "$1" in
        --out) out=$2; args="$args[$2]"; shift 2 ;;
        --npy-dir) npy=$2; args="$args[$2]"; shift 2 ;;
        --label) labels="$labels,\"${2%%=*}\":\"${2#*=}\""; args="$args[$2]"; shift 2 ;;
        *) shift ;;
    esac
done
echo "$FAKE_SERIAL start $(date +%s.%N)" >> "$FAKE_PHONES/runs.log"
# a runner stuck in a FastRPC call after a DSP crash: it never returns
if [ "${FAKE_MODE:-}" = hang ]; then echo $$ > "$FAKE_PHONES/runner.pid"; exec sleep 612; fi
sleep "${FAKE_RUN_SECONDS:-0.3}"
printf '{"record":"meta","labels":{%s},"argv":"%s"}\n' "${labels#,}" "$args" > "$out.tmp"
if [ -n "$npy" ]; then [ -d "$npy/mv" ] && echo x > "$npy/mv/M_A.npy"; fi
case "${FAKE_MODE:-ok}" in
    ok) echo '{"record":"end","status":"ok"}' >> "$out.tmp"; mv "$out.tmp" "$out" ;;
    mismatch) echo '{"record":"end","status":"checksum_mismatch"}' >> "$out.tmp"; mv "$out.tmp" "$out" ;;
    norename) echo '{"record":"end","status":"ok"}' >> "$out.tmp" ;;
    crash) ;;
    selftest_fail) echo '{"record":"selftest","status":"failed","first_failure":"vtcm_full"}' >> "$out.tmp"; mv "$out.tmp" "$out" ;;
    clock) echo '{"record":"end","status":"clock_unaligned"}' >> "$out.tmp"; mv "$out.tmp" "$out" ;;
esac
echo "$FAKE_SERIAL end $(date +%s.%N)" >> "$FAKE_PHONES/runs.log"
exit 0
"""

# The AP driver hxrun-ap: the same, launched directly (no run_main_on_hexagon
# arguments before its own), and it records how it was started.
FAKE_AP = FAKE_RMOH.replace(
    """shift  # 3 (the cDSP)
case "$1" in stack_size=*) echo "$1" > "$FAKE_PHONES/stack.log"; shift ;; esac
shift  # libhxrun.so
""",
    """printf '%s\\n' "$0" "$PWD" "$ADSP_LIBRARY_PATH" "$LD_LIBRARY_PATH" > "$FAKE_PHONES/ap_launch.log"
""",
)
assert FAKE_AP != FAKE_RMOH


def _fake_env(tmp: Path, **extra) -> dict:
    subprocess.run([str(KERNELS / "hexagon/sdk_check.sh"), "fake-sdk", str(tmp)], check=True)
    rmoh = tmp / "sdk/libs/run_main_on_hexagon/ship/android_aarch64/run_main_on_hexagon"
    rmoh.write_text(FAKE_RMOH)
    rmoh.chmod(0o755)
    (tmp / "bin").mkdir()
    adb = tmp / "bin/adb"
    adb.write_text(FAKE_ADB)
    adb.chmod(0o755)
    (tmp / "phones").mkdir()
    getprop = tmp / "bin/getprop"  # the phone's getprop (adb shell runs here)
    getprop.write_text('#!/bin/sh\n[ "$1" = ro.soc.model ] && echo SM8550\n')
    getprop.chmod(0o755)
    so = tmp / "hxrun"
    so.write_bytes(b"\x7fELF")
    env = {
        "PATH": f"{tmp / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp),
        "HEXAGON_SDK_ROOT": str(tmp / "sdk"),
        "HX_DEVICE_DIR": DEVDIR,
        "FAKE_PHONES": str(tmp / "phones"),
        "HX_DEVICE_LOCK_DIR": str(tmp / "locks"),
    }
    env.update(extra)
    return env


def _device_run(tmp: Path, env: dict, out: Path, *args: str, wait=True):
    cmd = [str(KERNELS / "hexagon/device.sh"), "run", "--", str(tmp / "hxrun"), "--out", str(out), *args]
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def _records(p: Path) -> list[dict]:
    return [json.loads(ln) for ln in p.read_text().splitlines() if ln.strip()]


def test_status_comes_from_the_output_file_not_run_main_on_hexagon(tmp_path):
    env = _fake_env(tmp_path, HX_DEVICE_SERIAL="phone1")
    out = tmp_path / "r.jsonl"
    r = _device_run(
        tmp_path,
        env,
        out,
        "--npy-dir",
        str(tmp_path / "npy"),
        "--workloads",
        "mv,mvd",
        "--label",
        "note=two words; $(touch /tmp/nope)",
    )
    assert r.returncode == 0, r.stderr
    recs = _records(out)
    assert recs[-1] == {"record": "end", "status": "ok"}
    assert recs[0]["labels"] == {
        "note": "two words; $(touch /tmp/nope)",
        "device_serial": "phone1",
        "soc": "SM8550",
        "dsp_build": "unknown",
        "hexagon_sdk": "sdk",
        "hexagon_tools": "unknown",
    }
    # launched with the device stack size; the DSP log streamed during the run
    assert (tmp_path / "phones/stack.log").read_text().strip() == "stack_size=0x40000"
    assert "fake adsprpc stream of phone1" in (tmp_path / "r.jsonl.dsp.log").read_text()
    assert (tmp_path / "npy/mv/M_A.npy").is_file()  # npy tree made with adb, then pulled
    adb_log = (tmp_path / "phones/adb.log").read_text()
    assert f"mkdir -p {DEVDIR}/out/" in adb_log and ".npy/mvd" in adb_log
    assert "run_main_on_hexagon.farf" in adb_log

    env["FAKE_MODE"] = "mismatch"
    r = _device_run(tmp_path, env, tmp_path / "m.jsonl")
    assert r.returncode == 4 and "failed (status 4" in r.stderr
    dsp_log = (tmp_path / "m.jsonl.dsp.log").read_text()
    assert "fake adsprpc stream of phone1" in dsp_log and "fake DSP log of phone1" in dsp_log

    env["FAKE_MODE"] = "crash"  # exits 0, no end record
    r = _device_run(tmp_path, env, tmp_path / "c.jsonl")
    assert r.returncode == 1 and "failed (status 1" in r.stderr
    assert not (tmp_path / "c.jsonl").exists() and (tmp_path / "c.jsonl.incomplete").exists()

    env["FAKE_MODE"] = "selftest_fail"  # the ladder's closing record: kept, status 6
    r = _device_run(tmp_path, env, tmp_path / "s.jsonl", "--selftest")
    assert r.returncode == 6, r.stderr
    assert _records(tmp_path / "s.jsonl")[-1]["first_failure"] == "vtcm_full"

    env["FAKE_MODE"] = "norename"  # complete run, rename failed on the DSP
    r = _device_run(tmp_path, env, tmp_path / "n.jsonl")
    assert r.returncode == 0 and "could not rename" in r.stderr
    assert _records(tmp_path / "n.jsonl")[-1]["status"] == "ok"


def test_missing_serial_and_sdk_are_named(tmp_path):
    env = _fake_env(tmp_path)
    r = _device_run(tmp_path, env, tmp_path / "r.jsonl")
    assert r.returncode == 2 and "HX_DEVICE_SERIAL is not set" in r.stderr and "HX_DEVICE_SERIALS" in r.stderr
    env["HX_DEVICE_SERIAL"] = "phone1"
    del env["HEXAGON_SDK_ROOT"]
    r = _device_run(tmp_path, env, tmp_path / "r.jsonl")
    assert r.returncode == 2 and "HEXAGON_SDK_ROOT is not set" in r.stderr


def test_farm_never_runs_two_jobs_on_one_phone_and_labels_every_record(tmp_path):
    env = _fake_env(tmp_path, HX_DEVICE_SERIALS="s1 s2", FAKE_RUN_SECONDS="0.4")
    procs = [_device_run(tmp_path, env, tmp_path / f"p{i}.jsonl", wait=False) for i in range(6)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    spans: dict[str, list[tuple[float, float]]] = {}
    starts: dict[str, float] = {}
    for ln in (tmp_path / "phones/runs.log").read_text().splitlines():
        serial, what, t = ln.split()
        if what == "start":
            starts[serial + str(len(spans.get(serial, [])))] = float(t)
        else:
            k = serial + str(len(spans.get(serial, [])))
            spans.setdefault(serial, []).append((starts.pop(k), float(t)))
    assert sorted(spans) == ["s1", "s2"] and sum(len(v) for v in spans.values()) == 6
    for serial, iv in spans.items():
        iv.sort()
        for (a0, a1), (b0, b1) in zip(iv, iv[1:]):
            assert b0 >= a1, f"two runs at once on {serial}: {iv}"
    # every record names the phone it ran on, and that phone holds its run
    for i in range(6):
        serial = _records(tmp_path / f"p{i}.jsonl")[0]["labels"]["device_serial"]
        assert serial in ("s1", "s2")
    # both phones were busy at the same time at least once (the farm is used)
    (a0, a1), (b0, b1) = spans["s1"][0], spans["s2"][0]
    assert a0 < b1 and b0 < a1


def _sim_env(tmp: Path) -> dict:
    subprocess.run([str(KERNELS / "hexagon/sdk_check.sh"), "fake-sdk", str(tmp)], check=True)
    return {
        "PATH": "/usr/bin:/bin",
        "HEXAGON_SDK_ROOT": str(tmp / "sdk"),
        "HEXAGON_TOOLS_ROOT": str(tmp / "sdk/tools/HEXAGON_Tools/19.0.04"),
        "HX_SIM_DRY_RUN": "1",
    }


def test_simulator_command_has_the_platform_models(tmp_path):
    env = _sim_env(tmp_path)
    so = tmp_path / "build/hxrun"
    so.parent.mkdir()
    so.write_bytes(b"\x7fELF")
    r = subprocess.run(
        [str(KERNELS / "hexagon/sim.sh"), "--", str(so), "--out", "r.jsonl"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    cmd = r.stdout.split()
    tools = tmp_path / "sdk/tools/HEXAGON_Tools/19.0.04"
    assert cmd[0] == str(tools / "Tools/bin/hexagon-sim") and "-mv73na_1" in cmd
    assert cmd[cmd.index("--cosim_file") + 1] == str(so.parent / "q6ss.cfg")
    assert cmd[cmd.index("--rtos") + 1] == str(so.parent / "osam.cfg")
    assert cmd[cmd.index("--l2tcm_base") + 1] == "0xd800"
    assert "stack_size=0x400000" in cmd and cmd[-3:] == [str(so), "--out", "r.jsonl"]
    assert cmd[cmd.index("--usefs") + 1] == str(tools / "Tools/target/hexagon/lib/v73/G0/pic")
    q6ss = (so.parent / "q6ss.cfg").read_text().splitlines()
    assert q6ss[0].startswith(str(tools / "Tools/lib/iss/qtimer.so")) and "--freq=19200000" in q6ss[0]
    assert q6ss[1].startswith(str(tools / "Tools/lib/iss/l2vic.so"))
    assert (so.parent / "osam.cfg").read_text().strip().endswith("computev73/debugger/lnx64/qurt_model.so")
    (tmp_path / "sdk/rtos/qurt/computev73/debugger/lnx64/qurt_model.so").unlink()
    r = subprocess.run([str(KERNELS / "hexagon/sim.sh"), "--", str(so)], env=env, capture_output=True, text=True)
    assert r.returncode == 2 and "qurt_model.so" in r.stderr


def _fake_ap(tmp: Path) -> Path:
    """build/hexagon/hxrun-ap and libhxfuse_skel.so beside it; the SDK's
    run_main_on_hexagon removed (mode ap must not need it)."""
    (tmp / "ap").mkdir()
    exe = tmp / "ap/hxrun-ap"
    exe.write_text(FAKE_AP)
    exe.chmod(0o644)  # device.sh makes it executable on the phone
    (tmp / "ap/libhxfuse_skel.so").write_bytes(b"\x7fELF skel")
    (tmp / "sdk/libs/run_main_on_hexagon/ship/android_aarch64/run_main_on_hexagon").unlink()
    return exe


def _ap_run(env: dict, exe: Path, out: Path, *args: str):
    cmd = [str(KERNELS / "hexagon/device.sh"), "run", "--", str(exe), "--out", str(out), *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def test_ap_mode_pushes_driver_and_skel_and_runs_hxrun_ap_under_adsp_library_path(tmp_path):
    env = _fake_env(tmp_path, HX_DEVICE_SERIAL="phone1")
    exe = _fake_ap(tmp_path)
    out = tmp_path / "r.jsonl"
    note = "two words; $(touch /tmp/nope) 'q'"
    r = _ap_run(env, exe, out, "--npy-dir", str(tmp_path / "npy"), "--workloads", "mv", "--label", f"note={note}")
    assert r.returncode == 0, r.stderr
    recs = _records(out)
    assert recs[-1] == {"record": "end", "status": "ok"}
    assert recs[0]["labels"]["note"] == note and recs[0]["labels"]["device_serial"] == "phone1"
    assert recs[0]["labels"]["soc"] == "SM8550" and recs[0]["labels"]["hexagon_sdk"] == "sdk"
    assert "[--workloads][mv]" in recs[0]["argv"] and f"[--label][note={note}]" in recs[0]["argv"]
    assert (tmp_path / "npy/mv/M_A.npy").is_file()
    # pushed: the driver (executable) and the skel, nothing of run_main_on_hexagon
    dev = tmp_path / "phones/phone1" / DEVDIR.lstrip("/")
    assert os.access(dev / "hxrun-ap", os.X_OK) and (dev / "hxrun-ap").read_text() == FAKE_AP
    assert (dev / "libhxfuse_skel.so").read_bytes() == b"\x7fELF skel"
    assert not (dev / "run_main_on_hexagon").exists() and not (dev / "libhxrun.so").exists()
    adb_log = (tmp_path / "phones/adb.log").read_text()
    assert f"push {exe} {DEVDIR}/hxrun-ap" in adb_log and f"shell chmod 755 {DEVDIR}/hxrun-ap" in adb_log
    assert f"push {exe.parent / 'libhxfuse_skel.so'} {DEVDIR}/libhxfuse_skel.so" in adb_log
    assert "run_main_on_hexagon" not in adb_log and f"{DEVDIR}/hxrun-ap.farf" in adb_log
    # the remote command line, as adb got it
    line = [ln for ln in adb_log.splitlines() if "./hxrun-ap" in ln][0]
    adsp = f"{DEVDIR};/vendor/dsp/cdsp;/vendor/lib/rfsa/adsp;/system/lib/rfsa/adsp;/dsp"
    assert line.startswith(
        f"phone1 shell cd {DEVDIR} || exit 1; LD_LIBRARY_PATH=/vendor/lib64 ADSP_LIBRARY_PATH='{adsp}' ./hxrun-ap "
        f"--out {DEVDIR}/out/"
    ), line
    # in the background with its pid in a file (a run that overruns is stopped there), its status echoed
    assert re.search(rf" & echo \$! > {DEVDIR}/out/[0-9]+\.pid; wait \$!; echo hxrun-exit=\$\?$", line), line
    assert "stack_size" not in line
    # ... and what the driver saw on the "phone": started in the device dir
    exe0, cwd, adsp_seen, ld = (tmp_path / "phones/ap_launch.log").read_text().splitlines()
    assert exe0 == "./hxrun-ap" and cwd == str(dev) and ld == "/vendor/lib64"
    assert adsp_seen == f"{tmp_path / 'phones/phone1'}/{adsp}"  # the fake adb maps DEVDIR under the phone


def test_ap_mode_exit_status_comes_from_the_output_file(tmp_path):
    env = _fake_env(tmp_path, HX_DEVICE_SERIAL="phone1")
    exe = _fake_ap(tmp_path)
    for mode, rc in (("clock", 7), ("mismatch", 4), ("crash", 1), ("selftest_fail", 6), ("norename", 0)):
        env["FAKE_MODE"] = mode
        r = _ap_run(env, exe, tmp_path / f"{mode}.jsonl")
        assert r.returncode == rc, (mode, r.stderr)
        if rc:
            assert (
                f"failed (status {rc}" in r.stderr
                and "fake DSP log of phone1" in (tmp_path / f"{mode}.jsonl.dsp.log").read_text()
            )
    assert _records(tmp_path / "clock.jsonl")[-1]["status"] == "clock_unaligned"  # kept: it says why
    (exe.parent / "libhxfuse_skel.so").unlink()
    r = _ap_run(env, exe, tmp_path / "x.jsonl")
    assert r.returncode == 2 and "no libhxfuse_skel.so beside" in r.stderr, r.stderr


def _gone(pid_file: Path, within: float = 10.0) -> bool:
    """The process whose pid the fake wrote there has ended."""
    pid = int(pid_file.read_text())
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # a zombie counts as ended (its parent, killed too, no longer reaps it)
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def test_a_hung_adb_step_is_named_and_stopped(tmp_path):
    env = _fake_env(tmp_path, HX_DEVICE_SERIAL="phone1", FAKE_HANG="push", HX_DEVICE_STEP_TIMEOUT="2")
    t0 = time.monotonic()
    r = _device_run(tmp_path, env, tmp_path / "r.jsonl")
    assert r.returncode == 124, r.stderr
    assert "step 'adb push " in r.stderr and "did not finish within 2 s" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 60
    assert _gone(tmp_path / "phones/hang.pid"), "the hung adb's child outlived the step"


def test_a_hung_run_is_named_and_stopped_on_the_phone(tmp_path):
    env = _fake_env(tmp_path, HX_DEVICE_SERIAL="phone1", FAKE_MODE="hang", HX_DEVICE_RUN_TIMEOUT="2")
    exe = _fake_ap(tmp_path)
    r = _ap_run(env, exe, tmp_path / "r.jsonl")
    assert r.returncode == 124, r.stderr
    assert "step 'run hxrun-ap on the phone (HX_DEVICE_RUN_TIMEOUT)' did not finish within 2 s" in r.stderr, r.stderr
    assert "stopping the runner (pid" in r.stderr
    # the runner on the "phone" (its own session: the local adb's death did
    # not stop it) and the DSP log stream are gone; the partial output kept
    assert _gone(tmp_path / "phones/runner.pid"), "the runner still runs on the phone"
    assert _gone(tmp_path / "phones/logcat.pid"), "the logcat stream still runs"
    assert (tmp_path / "r.jsonl.dsp.log").exists() and not (tmp_path / "r.jsonl").exists()
    dev = tmp_path / "phones/phone1" / DEVDIR.lstrip("/")
    assert not list((dev / "out").glob("*.pid"))


@pytest.mark.parametrize(
    "sig, said",
    [
        (signal.SIGTERM, "stopped by signal 15"),
        # no trap runs: the guard that device.sh started in a session of its
        # own does the cleanup
        (signal.SIGKILL, "was killed before its cleanup"),
    ],
)
def test_a_device_sh_stopped_by_the_pipeline_stops_the_runner_on_the_phone(tmp_path, sig, said):
    # the pipeline's own timeout (hxfuse/runner/runpoint.py) sends SIGTERM to
    # device.sh's process group, a stopped job SIGKILL; the run's adb and
    # the phone's runner are not in it
    env = _fake_env(tmp_path, HX_DEVICE_SERIAL="phone1", FAKE_MODE="hang")
    exe = _fake_ap(tmp_path)
    cmd = [str(KERNELS / "hexagon/device.sh"), "run", "--", str(exe), "--out", str(tmp_path / "r.jsonl")]
    p = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    end = time.monotonic() + 60
    while not (tmp_path / "phones/runner.pid").exists():
        assert time.monotonic() < end and p.poll() is None, p.communicate()
        time.sleep(0.1)
    os.killpg(p.pid, sig)
    _, err = p.communicate(timeout=60)  # the guard holds stderr until it is done
    assert p.returncode == (143 if sig == signal.SIGTERM else -signal.SIGKILL), err
    assert said in err and "stopping the runner (pid" in err, err
    assert _gone(tmp_path / "phones/runner.pid"), "the runner still runs on the phone"
    assert _gone(tmp_path / "phones/logcat.pid"), "the logcat stream still runs"


def test_bad_time_bounds_are_refused(tmp_path):
    env = _fake_env(tmp_path, HX_DEVICE_SERIAL="phone1", HX_DEVICE_RUN_TIMEOUT="soon")
    r = _device_run(tmp_path, env, tmp_path / "r.jsonl")
    assert r.returncode == 2 and "HX_DEVICE_RUN_TIMEOUT=soon" in r.stderr, r.stderr
