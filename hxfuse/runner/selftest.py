"""The pipeline's side of ``hxrun --selftest`` (the first-day ladder,
kernels/hexagon/README.md): run it through the target's prefix, keep its
records, and stop with the failing or hanging step named.

On a device target (the SDK targets: a phone or the simulator) the workflow
runs it as the first job: every run job of that target depends on its
output, so no measurement starts on a phone whose ladder failed.  On the
host and under hexagon-qemu it is not part of ``all`` (``snakemake selftest``
runs it), so the default study's job graph is unchanged."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from hxfuse.config import targets as _targets

FIRST_DAY = "kernels/hexagon/README.md, section First day"


def gates_runs(target: str) -> bool:
    """Whether the target's run jobs wait for its self-test."""
    return target in _targets.SDK_TARGETS


def read_ladder(path: Path) -> tuple[list[dict], dict | None]:
    """The step records and the closing record (None if the ladder never
    got there: a crash; the last "running" step names where)."""
    steps, summary = [], None
    if not path.exists():
        return steps, None
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut by a crash
        if rec.get("record") == "selftest_step":
            steps.append(rec)
        elif rec.get("record") == "selftest":
            summary = rec
    return steps, summary


def verdict(target: str, steps: list[dict], summary: dict | None, rc: int | None, out: Path) -> str | None:
    """None when every available step passed, else the message that names the step."""
    if summary is not None and summary.get("status") == "ok" and rc == 0:
        return None
    detail = {s["step"]: s.get("detail", "") for s in steps if s.get("status") not in ("running",)}
    if summary is not None and summary.get("hung"):
        step, how = summary["hung"], "hangs (named by the watchdog)"
    elif summary is not None and summary.get("first_failure"):
        step, how = summary["first_failure"], "failed"
    else:
        running = [s["step"] for s in steps if s.get("status") == "running"]
        step = running[-1] if running else "start-up"
        how = f"did not finish: the runner ended (exit status {rc}) inside it"
    why = detail.get(step, "")
    return (
        f"hxfuse: selftest on {target}: step {step} {how}{': ' + why if why else ''}; "
        f"records in {out}; what it means and the fix: {FIRST_DAY}"
    )


def run(target: str, runner: str, prefix: str, env: dict, out: Path, timeout_s: float) -> tuple[int | None, str]:
    """Runs the ladder; returns (exit status or None on timeout, its stderr)."""
    cmd = [*shlex.split(prefix), runner, "--selftest", "--out", str(out)]
    try:
        r = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return None, err
    return r.returncode, r.stderr
