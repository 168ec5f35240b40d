"""Build and drive the compiled runner from tests (shared by the runner tests)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import time
from pathlib import Path
from typing import Iterable, Iterator

import hxfuse.analysis.environment as _env

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


# Steal: time the hypervisor ran something else while our vCPU wanted to
# run (/proc/stat's eighth number); the limit is the analysis's, which the
# runner's end record (steal_share) is judged by.  cpuacct, which the
# runner's interference evidence reads, does not contain it, and a task's own
# CPU clock stops while it is stolen.  A runner cannot cause steal, so a skip
# on it cannot hide the runner's own failure.
MAX_STEAL_SHARE = _env.MAX_STEAL_SHARE


def steal_s(cpus: Iterable[int], stat: str = "/proc/stat") -> float:
    """Seconds of steal time of cores *cpus* so far, from *stat*."""
    from hxfuse.runner.quiet import cpu_fields

    rows = {c: cpu_fields(stat, f"cpu{c}") for c in cpus}
    missing = sorted(f"cpu{c}" for c, v in rows.items() if v is None)
    assert not missing, f"{stat} has no line for cores {missing}"
    # a line without the steal field (kernels before 2.6.11) reads as none
    return sum(v[7] if len(v) > 7 else 0 for v in rows.values()) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def steal_during(cpus: Iterable[int], stat: str = "/proc/stat") -> Iterator[dict]:
    """Measure the steal on *cpus* over the block: the yielded dict gets
    ``share``, steal seconds over the cores' wall seconds (0: none, 1: the
    hypervisor held every core throughout), and a ``why`` to skip with."""
    cpus = tuple(cpus)
    seen: dict = {}
    steal0, wall0 = steal_s(cpus, stat), time.monotonic()
    yield seen
    wall = max(time.monotonic() - wall0, 1e-9)
    seen["share"] = (steal_s(cpus, stat) - steal0) / (len(cpus) * wall)
    seen["why"] = (
        f"the hypervisor took {seen['share']:.0%} of cores {list(cpus)} during the run "
        f"(steal time in /proc/stat, at most {MAX_STEAL_SHARE:.0%} allowed): they were not free cores"
    )
