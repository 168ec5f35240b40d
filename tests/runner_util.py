"""Build and drive the compiled runner from tests (shared by the runner tests)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path
from typing import Iterable

REPO = Path(__file__).resolve().parents[1]


def build_runner(target: str = "host") -> Path:
    """Builds kernels/build/<target>/hxrun with the project's one build command."""
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), f"TARGET={target}"], check=True)
    return REPO / "kernels" / "build" / target / "hxrun"


def run_runner(binary: Path, out: Path, *args: str, prefix: tuple[str, ...] = (), timeout: float = 600):
    """Runs hxrun and returns (completed process, parsed records or None)."""
    proc = subprocess.run(
        [*prefix, str(binary), "--out", str(out), *args], capture_output=True, text=True, timeout=timeout
    )
    records = None
    if out.exists():
        records = [json.loads(line) for line in out.read_text().splitlines()]
    return proc, records


def trials(records, *, group=None, workload=None, empty=False, warmup=False):
    return [
        r
        for r in records
        if r["record"] == "trial"
        and (group is None or r["group"] == group)
        and (workload is None or r["workload"] == workload)
        and r["empty"] == empty
        and r["warmup"] == warmup
    ]


def task(trial, name):
    return next(t for t in trial["tasks"] if t["task"] == name)


# The CPU accounting the timing tests check their premise with: the kernel's
# count of busy time per core against the runner's own CPU time, so that a
# runner cannot talk its way into a skip.


def cpu_busy_s(cpus: Iterable[int]) -> float:
    """Seconds cores *cpus* have been busy in all (everything but idle and
    iowait, steal included), from /proc/stat."""
    from hxfuse.runner.quiet import _jiffies

    cpus = tuple(cpus)
    readings = [_jiffies(cpu=f"cpu{c}") for c in cpus]
    assert None not in readings, f"/proc/stat has no line for one of cores {cpus}"
    return sum(total - idle for total, idle in readings) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    """CPU time (user + system) of this process's reaped children: the runners it ran."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime
