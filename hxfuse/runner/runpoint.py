"""Run one replicate of one point: the runner under a timeout, signals done right.

:func:`run_point` is the whole of the ``run`` job (workflow/scripts/run_point.py).
It

- starts the runner (behind the target's run prefix) in its **own process
  group**, so that it and anything it starts (qemu-hexagon, device.sh) can be
  killed together, and asks the kernel to kill it if this wrapper dies
  (``PR_SET_PDEATHSIG``, Linux);
- honours ``timeout_s`` to the fraction of a second (``timeout 0.5`` of
  coreutils would be honoured too, but ``int(0.5)`` was 0, "no limit");
- on SIGINT, SIGTERM or SIGHUP (Ctrl-C, a cancelled Snakemake) kills the
  runner's whole group, waits for it, removes the work directory and exits
  128 + signal: no runner outlives its job, and an immediate rerun never finds
  a runner still writing into the same place;
- notices when Snakemake itself is gone (killed without passing the signal
  on: the job's shell and this wrapper are orphaned) and stops the same way;
- reports how the runner ended, in words that match what happened:
  ``timed out after 0.5 s (config run.timeout_s)``, ``killed by signal 9
  (SIGKILL) after 0.3 s``, ``exited with status 3``, or an output that fails
  its integrity check (hxfuse.runner.integrity);
- moves the outputs into place only when all is well (JSON Lines last), and
  writes the provenance sidecar with the SHA-256 of every raw file.

Standard library only (plus hxfuse.runner.provenance, hxfuse.runner.jsonl and
hxfuse.runner.integrity, which are too): a change to analysis code must never rerun
a measurement.
"""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from hxfuse.runner import integrity
from hxfuse.runner import provenance
from hxfuse.runner import quiet

# runner exit codes (docs/runner.md): 0 ok, 4 checksum mismatch recorded (the
# output is complete; `check` marks the point failed)
ACCEPTED_EXIT = (0, 4)
# the runner gave the NPU's resources back on another client's request and
# stopped at a trial boundary (its output is complete but partial)
PREEMPTED_EXIT = 6
# after a timeout: SIGTERM to the runner's group, then SIGKILL this much later
KILL_AFTER_S = 5.0
# how often the wait loop looks at Snakemake (orphan detection)
POLL_S = 0.1
_PR_SET_PDEATHSIG = 1


class _Stop(Exception):
    """A signal asked this job to stop."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _signame(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the wrapper dies (Linux only)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (start time): a pid plus its start time
    names one process even when pids are reused.  None when it is gone or a
    zombie (dead, not yet reaped by its parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else fields[19]


def _ancestors(limit: int = 6) -> list[tuple[int, str]]:
    """This process's ancestors up to and including Snakemake (the first whose
    command line mentions snakemake), as (pid, start time).  Empty where
    /proc is not available."""
    out, pid = [], os.getppid()
    for _ in range(limit):
        if pid <= 1:
            break
        st = _start_time(pid)
        if st is None:
            break
        out.append((pid, st))
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        if b"snakemake" in cmd:
            return out
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return []  # not under Snakemake: nothing to watch


def _orphaned(ancestors: list[tuple[int, str]]) -> bool:
    return any(_start_time(pid) != st for pid, st in ancestors)


def _kill_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_runner(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM to the runner's group, SIGKILL after *grace_s*, then reap it
    and anything left in its group."""
    if proc.poll() is None and grace_s > 0:
        _kill_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    _kill_group(proc, signal.SIGKILL)
    proc.wait()


def run_point(
    runner: str,
    args: list[str],
    prefix: str,
    timeout_s: float,
    env: dict,
    point: dict,
    out_jsonl: str,
    out_provenance: str,
    out_npy: str,
    log: str,
    emulated: bool = False,
    timeout_setting: str = "run.timeout_s",
    quiet_wait_s: float = 0.0,
    max_reruns: int = 0,
    busy_per_core: float | None = None,
    max_steal_share: float | None = None,
) -> int:
    """Run one replicate (*point*: target, sweep, workload, point, replicate,
    x, params, point_hash) and move its outputs into place.

    Everything is written in ``<out_jsonl>.work/`` first; on any failure the
    work directory is removed and nothing is left that could be mistaken for
    a result.  Returns 0 on success, 1 on failure, 128 + N when stopped by
    signal N (message on stderr and in the log, naming the replicate, the
    cause and the log).  *timeout_setting*: the config key a timeout message
    names, the one the user would raise (the service mode has its own).

    Measure, don't veto (hxfuse.runner.quiet), with *busy_per_core* the
    analysis's limit of other work (None: neither wait nor rerun) and
    *max_steal_share* its limit of hypervisor steal: where the
    runner runs on this machine (no run prefix), wait up to *quiet_wait_s*
    for other work to leave the cores before each attempt; an attempt whose
    runner saw other work before or after it (its own samples) is run
    again, up to *max_reruns* times.  Every attempt is recorded in the sidecar
    (``attempts``, ``reruns``); the last one is kept."""
    pid = "/".join(str(point[k]) for k in ("target", "sweep", "workload", "point"))
    pid += f"/rep{point['replicate']}"
    work = Path(out_jsonl + ".work")
    shutil.rmtree(work, ignore_errors=True)
    (work / "npy").mkdir(parents=True)
    cmd = [
        *shlex.split(prefix or ""),
        runner,
        "--out",
        str(work / "trials.jsonl"),
        "--npy-dir",
        str(work / "npy"),
        "--label",
        f"point={pid}",
        *map(str, args),
    ]
    load_before = provenance.loadavg()
    ancestors = _ancestors()

    def fail(lf, msg: str, code: int = 1) -> int:
        text = f"hxfuse: point {pid} FAILED: {msg}; no result kept (log: {log})"
        lf.write(text + "\n")
        lf.flush()
        print(text, file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)
        return code

    attempts: list[dict] = []
    with open(log, "w") as lf:
        if env:
            lf.write("# env: " + " ".join(f"{k}={v}" for k, v in sorted(env.items())) + "\n")
        lf.write("$ " + shlex.join(cmd) + "\n")
        lf.flush()
        for n in range(1 + max(0, int(max_reruns))):
            seen: dict = {"attempt": n + 1}
            if busy_per_core is not None and quiet_wait_s > 0 and not prefix:
                seen["quiet_wait"], signum = _wait_quiet(float(quiet_wait_s), busy_per_core)
                if signum:
                    why = f"stopped while waiting for a quiet machine: the job received {_signame(signum)}"
                    return fail(lf, why, 128 + signum)
                lf.write(f"hxfuse: attempt {n + 1}: waited for a quiet machine: {seen['quiet_wait']}\n")
                lf.flush()
            if n:
                shutil.rmtree(work, ignore_errors=True)
                (work / "npy").mkdir(parents=True)
            code, rc, wall = _attempt(cmd, env, lf, timeout_s, ancestors, fail, work, timeout_setting)
            if code is not None:
                return code
            found = (
                quiet.disturbance(work / "trials.jsonl", busy_per_core, max_steal_share)
                if busy_per_core is not None
                else []
            )
            seen |= {"runner_exit": rc, "wall_s": wall, "disturbed": found}
            attempts.append(seen)
            lf.write(f"hxfuse: runner exit {rc} after {wall:.1f} s\n")
            if not seen["disturbed"]:
                break
            again = n < int(max_reruns)
            lf.write(
                f"hxfuse: attempt {n + 1} disturbed: {'; '.join(seen['disturbed'])}; "
                + ("running the replicate again\n" if again else "kept (config run.max_reruns reached)\n")
            )
            lf.flush()

    rec = provenance.sidecar(point, work / "trials.jsonl", Path(runner), list(args), load_before)
    rec["runner_exit"] = rc
    rec["runner_wall_s"] = wall
    rec["run_prefix"] = prefix or ""
    rec["emulated"] = bool(rec.get("runner_env", {}).get("emulated")) or bool(emulated)
    rec["attempts"] = attempts
    rec["reruns"] = len(attempts) - 1
    _move_into_place(work, rec, out_jsonl, out_provenance, out_npy)
    return 0


def _wait_quiet(max_wait_s: float, per_core: float) -> tuple[dict, int]:
    """hxfuse.runner.quiet.wait_quiet with the job's signals caught: (what
    was seen, 0), or ({}, the signal) when the job was asked to stop."""
    handlers = {}

    def on_signal(signum, frame):
        raise _Stop(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        handlers[sig] = signal.signal(sig, on_signal)
    try:
        return quiet.wait_quiet(max_wait_s, per_core), 0
    except _Stop as stop:
        return {}, stop.signum
    finally:
        for sig, h in handlers.items():
            signal.signal(sig, h)


def _attempt(cmd, env, lf, timeout_s, ancestors, fail, work, timeout_setting) -> tuple[int | None, int, float]:
    """One run of the runner: (None, exit status, wall s) when its output can
    be kept, else (the job's exit code, ...) after *fail* removed the work."""
    handlers = {}

    def on_signal(signum, frame):
        raise _Stop(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        handlers[sig] = signal.signal(sig, on_signal)
    t0 = time.monotonic()
    proc = None
    try:
        try:
            proc = subprocess.Popen(
                cmd,
                stdout=lf,
                stderr=subprocess.STDOUT,
                env={**os.environ, **env},
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            return fail(lf, f"cannot start the runner: {exc}", 127), 0, 0.0
        rc, timed_out = _wait_runner(proc, t0 + float(timeout_s), ancestors)
        wall = time.monotonic() - t0
        _kill_group(proc, signal.SIGKILL)  # anything the runner left behind
    except _Stop as stop:
        if proc is not None:
            _stop_runner(proc, 0)
        wall = time.monotonic() - t0
        why = (
            "Snakemake is gone"
            if stop.signum == signal.SIGHUP and _orphaned(ancestors)
            else f"the job received {_signame(stop.signum)}"
        )
        msg = f"stopped after {wall:.1f} s: {why}; the runner's process group was killed"
        return fail(lf, msg, 128 + stop.signum), 0, wall
    finally:
        for sig, h in handlers.items():
            signal.signal(sig, h)
    problem = _runner_problem(work, rc, timed_out, wall, timeout_s, timeout_setting)
    if problem:
        return fail(lf, problem), rc, wall
    return None, rc, wall


def _wait_runner(proc: subprocess.Popen, deadline: float, ancestors: list[tuple[int, str]]) -> tuple[int, bool]:
    """Waits for the runner until *deadline* (monotonic): (exit status, timed
    out).  A timed-out runner's group is stopped; raises :class:`_Stop` when
    Snakemake is gone."""
    while True:
        try:
            rc = proc.wait(timeout=max(0.0, min(POLL_S, deadline - time.monotonic())))
            return rc, False
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= deadline:
            _stop_runner(proc, KILL_AFTER_S)
            return proc.returncode, True
        if _orphaned(ancestors):
            raise _Stop(signal.SIGHUP)


def _runner_problem(
    work: Path, rc: int, timed_out: bool, wall: float, timeout_s: float, timeout_setting: str = "run.timeout_s"
) -> str | None:
    """Why the runner's output cannot be kept (None: it can)."""
    if timed_out:
        return (
            f"runner timed out after {float(timeout_s):g} s (config {timeout_setting}) "
            "and was killed: it hung or is too slow for the timeout"
        )
    if rc < 0:
        return f"runner killed by signal {-rc} ({_signame(-rc)}) after {wall:.1f} s"
    if rc == PREEMPTED_EXIT:
        return (
            f"runner preempted after {wall:.1f} s (exit status {rc}): another client of the NPU asked for its "
            "resources back; they were released at the next trial boundary and the run ended (rerun the point)"
        )
    if rc not in ACCEPTED_EXIT:
        return f"runner exited with status {rc} after {wall:.1f} s"
    try:
        integrity.verify_end_record(work / "trials.jsonl")
    except (OSError, integrity.IntegrityError) as exc:
        return f"runner output rejected: {exc}"
    return None


def _move_into_place(work: Path, rec: dict, out_jsonl: str, out_provenance: str, out_npy: str) -> None:
    """Writes the provenance sidecar *rec* (with the raw files' hashes) and
    moves the outputs out of *work*, the JSON Lines last."""
    # hashes of the files as they will be named once moved into place
    hashes = integrity.raw_hashes(work / "trials.jsonl", work / "npy")
    rec["raw_sha256"] = hashes
    (work / "provenance.json").write_text(json.dumps(rec, indent=1, sort_keys=True, default=str) + "\n")
    shutil.rmtree(out_npy, ignore_errors=True)
    os.replace(work / "npy", out_npy)
    os.replace(work / "provenance.json", out_provenance)
    os.replace(work / "trials.jsonl", out_jsonl)  # last: the result appears whole
    shutil.rmtree(work, ignore_errors=True)
