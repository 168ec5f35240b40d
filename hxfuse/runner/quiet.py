"""Measure, don't veto: wait for a quiet machine before a replicate, and judge
a finished replicate by the runner's own samples of other work.

The run job of a replicate (:func:`hxfuse.runner.runpoint.run_point`) waits,
for at most ``run.quiet_wait_s`` seconds, until other processes keep at most
``per_core`` x online cores busy; then runs the runner; then reads the
runner's own samples (``meta.other_busy_cores_before``,
``end.other_busy_cores_after``: cores busy with other work in 200 ms while
its engines idle, docs/runner.md) and, when either is above the same limit,
runs the replicate again, up to ``run.max_reruns`` times.  Every attempt is
recorded in the provenance sidecar (``attempts``).  The analysis decides on
the clean replicates and reports the disturbed ones as a sensitivity check
(docs/metrics.md, "Decisions").

The limits ``per_core`` and ``max_steal_share`` are the analysis's
(hxfuse.analysis.environment.BUSY_PER_CORE, MAX_STEAL_SHARE), handed to the run job by the
workflow (resources of the run rule): a run job must not import analysis
code, or a change to the analysis would rerun every measurement.

Standard library only (and hxfuse.runner.jsonl, itself standard library only).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any, Callable

from hxfuse.runner import jsonl

SAMPLE_S = 0.2


def _jiffies(stat: str = "/proc/stat", cpu: str = "cpu") -> tuple[int, int] | None:
    """(total, idle + iowait) of the ``cpu`` line (the machine's; ``cpu0``,
    ``cpu1``, ... one core's), as the runner reads them
    (kernels/common/platform_posix_machine.c, read_cpu_jiffies); None where
    unreadable or absent."""
    v = cpu_fields(stat, cpu)
    if v is None:
        return None
    return sum(v), v[3] + v[4]


def cpu_fields(stat: str = "/proc/stat", cpu: str = "cpu") -> list[int] | None:
    """The first eight numbers of the ``cpu`` line (user nice system idle
    iowait irq softirq steal; fewer on old kernels), or None where the file
    is unreadable or the line absent or short."""
    try:
        with open(stat) as f:
            fields = next((line.split() for line in f if line.split(maxsplit=1)[:1] == [cpu]), [])
    except OSError:
        return None
    if len(fields) < 5:
        return None
    return [int(x) for x in fields[1:9]]


def busy_cores(sample_s: float = SAMPLE_S, stat: str = "/proc/stat") -> float:
    """Cores kept busy during ``sample_s`` seconds (the runner's
    hx_busy_cores: 1 - idle share, times the online cores); NaN where
    /proc/stat is unreadable.  Called while this job runs nothing, so the
    busy cores are other work."""
    a = _jiffies(stat)
    time.sleep(sample_s)
    b = _jiffies(stat)
    if a is None or b is None or b[0] <= a[0]:
        return math.nan
    return (1.0 - (b[1] - a[1]) / (b[0] - a[0])) * (os.cpu_count() or 1)


def wait_quiet(
    max_wait_s: float,
    per_core: float,
    cores: int | None = None,
    sample: Callable[[], float] = busy_cores,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Sample other work until it keeps at most ``per_core`` x cores
    busy or ``max_wait_s`` has passed (at least one sample).  Returns what
    was seen: ``waited_s``, ``busy_cores`` (the last sample), ``quiet``
    (False when the wait ran out; None where nothing could be read)."""
    cores = cores or os.cpu_count() or 1
    limit = per_core * cores
    t0 = clock()
    while True:
        busy = sample()
        if not math.isfinite(busy):
            return {"waited_s": clock() - t0, "busy_cores": None, "quiet": None}
        if busy <= limit:
            return {"waited_s": clock() - t0, "busy_cores": busy, "quiet": True}
        if clock() - t0 >= max_wait_s:
            return {"waited_s": clock() - t0, "busy_cores": busy, "quiet": False}


def disturbance(path: str | Path, per_core: float, max_steal_share: float | None = None) -> list[str]:
    """Why the runner's own samples say other work shared the machine
    during this replicate (empty: nothing seen, or nothing readable): other
    busy cores before or after above ``per_core`` x online cores, the
    analysis's "loaded before" / "loaded after"; and, given
    *max_steal_share* (hxfuse.analysis.environment.MAX_STEAL_SHARE), a
    hypervisor that took more than that share of the cores between the
    runner's meta and end records (``end.steal_share``), the analysis's
    "stolen"."""
    try:
        recs = jsonl.read_records(path, partial=True)
    except (OSError, jsonl.IncompleteRunError):
        return []
    meta, end = recs.meta, recs.end or {}
    out = []
    steal = end.get("steal_share")
    if max_steal_share is not None and isinstance(steal, (int, float)) and steal > max_steal_share:
        out.append(f"the hypervisor took {steal:.1%} of the cores during the run (steal > {max_steal_share:.0%})")
    try:
        cores = float(meta.get("online_cores"))
    except (TypeError, ValueError):
        return out
    if not math.isfinite(cores) or cores < 1:
        return out
    limit = per_core * cores
    for name, rec, key in (("before", meta, "other_busy_cores_before"), ("after", end, "other_busy_cores_after")):
        v = rec.get(key)
        if isinstance(v, (int, float)) and v >= 0 and v > limit:
            out.append(f"loaded {name} (other processes kept {v:.2f} cores busy > {limit:.2f})")
    return out
