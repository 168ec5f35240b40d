"""A device farm without phones: the `hexagon` target over two fake phones.

The pipeline runs the `hexagon` target against a stub Hexagon SDK
(``kernels/hexagon/sdk_check.sh fake-sdk``: its hexagon-clang only creates
its outputs) and a fake ``adb`` on PATH whose "phones" are local
directories.  The phone's ``run_main_on_hexagon`` runs this machine's own
runner (built for the host) with the arguments device.sh gave it, so every
record, check and summary downstream is real; only the phone is not.  The
fake adb logs the start and end of every ``adb shell`` per serial, and the
shell that runs the runner sleeps first so that runs overlap if they can.

1. Six points over ``device_serials: [s1, s2]`` with ``--cores 4``: every
   point completes; both phones are used; two shells never overlap on one
   serial; at most two runs at once overall (the `device` limit is the
   number of phones, set by the workflow, not typed); every raw record,
   sidecar and the summary name the phone.
2. A run killed with its process group (as a cancelled job is) leaves no
   lease behind: the next run gets the phone at once.  An adb server started
   during a run (adb starts one when none is running) does not keep the
   phone locked after the run.
3. A bad serial list fails before any job with a message naming the key;
   a listed phone that is not attached fails in deploy, before any run,
   unless the farm spans several hosts (farm_spans_hosts): then this host's
   jobs use its own phones.

4. Mode ap (target_settings.hexagon.mode, the default): the planned jobs
   build hxrun-ap and libhxfuse_skel.so (build_ap), stage them (stage_ap),
   deploy pushes both, every measurement job runs .../stage/hxrun-ap and
   waits for both ladders, the DSP's (hxrun --selftest) and the boundary's
   (hxrun-ap --selftest, selftest_ap); mode dsp-only plans none of that (the
   farm tests above run in it); a bad mode, mode ap on the simulator and
   mode ap without the NDK fail before any job, naming what to do.  One
   point end to end in mode ap: the fake phone's "hxrun-ap" is this
   machine's runner, as its run_main_on_hexagon is for hxrun.

The fake is not a phone: whether adbd ends a runner whose adb client was
killed, the real run_main_on_hexagon and the real AP driver with its skel
are untested here.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from pipeline_util import TINY, copy_repo, job_counts, snakemake, write_config

ROOT = Path(__file__).resolve().parents[2]
DEVDIR = "/hxfuse-fake-device"
POINTS = [f"tiny/{w}/{p}" for w in ("mv", "md", "mvd") for p in ("small", "big")]

# adb devices | adb -s SERIAL CMD...: phone SERIAL is $FAKE_PHONES/SERIAL
# (device paths under DEVDIR mapped there).  Every `shell` is logged with its
# start and end; the one that runs the runner sleeps $FAKE_RUN_SECONDS first.
# The first call that talks to a phone starts a long-lived "server" (setsid,
# every descriptor inherited), as adb does when no server is running.
FAKE_ADB = r"""#!/usr/bin/env bash
# job: the pid of the device.sh that called (its subshells are device.sh too:
# the outermost one), one per run job
job() { local p=$PPID j=0; while [ "$p" -gt 1 ]; do
            grep -q device.sh "/proc/$p/cmdline" 2>/dev/null && j=$p
            p=$(cut -d' ' -f4 "/proc/$p/stat" 2>/dev/null || echo 1); done; echo "$j"; }
if [ "$1" = devices ]; then
    echo "$(job) $(date +%s.%N)" >> "$FAKE_PHONES/leases.log"
    echo "List of devices attached"
    for s in ${FAKE_ATTACHED-$HX_DEVICE_SERIALS}; do printf '%s\tdevice\n' "$s"; done
    exit 0
fi
[ "$1" = -s ] || { echo "fake adb: -s SERIAL first" >&2; exit 1; }
serial=$2; shift 2
if mkdir "$FAKE_PHONES/adb-server" 2>/dev/null; then
    setsid sleep 600 </dev/null >/dev/null 2>&1 &
    echo $! > "$FAKE_PHONES/adb-server/pid"
fi
root=$FAKE_PHONES/$serial
map() { printf '%s' "$1" | sed "s#DEVDIR#$root/DEVDIR#g"; }
now() { date +%s.%N; }
case "$1" in
    get-state) echo device ;;
    push) dst=$(map "$3"); echo "$serial push $2 $3" >> "$FAKE_PHONES/push.log"
          case "$3" in */) mkdir -p "$dst" ;; *) mkdir -p "$(dirname "$dst")" ;; esac; cp "$2" "$dst"
          # the phone's CPU "runs" the AP driver as this machine's runner (the
          # stub NDK's hxrun-ap is an empty file), as run_main_on_hexagon does hxrun
          case "$3" in */hxrun-ap) printf '#!/bin/sh\nexec "$FAKE_HOST_RUNNER" "$@"\n' > "$dst" ;; esac ;;
    pull) src=$(map "$2"); [ -e "$src" ] || { echo "adb: error: remote object '$2' does not exist" >&2; exit 1; }
          if [ -d "$src" ]; then mkdir -p "$3"; cp -r "$src"/. "$3"; else cp "$src" "$3"; fi ;;
    logcat) [ "${2:-}" = -d ] && echo "fake DSP log of $serial"; exit 0 ;;
    shell) shift
           echo "$serial $$ start $(now) $(job)" >> "$FAKE_PHONES/shell.log"
           echo "$serial $*" >> "$FAKE_PHONES/cmd.log"
           case "$*" in *run_main_on_hexagon\ 3* | *./hxrun-ap\ *) sleep "${FAKE_RUN_SECONDS:-0}" ;; esac
           FAKE_SERIAL=$serial sh -c "$(map "$*")"; rc=$?
           echo "$serial $$ end $(now) $(job)" >> "$FAKE_PHONES/shell.log"
           exit $rc ;;
    *) echo "fake adb: unknown $1" >&2; exit 1 ;;
esac
""".replace("DEVDIR", DEVDIR)

# run_main_on_hexagon 3 [stack_size=N] libhxrun.so ARGS: this machine's runner with ARGS
# (exits 0 whatever the runner did, as nothing says the real one passes the
# DSP's status on; device.sh reads the status from the output file).
FAKE_RMOH = r"""#!/usr/bin/env bash
shift
case "$1" in stack_size=*) shift ;; esac
shift
"$FAKE_HOST_RUNNER" "$@" > "$FAKE_PHONES/$FAKE_SERIAL.runner.log" 2>&1
exit 0
"""


@pytest.fixture(scope="module")
def host_runner(tmp_path_factory):
    build = tmp_path_factory.mktemp("hostbuild")
    r = subprocess.run(
        ["make", "-s", "-C", str(ROOT / "kernels"), "TARGET=host", f"BUILD={build}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return build / "hxrun"


def fake_farm(tmp: Path, runner: Path, **extra) -> dict:
    """Stub SDK, fake adb on PATH, phones directory; the environment to use."""
    subprocess.run([str(ROOT / "kernels/hexagon/sdk_check.sh"), "fake-sdk", str(tmp)], check=True)
    rmoh = tmp / "sdk/libs/run_main_on_hexagon/ship/android_aarch64/run_main_on_hexagon"
    rmoh.write_text(FAKE_RMOH)
    rmoh.chmod(0o755)
    (tmp / "bin").mkdir()
    adb = tmp / "bin/adb"
    adb.write_text(FAKE_ADB)
    adb.chmod(0o755)
    (tmp / "phones").mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "HX_DEVICE_SERIAL",
            "HX_DEVICE_SERIALS",
            "HEXKL_ROOT",
            "HEXAGON_TOOLS_ROOT",
            "DEFAULT_HEXAGON_TOOLS_ROOT",
        )
    }
    env.update(
        {
            "PATH": f"{tmp / 'bin'}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HEXAGON_SDK_ROOT": str(tmp / "sdk"),
            "FAKE_PHONES": str(tmp / "phones"),
            "FAKE_HOST_RUNNER": str(runner),
            "HX_DEVICE_LOCK_DIR": str(tmp / "locks"),
            "HX_DEVICE_DIR": DEVDIR,
        }
    )
    env.update(extra)
    return env


def stop_fake_server(tmp: Path) -> None:
    pid = tmp / "phones/adb-server/pid"
    if pid.is_file():
        try:
            os.kill(int(pid.read_text()), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def shell_spans(tmp: Path) -> dict[str, list[tuple[float, float]]]:
    """{serial: [(start, end), ...]} of every `adb shell`, from the fake's log."""
    starts, spans = {}, {}
    for ln in (tmp / "phones/shell.log").read_text().splitlines():
        serial, pid, what, t, _ = ln.split()
        if what == "start":
            starts[(serial, pid)] = float(t)
        else:
            spans.setdefault(serial, []).append((starts.pop((serial, pid)), float(t)))
    assert not starts, f"shells that never ended: {starts}"
    return spans


def job_spans(tmp: Path) -> list[tuple[float, float]]:
    """(lease asked, last shell ended) of every device.sh run: how long each
    run job was on the device, waiting for a phone included."""
    begin = {}
    for ln in (tmp / "phones/leases.log").read_text().splitlines():
        job, t = ln.split()
        begin.setdefault(job, float(t))
    end = {}
    for ln in (tmp / "phones/shell.log").read_text().splitlines():
        _, _, what, t, job = ln.split()
        if what == "end":
            end[job] = max(end.get(job, 0.0), float(t))
    assert set(begin) == set(end), (begin, end)
    return [(begin[j], end[j]) for j in begin]


def max_concurrency(spans: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    n = most = 0
    for _, d in events:
        n += d
        most = max(most, n)
    return most


def farm_config(tmp: Path, serials, mode: str = "dsp-only") -> dict:
    """The farm tests run in mode dsp-only, today's job graph (hxrun on the
    cDSP); mode ap has its own tests (below)."""
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["hexagon"]
    cfg["run"]["replicates"] = 1
    cfg["run"]["rounds"] = 3
    # the fake phones all run on this machine, so each run's own samples see
    # the other phone's run as other work: no reruns here (every run job runs
    # once, which the farm's counts below rely on)
    cfg["run"]["max_reruns"] = 0
    cfg["target_settings"] = {
        "hexagon": {
            "sdk_root": str(tmp / "sdk"),
            "device_serials": serials,
            "device_dir": DEVDIR,
            "mode": mode,
            "params": {"precision": "u8i8"},
        }
    }
    return cfg


@pytest.fixture(scope="module")
def farm_run(tmp_path_factory, host_runner):
    tmp = tmp_path_factory.mktemp("farm")
    env = fake_farm(tmp, host_runner, FAKE_RUN_SECONDS="2")
    wd = copy_repo(tmp / "wd")
    write_config(wd, farm_config(tmp, ["s1", "s2"]))
    t0 = time.monotonic()
    try:
        res = snakemake(wd, "results/hexagon/summary.json", cores=4, snakefile=wd / "Snakefile", env=env)
    finally:
        stop_fake_server(tmp)
    wall = time.monotonic() - t0
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    return tmp, wd, res.stdout + res.stderr, wall, env


def test_six_points_over_two_phones_never_share_a_phone(farm_run):
    tmp, wd, out, wall, _ = farm_run
    counts = job_counts(out)
    assert counts.get("run") == 6 and counts.get("deploy") == 1, counts
    spans = shell_spans(tmp)
    assert sorted(spans) == ["s1", "s2"], spans  # every phone used
    for serial, iv in spans.items():
        assert max_concurrency(iv) == 1, f"two adb shells at once on {serial}: {sorted(iv)}"
    # the runner's shells: one per point, at most two at once (one per
    # phone), and two at once at some moment (the farm is used as a farm)
    # (plus the first-day self-test, which runs first on a device target
    # and is a runner invocation on a phone too)
    n_self = counts.get("selftest_target", 0)
    assert n_self == 1, counts
    runs = [iv for serial in spans for iv in spans[serial] if iv[1] - iv[0] >= 2.0]
    assert len(runs) == 6 + n_self, runs
    assert max_concurrency(runs) == 2, sorted(runs)
    # and Snakemake itself never ran more device jobs than phones (the
    # `device` limit, not only the locks): deploy leases each phone once,
    # then one lease per run
    jobs = job_spans(tmp)
    assert len(jobs) == 2 + 6 + n_self and max_concurrency(jobs) == 2, sorted(jobs)
    print(
        f"farm: 6 runs over 2 phones in {wall:.1f} s; per phone "
        f"{ {s: sum(1 for a, b in iv if b - a >= 2.0) for s, iv in spans.items()} }; "
        f"max at once: {max_concurrency(runs)} overall, 1 per phone"
    )


def test_every_record_and_the_summary_name_the_phone(farm_run):
    tmp, wd, _, _, _ = farm_run
    used = {}
    for pid in POINTS:
        raw = wd / f"results/hexagon/raw/{pid}/rep0.jsonl"
        meta = json.loads(raw.read_text().splitlines()[0])
        serial = meta["labels"]["device_serial"]
        assert serial in ("s1", "s2") and meta["labels"]["point"] == f"hexagon/{pid}/rep0"
        prov = json.loads((wd / f"results/hexagon/raw/{pid}/rep0.provenance.json").read_text())
        assert prov["runner_env"]["labels"]["device_serial"] == serial
        check = json.loads((wd / f"results/hexagon/check/{pid}/rep0.json").read_text())
        assert check["status"] == "ok", check["reasons"]
        used[pid] = serial
    assert set(used.values()) == {"s1", "s2"}
    doc = json.loads((wd / "results/hexagon/summary.json").read_text())
    assert doc["provenance"]["device_serials"] == {f"{p}/rep0": s for p, s in used.items()}
    summary = pd.read_csv(wd / "results/hexagon/summary.csv")
    for pid, serial in used.items():
        assert set(summary.loc[summary["point_id"] == pid, "device_serial"]) == {serial}
    trials = pd.read_csv(wd / "results/hexagon/trials.csv.gz")
    assert set(trials["device_serial"]) == {"s1", "s2"}
    manifest = json.loads((wd / "results/hexagon/stage/deploy.json").read_text())
    assert manifest["device_serials"] == ["s1", "s2"]  # deployed to both phones
    # the farm is not a job parameter: the run jobs' logs show no serial list
    log = (wd / f"logs/hexagon/run/{POINTS[0]}/rep0.log").read_text().splitlines()[0]
    assert "HX_DEVICE_SERIALS" not in log


def test_a_larger_device_limit_is_lowered_to_the_phones_and_nothing_reruns(farm_run):
    tmp, wd, _, _, env = farm_run
    res = snakemake(
        wd, "-n", "results/hexagon/summary.json", "--resources", "device=5", snakefile=wd / "Snakefile", env=env
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "--resources device=5 lowered to 2: the device farm has 2 phone(s)" in out
    assert "Nothing to be done" in out
    # a third phone reruns no measurement (only the aggregation, whose
    # provenance holds the config's hash)
    cfg = farm_config(tmp, ["s1", "s2", "s3"])
    write_config(wd, cfg)
    try:
        res = snakemake(wd, "-n", "results/hexagon/summary.json", snakefile=wd / "Snakefile", env=env)
    finally:
        write_config(wd, farm_config(tmp, ["s1", "s2"]))
    counts = job_counts(res.stdout + res.stderr)
    assert res.returncode == 0 and counts == {"aggregate": 1}, (res.stdout + res.stderr)[-3000:]


def _device_run(env: dict, runner_so: Path, out: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [
            str(ROOT / "kernels/hexagon/device.sh"),
            "run",
            "--",
            str(runner_so),
            "--out",
            str(out),
            "--rounds",
            "1",
            "--warmup",
            "0",
            "--workloads",
            "mv",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def test_a_killed_run_and_an_adb_server_leave_no_lease(tmp_path, host_runner):
    env = fake_farm(tmp_path, host_runner, HX_DEVICE_SERIALS="s1", HX_DEVICE_LEASE_TIMEOUT="8")
    so = tmp_path / "hxrun.so"
    so.write_bytes(b"\x7fELF")
    try:
        # 1. the first run starts the fake adb server (it inherits whatever
        # descriptors adb has) and ends; the phone must be free again
        p = _device_run(env, so, tmp_path / "a.jsonl")
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert (tmp_path / "phones/adb-server/pid").is_file()
        # 2. a run killed with its whole process group mid-measurement (what
        # a cancelled job's wrapper does, hxfuse.runner.runpoint): once the
        # phone's runner has started (the fake logs the command, then sleeps)
        env_slow = {**env, "FAKE_RUN_SECONDS": "30"}
        runs_before = _runner_calls(tmp_path)
        p = _device_run(env_slow, so, tmp_path / "b.jsonl", start_new_session=True)
        deadline = time.monotonic() + 30
        while _runner_calls(tmp_path) == runs_before and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if _runner_calls(tmp_path) == runs_before:  # e.g. the first run's adb server kept the phone's lock
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            pytest.fail(f"the slow run never started the phone's runner: {p.communicate(timeout=10)[1][-2000:]}")
        cmds = (tmp_path / "phones/cmd.log").read_text()
        killed = re.findall(r"--out /hxfuse-fake-device/out/(\d+)\.jsonl", cmds)[-1]
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        assert p.returncode == -signal.SIGKILL and not (tmp_path / "b.jsonl").exists()  # killed, not finished
        assert (tmp_path / "locks/s1.lock").exists()  # the file stays; the lock does not
        # the next run gets the phone, but only once nothing of the killed
        # run is left running: its adb step (in a process group of its own,
        # which the kill did not reach) and the runner on the phone
        t0 = time.monotonic()
        p2 = _device_run(env, so, tmp_path / "c.jsonl")
        _, err = p2.communicate(timeout=60)
        assert p2.returncode == 0, err
        assert time.monotonic() - t0 < 6, "the next run waited for the killed run's lease"
        assert json.loads((tmp_path / "c.jsonl").read_text().splitlines()[0])["labels"]["device_serial"] == "s1"
        assert not _processes_naming(killed), "the killed run's step still runs beside the next run"
        _, err = p.communicate(timeout=10)  # its guard, which did the cleanup, is gone too
        assert "was killed before its cleanup: stopping its steps and the runner on the phone" in err, err
    finally:
        stop_fake_server(tmp_path)


def _processes_naming(text: str) -> list[str]:
    """Command lines of this machine's processes that contain *text*."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if text in cmd:
                found.append(cmd)
    return found


def _runner_calls(tmp: Path) -> int:
    """How many times the fake phone was asked to start the runner (its
    command log holds every `adb shell` command line, written before the
    command runs)."""
    log = tmp / "phones/cmd.log"
    return log.read_text().count("run_main_on_hexagon 3") if log.exists() else 0


def test_a_phone_that_is_not_attached_stops_deploy_unless_the_farm_spans_hosts(tmp_path, host_runner):
    env = fake_farm(tmp_path, host_runner, FAKE_ATTACHED="s1")
    wd = copy_repo(tmp_path / "wd")
    write_config(wd, farm_config(tmp_path, ["s1", "s9"]))
    try:
        res = snakemake(wd, "results/hexagon/summary.json", cores=4, snakefile=wd / "Snakefile", env=env)
    finally:
        stop_fake_server(tmp_path)
    assert res.returncode != 0
    log = (wd / "logs/hexagon/deploy.log").read_text()
    assert "none of the device farm's phones (s9) is attached" in log, log
    assert "deploy of results/hexagon/stage/hxrun to s9" in res.stderr
    assert not (wd / "results/hexagon/raw").exists()
    # a farm over several hosts: this host has s1 only; deploy and the runs
    # use it, and s9 is recorded as elsewhere
    cfg = farm_config(tmp_path, ["s1", "s9"])
    cfg["target_settings"]["hexagon"]["farm_spans_hosts"] = True
    write_config(wd, cfg)
    raw = wd / f"results/hexagon/raw/{POINTS[0]}/rep0.jsonl"
    try:
        res = snakemake(wd, str(raw.relative_to(wd)), cores=4, snakefile=wd / "Snakefile", env=env)
    finally:
        stop_fake_server(tmp_path)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    manifest = json.loads((wd / "results/hexagon/stage/deploy.json").read_text())
    assert manifest["device_serials"] == ["s1"] and manifest["device_serials_elsewhere"] == ["s9"]
    assert json.loads(raw.read_text().splitlines()[0])["labels"]["device_serial"] == "s1"


@pytest.mark.parametrize(
    "serials, message",
    [
        (["s1", "s1"], "config.target_settings.hexagon.device_serials: 's1' is listed twice"),
        (["s1", "has space"], r"config.target_settings.hexagon.device_serials[1]: 'has space' does not match"),
        ("s1 s2", "config.target_settings.hexagon.device_serials: 's1 s2' is not of type 'array'"),
    ],
)
def test_a_bad_serial_list_fails_before_any_job(tmp_path, serials, message):
    cfg = farm_config(tmp_path, serials)
    write_config(tmp_path, cfg)
    res = snakemake(tmp_path, "-n", "all")
    assert res.returncode != 0 and message in res.stdout + res.stderr, (res.stdout + res.stderr)[-3000:]
    assert not (tmp_path / "results").exists()


def test_the_several_hosts_example_profile_names_existing_rules():
    """The Slurm profile (run on a real Slurm by test_slurm.py) asks a phone
    for rules that exist, in the form the plugin accepts (the `gres`
    resource: it refuses --gres in slurm_extra), and leaves the
    measurements' own resources to the workflow (set-resources would
    override them)."""
    import re

    import yaml

    prof = yaml.safe_load((ROOT / "profiles/device-hosts-slurm/profile.yaml").read_text())
    assert prof["executor"] == "slurm"
    rules = set(
        re.findall(r"^rule (\w+):", "".join(p.read_text() for p in (ROOT / "workflow/rules").glob("*.smk")), re.M)
    )
    assert set(prof["set-resources"]) <= rules and "deploy" in prof["set-resources"]
    assert prof["set-resources"]["deploy"] == {"gres": "phone:1"}
    assert "run" not in prof["set-resources"]
    assert "--gres" not in yaml.safe_dump(prof)


def _resources(output: str, rule: str) -> list[str]:
    """The `resources:` line of every job of *rule* in a dry run's output."""
    import re

    return re.findall(rf"^rule {rule}:\n(?:    (?!resources:).*\n)*?    resources: (.*)$", output, re.M)


def test_on_slurm_a_phone_measurement_takes_a_phone_and_a_host_one_its_node(farm_run, tmp_path):
    """The workflow's own Slurm resources of a measurement (common.smk,
    run_gres and run_slurm_extra), as a dry run shows them."""
    _, wd, _, _, env = farm_run
    res = snakemake(wd, "-n", "-F", "results/hexagon/summary.json", snakefile=wd / "Snakefile", env=env)
    phone = _resources(res.stdout, "run")
    assert res.returncode == 0 and len(phone) == len(POINTS), (res.stdout + res.stderr)[-3000:]
    for line in phone:
        assert "gres=phone:1" in line and "--exclusive" not in line, line
    write_config(tmp_path, TINY)
    res = snakemake(tmp_path, "-n", "results/host/summary.json")
    host = _resources(res.stdout, "run")
    assert res.returncode == 0 and host, (res.stdout + res.stderr)[-3000:]
    for line in host:
        assert "slurm_extra=--exclusive" in line and "phone" not in line, line


# --- mode ap (target_settings.hexagon.mode) ---------------------------------


def _planned(output: str) -> list[tuple[str, list[str], list[str]]]:
    """(rule, inputs, outputs) of every job of a dry run's output."""
    import re

    jobs = []
    for m in re.finditer(r"^rule (\w+):\n((?:    .*\n)*)", output, re.M):
        fields = dict(re.findall(r"^    (\w+): (.*)$", m.group(2), re.M))
        jobs.append((m.group(1), fields.get("input", "").split(", "), fields.get("output", "").split(", ")))
    return jobs


def _one_phone_config(tmp: Path, mode: str | None) -> dict:
    cfg = farm_config(tmp, [], mode or "dsp-only")
    cfg["target_settings"]["hexagon"]["device_serial"] = "s1"
    if mode is None:  # the schema's default
        del cfg["target_settings"]["hexagon"]["mode"]
    return cfg


def _dry_run(tmp: Path, mode: str | None, **env_extra) -> tuple[subprocess.CompletedProcess, list]:
    env = fake_farm(tmp, tmp / "no-runner", **env_extra)
    write_config(tmp, _one_phone_config(tmp, mode))
    res = snakemake(tmp, "-n", "all", env=env)
    return res, _planned(res.stdout)


def test_mode_ap_builds_stages_and_deploys_both_halves_and_every_run_job_runs_hxrun_ap(tmp_path):
    res, jobs = _dry_run(tmp_path, None)  # ap: the default
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    by_rule = {}
    for rule, inputs, outputs in jobs:
        by_rule.setdefault(rule, []).append((inputs, outputs))
    counts = job_counts(out)
    assert counts["build"] == counts["build_ap"] == counts["stage_ap"] == counts["deploy"] == 1, counts
    assert counts["run"] == len(POINTS) and counts["selftest_target"] == counts["selftest_ap"] == 1, counts
    [(_, built)] = by_rule["build_ap"]
    assert sorted(built) == ["results/hexagon/build/hxrun-ap", "results/hexagon/build/libhxfuse_skel.so"]
    [(_, staged)] = by_rule["stage_ap"]
    assert sorted(staged) == ["results/hexagon/stage/hxrun-ap", "results/hexagon/stage/libhxfuse_skel.so"]
    [(deploy_in, _)] = by_rule["deploy"]
    assert {"results/hexagon/build/hxrun", *staged} <= set(deploy_in)
    for inputs, _ in by_rule["run"]:
        assert inputs[0] == "results/hexagon/stage/hxrun-ap", inputs
        assert "results/hexagon/stage/hxrun" not in inputs
        assert {"results/hexagon/selftest.jsonl", "results/hexagon/selftest-ap.jsonl"} <= set(inputs)
    # the gates: the DSP's ladder (hxrun --selftest), then the boundary's (hxrun-ap --selftest)
    [(st_in, _)] = by_rule["selftest_target"]
    assert st_in[0] == "results/hexagon/stage/hxrun", st_in
    [(ap_in, ap_out)] = by_rule["selftest_ap"]
    assert ap_in[0] == "results/hexagon/stage/hxrun-ap" and "results/hexagon/selftest.jsonl" in ap_in, ap_in
    assert ap_out == ["results/hexagon/selftest-ap.jsonl"]


def test_mode_dsp_only_plans_todays_jobs(tmp_path):
    res, jobs = _dry_run(tmp_path, "dsp-only")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    counts = job_counts(out)
    assert "build_ap" not in counts and "stage_ap" not in counts and "selftest_ap" not in counts, counts
    assert counts["build"] == counts["deploy"] == counts["selftest_target"] == 1 and counts["run"] == len(POINTS)
    for rule, inputs, outputs in jobs:
        assert not any("hxrun-ap" in f or "libhxfuse_skel" in f for f in inputs + outputs), (rule, inputs)
        if rule in ("run", "selftest_target"):
            assert inputs[0] == "results/hexagon/stage/hxrun", (rule, inputs)
        if rule == "deploy":
            assert inputs[0] == "results/hexagon/build/hxrun" and outputs[0] == "results/hexagon/stage/hxrun"


def test_a_bad_mode_and_mode_ap_on_the_simulator_fail_before_any_job(tmp_path):
    res, _ = _dry_run(tmp_path, "split")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "config.target_settings.hexagon.mode: 'split' is not one of ['ap', 'dsp-only']" in out, out[-3000:]
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["hexagon-sim"]
    cfg["target_settings"] = {"hexagon-sim": {"mode": "ap", "params": {"precision": "u8i8"}}}
    write_config(tmp_path, cfg)
    res = snakemake(tmp_path, "-n", "all")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "config.target_settings.hexagon-sim.mode: 'ap' is not one of ['dsp-only']" in out, out[-3000:]
    assert "the simulator has no application processor" in out
    assert not (tmp_path / "results").exists()


def test_mode_ap_without_the_ndk_fails_before_any_job_and_dsp_only_needs_none(tmp_path):
    import shutil

    env = fake_farm(tmp_path, tmp_path / "no-runner", ANDROID_NDK_ROOT="")
    write_config(tmp_path, _one_phone_config(tmp_path, "ap"))
    res = snakemake(tmp_path, "-n", "all", env=env)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]  # the NDK the SDK ships is found
    for ndk in (tmp_path / "sdk/tools").glob("android-ndk-*"):
        shutil.rmtree(ndk)
    res = snakemake(tmp_path, "-n", "all", env=env)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "target hexagon: mode ap builds the application-processor driver hxrun-ap with the Android NDK" in out
    assert "ANDROID_NDK_ROOT" in out and "target_settings.hexagon.mode: dsp-only" in out, out[-3000:]
    assert not (tmp_path / "results").exists()
    write_config(tmp_path, _one_phone_config(tmp_path, "dsp-only"))
    res = snakemake(tmp_path, "-n", "all", env=env)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]


def test_mode_ap_end_to_end_on_a_fake_phone_pushes_both_halves_and_runs_hxrun_ap(tmp_path, host_runner):
    env = fake_farm(tmp_path, host_runner)
    wd = copy_repo(tmp_path / "wd")
    write_config(wd, _one_phone_config(tmp_path, "ap"))
    check = f"results/hexagon/check/{POINTS[0]}/rep0.json"
    try:
        res = snakemake(wd, check, snakefile=wd / "Snakefile", env=env)
    finally:
        stop_fake_server(tmp_path)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    counts = job_counts(out)
    assert counts.get("build_ap") == counts.get("stage_ap") == counts.get("deploy") == 1, counts
    assert counts.get("selftest_target") == counts.get("selftest_ap") == 1, counts
    manifest = json.loads((wd / "results/hexagon/stage/deploy.json").read_text())
    assert manifest["mode"] == "ap" and manifest["runner"] == "results/hexagon/stage/hxrun"
    assert manifest["ap"]["driver"] == "results/hexagon/stage/hxrun-ap"
    assert manifest["ap"]["skel"] == "results/hexagon/stage/libhxfuse_skel.so"
    assert len(manifest["ap"]["skel_sha256"]) == 64
    pushed = (tmp_path / "phones/push.log").read_text().splitlines()
    assert f"s1 push results/hexagon/stage/hxrun-ap {DEVDIR}/hxrun-ap" in pushed
    assert f"s1 push results/hexagon/stage/libhxfuse_skel.so {DEVDIR}/libhxfuse_skel.so" in pushed
    assert f"s1 push results/hexagon/stage/hxrun {DEVDIR}/libhxrun.so" in pushed  # the ladder's runner
    # the measurement ran the AP driver through device.sh; the DSP's ladder hxrun, and says so
    log = (wd / f"logs/hexagon/run/{POINTS[0]}/rep0.log").read_text()
    assert "kernels/hexagon/device.sh run -- results/hexagon/stage/hxrun-ap --" in log, log[:3000]
    shells = (tmp_path / "phones/cmd.log").read_text()
    # the runner started in the background with its pid kept (device.sh launch_line)
    assert f"s1 cd {DEVDIR} || exit 1; LD_LIBRARY_PATH=/vendor/lib64 ADSP_LIBRARY_PATH='{DEVDIR};" in shells
    assert "./hxrun-ap --out" in shells and "./hxrun-ap --selftest --out" in shells
    assert "this ladder is the DSP's, hxrun --selftest" in (wd / "logs/hexagon/selftest.log").read_text()
    assert json.loads((wd / "results/hexagon/selftest-ap.jsonl").read_text().splitlines()[-1])["status"] == "ok"
    assert json.loads((wd / check).read_text())["status"] == "ok"
    # mode ap's halves rebuild from their own files (print-SOURCES-hxrun-ap /
    # -skel): an edit of the driver's source replans build_ap, not hxrun's
    # build; one of a self-test source (hxrun's alone) replans build (and
    # build_ap after it, which shares its build directory; the measurements
    # rerun then anyway, behind the ladder).  (An edit, not a touch: Snakemake
    # ignores a newer input whose checksum did not change.)
    for src, rebuilt, kept in (("ap/ap_main.c", "build_ap", "build"), ("hexagon/selftest_qurt.c", "build", "none")):
        path = wd / "kernels" / src
        text, st = path.read_text(), path.stat()
        path.write_text(text + "\n/* edited */\n")
        res = snakemake(wd, "-n", check, snakefile=wd / "Snakefile", env=env)
        counts = job_counts(res.stdout + res.stderr)
        assert res.returncode == 0 and rebuilt in counts and kept not in counts, (src, res.stdout[-3000:])
        path.write_text(text)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
