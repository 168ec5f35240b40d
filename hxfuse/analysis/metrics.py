"""Per-trial and per-point metrics of the experiment model.

Formulas: docs/metrics.md.  Column meanings: docs/columns.md.

Timing definitions (all in ns, from the runner's clock):

* ``makespan_ns``  host boundary: ``host.wait_end - host.submit_begin``.  This
  is T_X for every speedup and for the overlap efficiency against measured A,
  because it is the same boundary for every group (A/B have no device entry).
  The efficiency against the sum of alone *durations* uses ``device_ns``
  instead, so both sides are device times.
* ``device_ns``    C/D: the fused entry's span ``entry_end - entry_begin``;
  A/B/alone: the task span ``max(task end) - min(task begin)``.
* device start     C/D: ``entry_begin``; otherwise the first task's begin.  A
  task's *completion* ``T_i^X`` is its end minus the device start, so the
  cost of the entry (checks, scratch reservation) and, in A/B, of the host
  round trips between tasks counts against the task, while the host's
  submit cost before the first task does not.
* progress         ``{T}_cpu_ns``: thread CPU time the task's work consumed
  (summed over its threads); ``parallelism = sum_i cpu_ns_i / makespan_ns``
  is the number of engines that made progress at once on average: about 1
  when tasks take turns on one core, however much their wall-clock spans
  overlap, and about k with k engines really running together.
  ``{T}_run_share = cpu_ns / duration`` (1: ran the whole span, 0.5: shared
  its core half the time) and ``{T}_queue_ns = begin - launch`` (launched
  but waiting for its engine or a core).
* concurrent progress  from the tasks' checkpoints (hxfuse.analysis.progress): per
  task a piecewise-constant rate between checkpoints, against its alone rate
  (the median mean rate of its measured alone runs in the same runner
  invocation); ``concurrent_progress_ns`` is the time with >= 2 tasks at >=
  50% of their alone rate, ``concurrent_progress_share`` that over the
  trial's work span (first checkpoint to last, in [0, 1]), ``{T}_advancing_ns`` the
  time task T alone ran at >= 50% of its alone rate.
* slowdown         ``SD_i = T_i^X / T_i`` with ``T_i`` the median *duration*
  of task i in the measured alone runs of the same runner invocation (the
  trial's replicate: same machine state and frequency; docs/metrics.md,
  "Which alone time").  For an alone run completion equals duration, so SD
  of an alone run is ~1.

Warm-up trials never enter a statistic; empty-variant trials only enter the
control-overhead figures.
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from hxfuse.analysis import intervals as iv
from hxfuse.analysis import progress as pg
from hxfuse.runner.records import Run

# the vocabulary (re-exported: the analysis reads them as metrics.TASKS, ...)
from hxfuse.model import ALONE, GROUPS, SPEEDUP_PAIRS, TASKS  # noqa: F401


_ENGINE_ORDER = {"mx": 0, "vec": 1, "dma": 3}
# A single submit longer than this means the host thread lost its core in the
# middle of submitting (a push is a few microseconds); recorded per trial so
# that a group whose rounds were preempted can be told apart.
SUBMIT_OUTLIER_NS = 200_000.0


def engine_sort_key(engine: str) -> tuple[int, int, str]:
    """mx, vec, vec1, vec2, ..., dma, then anything else alphabetically."""
    m = re.fullmatch(r"vec(\d+)", engine)
    if m:
        return (2, int(m.group(1)), engine)
    return (_ENGINE_ORDER.get(engine, 9), 0, engine)


def tasks_of(workload: str) -> list[str]:
    """Task letters of a workload name: 'mvd' -> ['M', 'V', 'D']; alone 'M' -> ['M']."""
    return [c.upper() for c in workload if c.upper() in TASKS]


def task_bytes(meta: Mapping[str, Any]) -> dict[str, float]:
    """Bytes each task moves, from ``meta.tasks``.

    M and V: bytes read plus bytes written.  D: the bytes copied (each byte is
    read once and written once; a DMA's bandwidth is quoted per byte copied).
    """
    tasks = meta.get("tasks") or {}
    out: dict[str, float] = {}
    for name, spec in tasks.items():
        if not isinstance(spec, Mapping):
            continue
        if "bytes" in spec:
            out[name] = float(spec["bytes"])
        elif "bytes_in" in spec or "bytes_out" in spec:
            out[name] = float(spec.get("bytes_in", 0)) + float(spec.get("bytes_out", 0))
    return out


def task_prep_ns(meta: Mapping[str, Any]) -> dict[str, float]:
    """Preparation time (e.g. GEMM packing) done before timing, per task."""
    tasks = meta.get("tasks") or {}
    return {
        name: float(spec["prep_ns"])
        for name, spec in tasks.items()
        if isinstance(spec, Mapping) and spec.get("prep_ns") is not None
    }


# ---------------------------------------------------------------- per trial


def device_start_ns(trials: pd.DataFrame, tasks: pd.DataFrame) -> pd.Series:
    """Device start per trial_id: entry begin for C/D, first task begin otherwise."""
    first_begin = tasks.groupby("trial_id")["begin"].min()
    start = trials.set_index("trial_id")["device_entry_begin"]
    return start.fillna(first_begin.reindex(start.index))


def task_metrics(run: Run) -> pd.DataFrame:
    """One row per trial x task (several records of one task are merged).

    Columns: trial keys, task, engines, launch, begin, end, host_seen,
    duration_ns, completion_ns, host_seen_latency_ns, latency_no_early_ns,
    cpu_ns, queue_ns, run_share, cpu_begin, cpu_end, involuntary_switches.
    """
    t = run.tasks
    if t.empty:
        return pd.DataFrame(
            columns=[
                "trial_id",
                "task",
                "engines",
                "launch",
                "begin",
                "end",
                "host_seen",
                "duration_ns",
                "completion_ns",
                "host_seen_latency_ns",
                "latency_no_early_ns",
                "cpu_ns",
                "queue_ns",
                "run_share",
                "cpu_begin",
                "cpu_end",
                "involuntary_switches",
            ]
        )
    for col in ("launch", "cpu_ns", "cpu_begin", "cpu_end", "involuntary_switches"):
        if col not in t:
            t = t.assign(**{col: np.nan})
    g = t.groupby(["trial_id", "task"], sort=False)
    agg = g.agg(
        begin=("begin", "min"),
        end=("end", "max"),
        host_seen=("host_seen", "max"),
        launch=("launch", "min"),
        cpu_begin=("cpu_begin", "first"),
        cpu_end=("cpu_end", "last"),
    )
    # Builtin reductions only (a Python function per group was most of the
    # aggregation's time): a NaN (older runner) must stay NaN, not become a
    # partial sum, so a group with any NaN sums to NaN.
    size = g.size()
    for col in ("cpu_ns", "involuntary_switches"):
        agg[col] = g[col].sum().where(g[col].count() == size)
    # Engines: one record per task is the rule; only merged records need
    # the sorted, de-duplicated list.
    engines = g["engine"].first()
    merged = t.duplicated(["trial_id", "task"], keep=False)
    if merged.any():
        joined = (
            t[merged]
            .groupby(["trial_id", "task"], sort=False)["engine"]
            .agg(lambda s: ",".join(sorted(set(s), key=engine_sort_key)))
        )
        engines.loc[joined.index] = joined
    # the same dtype as a column built from the strings (what the joined
    # lambda used to give): inferred, not groupby's object
    agg.insert(0, "engines", pd.Series(engines.tolist(), index=engines.index))
    agg = agg[
        ["engines", "begin", "end", "host_seen", "launch", "cpu_ns", "cpu_begin", "cpu_end", "involuntary_switches"]
    ].reset_index()
    trials = run.trials.set_index("trial_id")
    start = device_start_ns(run.trials, t)
    agg["duration_ns"] = agg["end"] - agg["begin"]
    agg["completion_ns"] = agg["end"] - agg["trial_id"].map(start)
    # How long after the device finished did the host learn of it: with the
    # early-completion interface (host_seen) and without it (the entry's
    # single return, i.e. the end of the host's wait).
    agg["host_seen_latency_ns"] = agg["host_seen"] - agg["end"]
    agg["latency_no_early_ns"] = agg["trial_id"].map(trials["host_wait_end"]) - agg["end"]
    agg["queue_ns"] = agg["begin"] - agg["launch"]
    with np.errstate(divide="ignore", invalid="ignore"):
        agg["run_share"] = np.where(agg["duration_ns"] > 0, agg["cpu_ns"] / agg["duration_ns"], np.nan)
    return agg


def _engine_intervals(tasks: pd.DataFrame) -> dict[int, dict[str, np.ndarray]]:
    """{trial_id: {engine: (n, 2) array of [begin, end]}}, rows in file order.

    One factorisation and one split instead of a pandas group per (trial,
    engine): with a few thousand trials per run the per-group indexing was
    most of the aggregation's time."""
    out: dict[int, dict[str, np.ndarray]] = {}
    keep = tasks["trial_id"].notna() & tasks["engine"].notna()
    if not keep.any():
        return out
    t = tasks[keep]
    keys = pd.MultiIndex.from_arrays([t["trial_id"].to_numpy(), t["engine"].astype(str).to_numpy()])
    codes, uniques = pd.factorize(keys)
    order = np.argsort(codes, kind="stable")
    spans = t[["begin", "end"]].to_numpy(float)[order]
    chunks = np.split(spans, np.flatnonzero(np.diff(codes[order])) + 1)
    for (trial_id, engine), arr in zip(uniques, chunks):
        out.setdefault(int(trial_id), {})[str(engine)] = arr
    return out


def trial_metrics(run: Run) -> pd.DataFrame:
    """The per-trial tidy table (one row per trial, warm-up rows included and flagged).

    See docs/columns.md for every column.  Per-task columns exist for M, V and
    D in every run (NaN where the trial has no such task) so that tables of
    different points concatenate cleanly; per-engine columns exist for the
    engines seen in this run.
    """
    base = _time_columns(run)
    _task_columns(base, run)
    _progress_columns(base)
    _checkpoint_columns(base, run)
    _handover_columns(base, run)
    _interference_columns(base, run)
    _engine_columns(base, run)
    return base


def _time_columns(run: Run) -> pd.DataFrame:
    """Makespan, device time, the host's submit/wait split and preparation."""
    tr = run.trials
    base = tr[["trial_id", "round", "seq", "warmup", "workload", "group", "empty"]].copy()
    base["makespan_ns"] = tr["makespan_ns"]
    start = device_start_ns(tr, run.tasks)
    task_span = run.tasks.groupby("trial_id").agg(b=("begin", "min"), e=("end", "max"))
    span = (task_span["e"] - task_span["b"]).reindex(tr["trial_id"]).to_numpy()
    entry = (tr["device_entry_end"] - tr["device_entry_begin"]).to_numpy()
    base["device_ns"] = np.where(np.isfinite(entry), entry, span)
    # The runner's per-request sums when present; the spans otherwise (they
    # are equal when the trial has a single request).
    base["host_submit_ns"] = tr["host_submit_total_ns"].fillna(tr["host_submit_end"] - tr["host_submit_begin"])
    base["host_wait_ns"] = tr["host_wait_total_ns"].fillna(tr["host_wait_end"] - tr["host_wait_begin"])
    base["host_requests"] = tr["host_requests"]
    # Host time not covered by device activity: submit, wake-up and return.
    base["host_overhead_ns"] = base["makespan_ns"] - base["device_ns"]
    base["device_start_ns"] = tr["trial_id"].map(start).to_numpy()
    base["scratch_peak_bytes"] = tr["scratch_peak_bytes"]
    base["checksums_ok"] = tr["checksums_ok"]
    base["preempted"] = tr["preempted"] if "preempted" in tr else False
    base["n_tasks"] = base["workload"].map(lambda w: len(tasks_of(w)))
    return base


def _task_columns(base: pd.DataFrame, run: Run) -> None:
    """Per-task columns, wide ({T}_duration_ns, ...), bytes, bandwidth, and
    the end-to-end time that includes every task's preparation."""
    tm = task_metrics(run)
    per_task_cols = [
        "duration_ns",
        "completion_ns",
        "host_seen_latency_ns",
        "latency_no_early_ns",
        "cpu_ns",
        "queue_ns",
        "run_share",
        "cpu_begin",
        "involuntary_switches",
    ]
    nbytes = task_bytes(run.meta)
    prep = task_prep_ns(run.meta)
    for task in TASKS:
        sub = tm[tm["task"] == task].set_index("trial_id")
        for col in per_task_cols:
            base[f"{task}_{col}"] = base["trial_id"].map(sub[col]).astype(float)
        b = nbytes.get(task, math.nan)
        base[f"{task}_bytes"] = np.where(base[f"{task}_duration_ns"].notna(), b, np.nan)
        # bytes per ns == GB/s (1e9 bytes per second).  Empty tasks move nothing.
        base[f"{task}_bandwidth_GBps"] = np.where(
            base["empty"], np.nan, base[f"{task}_bytes"] / base[f"{task}_duration_ns"]
        )
    # End to end: preparation of the tasks the trial runs (packing is done
    # once before timing) plus the measured makespan.
    base["prep_ns"] = base["workload"].map(lambda w: sum(prep.get(t, 0.0) for t in tasks_of(w)))
    base["end_to_end_ns"] = base["prep_ns"] + base["makespan_ns"]


def _progress_columns(base: pd.DataFrame) -> None:
    """Progress: CPU time the trial's tasks consumed per unit of makespan.
    NaN when a task's CPU time is unknown (older runner) or the trial is empty."""
    cpu = np.zeros(len(base))
    for task in TASKS:
        c = base[f"{task}_cpu_ns"].to_numpy(float)
        has = base[f"{task}_duration_ns"].notna().to_numpy()
        cpu = np.where(has, cpu + c, cpu)  # a present task with NaN CPU time poisons the sum
    any_task = base[[f"{t}_duration_ns" for t in TASKS]].notna().any(axis=1).to_numpy()
    cpu = np.where(any_task & ~base["empty"].to_numpy(bool), cpu, np.nan)
    base["cpu_ns"] = cpu
    with np.errstate(divide="ignore", invalid="ignore"):
        base["parallelism"] = cpu / base["makespan_ns"].to_numpy(float)


def task_curves(run: Run) -> dict[int, dict[str, list[pg.Curve]]]:
    """Progress curves per trial and task: one ``(times, work)`` per thread
    with at least two checkpoints (docs/runner.md ``workers[].checkpoints``)."""
    w = run.workers
    out: dict[int, dict[str, list[pg.Curve]]] = {}
    if "checkpoints" not in w or not len(w):
        return out
    for trial_id, task, times, work in w[["trial_id", "task", "checkpoints", "checkpoint_work"]].itertuples(
        index=False
    ):
        if isinstance(times, tuple) and len(times) >= 2 and len(work) == len(times):
            out.setdefault(int(trial_id), {}).setdefault(str(task), []).append((times, work))
    return out


def alone_progress_rates(
    run: Run, curves: Mapping[int, Mapping[str, list[pg.Curve]]] | None = None
) -> dict[str, float]:
    """Each task's alone rate: the median over the run's measured, non-empty
    alone runs of that task of its mean progress rate (work fraction per ns
    over its checkpointed work).  One run is one runner invocation (one
    replicate), whose alone runs are interleaved with its groups' trials in
    the same rounds and so share their machine state."""
    curves = task_curves(run) if curves is None else curves
    tr = run.trials
    alone = tr[(tr["group"] == ALONE) & ~tr["warmup"].astype(bool) & ~tr["empty"].astype(bool)]
    rates: dict[str, list[float]] = {}
    for trial_id, workload in alone[["trial_id", "workload"]].itertuples(index=False):
        task = str(workload).upper()
        r = pg.mean_rate(curves.get(int(trial_id), {}).get(task, []))
        if math.isfinite(r):
            rates.setdefault(task, []).append(r)
    return {t: float(np.median(v)) for t, v in rates.items()}


def _checkpoint_columns(base: pd.DataFrame, run: Run) -> None:
    """Concurrent progress from the checkpoints (hxfuse.analysis.progress); NaN where a
    task has no checkpoints or no alone rate, and for alone and empty trials."""
    curves = task_curves(run)
    alone = alone_progress_rates(run, curves)
    cp = np.full(len(base), np.nan)
    share = np.full(len(base), np.nan)
    adv = {t: np.full(len(base), np.nan) for t in TASKS}
    for row, (trial_id, workload, group, empty) in enumerate(
        base[["trial_id", "workload", "group", "empty"]].itertuples(index=False)
    ):
        if empty or group == ALONE:
            continue
        names = tasks_of(str(workload))
        got = curves.get(int(trial_id), {})
        rates = [alone.get(t, math.nan) for t in names]
        for t, r in zip(names, rates):
            adv[t][row] = pg.advancing_ns(got.get(t, []), r)
        cp[row] = pg.concurrent_progress_ns([got.get(t, []) for t in names], rates)
        # over the trial's work span (first checkpoint to last, all tasks):
        # the fraction of the run with >= 2 tasks advancing, in [0, 1]; the
        # former denominator (the shortest alone work time) let it reach 6.8
        span = pg.work_span_ns([c for t in names for c in got.get(t, [])])
        share[row] = cp[row] / span if math.isfinite(span) and span > 0 else math.nan
    base["concurrent_progress_ns"] = cp
    base["concurrent_progress_share"] = share
    for t in TASKS:
        base[f"{t}_advancing_ns"] = adv[t]


def _handover_columns(base: pd.DataFrame, run: Run) -> None:
    """The host's slowest submit and, for B, how far apart its handovers were."""
    tr = run.trials
    base["host_submit_max_ns"] = tr["host_submit_max_ns"] if "host_submit_max_ns" in tr else np.nan
    base["host_cpu"] = tr["host_cpu"] if "host_cpu" in tr else np.nan
    smax = base["host_submit_max_ns"].to_numpy(float)
    base["submit_outlier"] = np.where(np.isfinite(smax), smax > SUBMIT_OUTLIER_NS, np.nan)
    # B hands its tasks to their engines one push after another; a late
    # handover (the last launch long after the first) means the host lost its
    # core between pushes and B's tasks started apart.  A slow *last* push
    # (the host preempted by the engine it just woke) delays nothing, so the
    # handover, not the raw submit time, is what can bias B.
    launch = run.tasks.groupby("trial_id")["launch"].agg(["min", "max"]) if "launch" in run.tasks else None
    if launch is not None and len(launch):
        spread = (launch["max"] - launch["min"]).reindex(base["trial_id"]).to_numpy(float)
    else:
        spread = np.full(len(base), np.nan)
    is_b = (base["group"] == "B").to_numpy()
    base["handover_ns"] = np.where(is_b, spread, np.nan)
    base["late_handover"] = np.where(is_b & np.isfinite(spread), spread > SUBMIT_OUTLIER_NS, np.nan)


# A trial counts as interfered when other processes ran on the runner's cores
# for more than this share of its makespan: half the default minimum effect
# (analysis.min_effect, 3%).  Below it, even if every such nanosecond had
# delayed the trial's critical path, the trial's makespan moved by less than
# half the smallest difference a verdict reads, so a speedup paired with it
# moved by less than that too.
INTERFERENCE_SHARE = 0.015
# ... and for more than this many ns in absolute terms.  On a quiet 2-core VM
# the runner sees 0 to about 5 us of other CPU time in 95% of its trials
# (timer, RCU and kworker housekeeping every trial pays alike); any other
# process that gets the core (a shell, a compiler) takes tens of
# microseconds at least.  The floor keeps that housekeeping from flagging
# the shortest (empty) trials.
INTERFERENCE_FLOOR_NS = 10_000.0


def interference_threshold_ns(makespan_ns: Any, resolution_ns: float = 1.0) -> Any:
    """Other CPU time above which a trial of this makespan counts as
    interfered: max(INTERFERENCE_SHARE x makespan, INTERFERENCE_FLOOR_NS,
    the busy-time reading's resolution).  With /proc/stat as the source
    (10 ms jiffies) only interference longer than a jiffy can be told apart
    from the reading's rounding."""
    res = resolution_ns if resolution_ns is not None and math.isfinite(resolution_ns) else 1.0
    return np.maximum(np.maximum(INTERFERENCE_SHARE * np.asarray(makespan_ns, dtype=float), INTERFERENCE_FLOOR_NS), res)


def _busy_resolution_ns(meta: Mapping[str, Any]) -> float:
    info = meta.get("interference") or {}
    res = info.get("busy_resolution_ns") if isinstance(info, Mapping) else None
    return float(res) if res is not None else math.nan


def _interference_columns(base: pd.DataFrame, run: Run) -> None:
    """What the runner observed of other work during each trial (docs/runner.md,
    ``interference``) and the rule that calls a trial interfered.

    ``interfered`` rests on ``displaced_cpu_ns``: the other CPU time that did
    not fit into the idle time the runner left on its cores.  Involuntary switches are
    reported but not used: where the runner's own threads share cores (the
    host build on 2 cores runs 3 engines and the host), they preempt one
    another, and a switch count cannot say who took the core.
    """
    tr = run.trials
    other = tr["other_cpu_ns"].to_numpy(float) if "other_cpu_ns" in tr else np.full(len(base), np.nan)
    makespan = base["makespan_ns"].to_numpy(float)
    base["involuntary_switches"] = tr["involuntary_switches"] if "involuntary_switches" in tr else np.nan
    task_sw = base[[f"{t}_involuntary_switches" for t in TASKS]].to_numpy(float)
    present = base[[f"{t}_duration_ns" for t in TASKS]].notna().to_numpy()
    known = np.where(present, np.isfinite(task_sw), True).all(axis=1) & present.any(axis=1)
    base["task_involuntary_switches"] = np.where(known, np.where(present, task_sw, 0.0).sum(axis=1), np.nan)
    base["other_cpu_ns"] = other
    with np.errstate(divide="ignore", invalid="ignore"):
        base["other_cpu_share"] = np.where(makespan > 0, other / makespan, np.nan)
    base["displaced_cpu_ns"] = displaced_cpu_ns(
        other, _trial_col(tr, "cores_busy_ns"), _trial_col(tr, "interference_span_ns"), _n_cores(run.meta)
    )
    limit = interference_threshold_ns(makespan, _busy_resolution_ns(run.meta))
    disp = base["displaced_cpu_ns"].to_numpy(float)
    base["interfered"] = np.where(np.isfinite(disp), disp > limit, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        base["displaced_share"] = np.where(makespan > 0, disp / makespan, np.nan)


def _trial_col(tr: pd.DataFrame, col: str) -> np.ndarray:
    return tr[col].to_numpy(float) if col in tr else np.full(len(tr), np.nan)


def _n_cores(meta: Mapping[str, Any]) -> float:
    info = meta.get("interference") or {}
    cores = info.get("cores") if isinstance(info, Mapping) else None
    return float(len(cores)) if isinstance(cores, list) and cores else math.nan


# The per-core busy counters charge a running task's time at its next tick
# or switch, so a reading can miss up to about one scheduler tick (4 ms at
# HZ 250) per core of work that did run: idle time below that is not
# evidence that the cores were free.  Seen: with a spinner on the runner's
# one core, 12% of its trials showed 1-4 ms of "idle" and were not flagged.
BUSY_READING_LAG_NS = 4_000_000.0


def displaced_cpu_ns(
    other_ns: Any, busy_ns: Any, span_ns: Any, n_cores: float, lag_ns: float = BUSY_READING_LAG_NS
) -> np.ndarray:
    """Other processes' CPU time on the runner's cores that did not fit into
    the idle time the runner left there: max(0, other - idle) with idle =
    max(0, n_cores x span - busy) (busy: everything that ran on those cores
    during the trial's span, the runner included).

    Other work that fits into idle core time need not have displaced the
    runner: the scheduler is work-conserving and other processes are not
    pinned, so they run on a core the runner leaves idle (in A, C and the
    alone runs one of two cores idles while a task runs; on a pipeline
    machine that is where kernel writeback and housekeeping go: 8-14% of the
    makespan in A/C of one default point against 1-5% in B/D, with A's
    makespan unchanged).  What exceeds the idle time must have taken time
    the runner's threads could have used.  NaN where ``other_ns`` is; where
    the busy time, span or core count is unknown no idle time is assumed
    (the whole of ``other_ns``: the worst case)."""
    other = np.asarray(other_ns, dtype=float)
    idle = n_cores * (np.asarray(span_ns, dtype=float) - lag_ns) - np.asarray(busy_ns, dtype=float)
    idle = np.maximum(0.0, np.nan_to_num(idle, nan=0.0))
    return np.maximum(0.0, other - idle)


def _engine_columns(base: pd.DataFrame, run: Run) -> None:
    """Per-engine busy time, utilisation and pairwise overlaps (wall-clock
    spans of the threads that ran the tasks, one lane per vector worker)."""
    lanes = run.workers if len(run.workers) or not len(run.tasks) else run.tasks
    engines = sorted(set(lanes["engine"]), key=engine_sort_key)
    by_trial = _engine_intervals(lanes)
    busy = {e: np.full(len(base), np.nan) for e in engines}
    pairs = list(itertools.combinations(engines, 2))
    overlap = {p: np.full(len(base), np.nan) for p in pairs}
    overlap_max = np.full(len(base), np.nan)
    concurrent = np.full(len(base), np.nan)
    for row, trial_id in enumerate(base["trial_id"].to_numpy()):
        sets = by_trial.get(int(trial_id), {})
        for e, s in sets.items():
            busy[e][row] = iv.union_length(s)
        vals = []
        for a, b in pairs:
            if a in sets and b in sets:
                overlap[(a, b)][row] = iv.pairwise_overlap(sets[a], sets[b])
                vals.append(overlap[(a, b)][row])
        vals = [v for v in vals if math.isfinite(v)]
        if vals:
            overlap_max[row] = max(vals)
        if sets:
            concurrent[row] = iv.concurrency_length(list(sets.values()), at_least=2)
    makespan = base["makespan_ns"].to_numpy(float)
    for e in engines:
        base[f"busy_{e}_ns"] = busy[e]
        base[f"util_{e}"] = busy[e] / makespan
    for a, b in pairs:
        base[f"overlap_{a}_{b}"] = overlap[(a, b)]
    base["overlap_max"] = overlap_max
    # Time with at least two engines busy; the absolute counterpart of the
    # pairwise ratios, comparable across groups.
    base["concurrent_ns"] = concurrent


# ---------------------------------------------------------------- per point


def measured(tm: pd.DataFrame, empty: bool = False) -> pd.DataFrame:
    """Trials that enter statistics: not warm-up, of the given variant, and
    not ``preempted`` (another client of the NPU asked for its resources
    during the trial, so a contender may be in its timings: left out like a
    warm-up, which also unpairs its round in every speedup)."""
    pre = tm["preempted"].fillna(False).astype(bool) if "preempted" in tm else False
    return tm[(~tm["warmup"].astype(bool)) & (tm["empty"].astype(bool) == empty) & ~pre]


def alone_durations(tm: pd.DataFrame) -> dict[str, float]:
    """T_i: median duration of task i over its measured, non-empty alone runs.

    Of whatever table it is given: one runner output for the slowdowns
    (``trial_table``), a point's replicates pooled for T_serial and T_ideal
    (``summarize``)."""
    m = measured(tm)
    m = m[m["group"] == ALONE]
    out = {}
    for task in TASKS:
        d = m.loc[m["workload"].str.upper() == task, f"{task}_duration_ns"].dropna()
        if len(d):
            out[task] = float(np.median(d))
    return out


def engines_available(n_tasks: int, online_cores: int | None) -> int:
    """k: engines that can actually run at once (a host build shares cores)."""
    if online_cores is None or not online_cores or online_cores < 1:
        return n_tasks
    return max(1, min(n_tasks, int(online_cores)))


def serial_bounds(alone: Mapping[str, float], tasks: Sequence[str], k: int) -> dict[str, float]:
    """T_serial = sum T_i, T_ideal = max T_i, resource-aware bound max(T_ideal, T_serial / k).

    NaN when an alone time is missing: a partial sum would understate T_serial.
    """
    vals = [alone.get(t, math.nan) for t in tasks]
    if not vals or any(not math.isfinite(v) for v in vals):
        return {"t_serial_ns": math.nan, "t_ideal_ns": math.nan, "t_bound_ns": math.nan}
    t_serial = float(sum(vals))
    t_ideal = float(max(vals))
    return {"t_serial_ns": t_serial, "t_ideal_ns": t_ideal, "t_bound_ns": max(t_ideal, t_serial / k)}


def overlap_efficiency(t_serial: float, t_ideal: float, t_x: float) -> float:
    """eta = (T_serial - T_X) / (T_serial - T_ideal): 1 perfect overlap, 0 serial, < 0 worse.

    NaN when T_serial == T_ideal (a single task leaves nothing to overlap).
    """
    denom = t_serial - t_ideal
    if not math.isfinite(denom) or denom <= 0 or not math.isfinite(t_x):
        return math.nan
    return (t_serial - t_x) / denom


def overlap_efficiency_vs_bound(t_serial: float, t_bound: float, t_x: float) -> float:
    """eta against the resource-aware bound: (T_serial - T_X) / (T_serial - T_bound).

    T_bound = max(T_ideal, T_serial / k) is what k engines can reach at best,
    so 1 means the point reached what its engines allow (on 2 cores, three
    tasks cannot reach max T_i).  NaN when T_bound == T_serial (k = 1).
    """
    return overlap_efficiency(t_serial, t_bound, t_x)


def slowdowns(tm: pd.DataFrame, alone: Mapping[str, float]) -> pd.DataFrame:
    """Per-trial SD_i, NP_i, STP, ANTT and fairness.

    Returns a frame aligned with ``tm`` (same index) with columns
    ``{T}_slowdown``, ``{T}_np``, ``stp``, ``antt``, ``fairness``.  Only the
    tasks of each trial's workload count; a trial whose tasks lack an alone
    time, and every empty trial, gets NaN for the aggregates (a partial STP
    would not be comparable).
    """
    out = pd.DataFrame(index=tm.index)
    sd = np.full((len(tm), len(TASKS)), np.nan)
    for j, task in enumerate(TASKS):
        t_alone = alone.get(task, math.nan)
        if math.isfinite(t_alone) and t_alone > 0:
            sd[:, j] = tm[f"{task}_completion_ns"].to_numpy(float) / t_alone
    sd[tm["empty"].to_numpy(bool)] = np.nan
    with np.errstate(divide="ignore"):
        npv = 1.0 / sd
    for j, task in enumerate(TASKS):
        out[f"{task}_slowdown"] = sd[:, j]
        out[f"{task}_np"] = npv[:, j]
    present = tm[[f"{t}_completion_ns" for t in TASKS]].notna().to_numpy()
    complete = present.any(axis=1) & (np.isfinite(sd) == present).all(axis=1)
    n = present.sum(axis=1).clip(min=1)
    sd0 = np.where(present, sd, 0.0)
    np0 = np.where(present, npv, 0.0)
    np_lo = np.where(present, npv, np.inf).min(axis=1)
    np_hi = np.where(present, npv, -np.inf).max(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["stp"] = np.where(complete, np0.sum(axis=1), np.nan)
        out["antt"] = np.where(complete, sd0.sum(axis=1) / n, np.nan)
        out["fairness"] = np.where(complete, np_lo / np_hi, np.nan)
    return out


REPLICATE = "replicate"


def round_keys(tm: pd.DataFrame) -> list[str]:
    """Columns that identify a round: (replicate, round) when the table holds
    several runner invocations (their round numbers repeat), else round."""
    return [REPLICATE, "round"] if REPLICATE in tm.columns else ["round"]


def paired_makespans(tm: pd.DataFrame, workload: str, value: str = "makespan_ns") -> pd.DataFrame:
    """Measured non-empty makespans of one workload, one row per round, one column per group
    (indexed by (replicate, round) when the table has a ``replicate`` column).

    ``value`` picks another per-trial time paired the same way, e.g.
    ``end_to_end_ns`` (preparation + makespan)."""
    m = measured(tm)
    m = m[(m["workload"] == workload) & (m["group"].isin(GROUPS))]
    # A round has one trial per group; if a runner ever repeats one, the
    # median keeps the pairing defined instead of failing.
    return m.pivot_table(index=round_keys(m), columns="group", values=value, aggfunc="median")


def paired_speedups(tm: pd.DataFrame, workload: str, value: str = "makespan_ns") -> pd.DataFrame:
    """Per-round speedups T_Y / T_X for SPEEDUP_PAIRS (columns ``speedup_X_over_Y``).

    Rounds where either group is missing are NaN for that pair, never paired
    across rounds: rounds interleave the groups so that slow drifts cancel.
    ``value="end_to_end_ns"`` gives the end-to-end speedups: each side is its
    own trial's preparation plus makespan (docs/metrics.md, "end-to-end
    speedup").
    """
    wide = paired_makespans(tm, workload, value)
    out = pd.DataFrame(index=wide.index)
    for x, y in SPEEDUP_PAIRS:
        if x in wide and y in wide:
            out[f"speedup_{x}_over_{y}"] = wide[y] / wide[x]
        else:
            out[f"speedup_{x}_over_{y}"] = np.nan
    return out


def interfered_rounds(tm: pd.DataFrame, workload: str) -> pd.DataFrame:
    """Per round (indexed like :func:`paired_speedups`) and relation X/Y of
    SPEEDUP_PAIRS (columns ``hit_X_over_Y``): 1.0 when either of its two
    paired trials (same replicate, same round) was ``interfered``, 0.0 when
    neither, NaN when the round lacks evidence on a side (an older runner,
    the ONNX Runtime harness, a platform that cannot read other work) or
    one of the groups did not run in it."""
    ms = paired_makespans(tm, workload)
    out = pd.DataFrame(index=ms.index)
    m = measured(tm)
    m = m[(m["workload"] == workload) & (m["group"].isin(GROUPS))]
    have = "interfered" in m.columns and not m.empty
    if have:
        flag = m.assign(interfered=pd.to_numeric(m["interfered"], errors="coerce"))
        # max, not median: a repeated trial of a round that was hit once hits it
        wide = flag.pivot_table(
            index=round_keys(flag), columns="group", values="interfered", aggfunc="max", dropna=False
        ).reindex(ms.index)
    for x, y in SPEEDUP_PAIRS:
        col = f"hit_{x}_over_{y}"
        if not (have and x in ms and y in ms and x in wide and y in wide):
            out[col] = np.nan
            continue
        fx, fy = wide[x], wide[y]
        hit = ((fx > 0) | (fy > 0)).astype(float)
        out[col] = hit.where(fx.notna() & fy.notna() & ms[x].notna() & ms[y].notna())
    return out


def round_shifts(tm: pd.DataFrame, workload: str) -> pd.DataFrame:
    """Per round (indexed like :func:`paired_speedups`) and relation X/Y:
    how far interference can have moved that round's ratio T_Y / T_X, one
    column per direction, each the ``displaced_share`` of one paired trial
    (other CPU time that displaced the runner, over the makespan: that trial
    took at least 1 - share of its makespan undisturbed).
    ``shift_down_X_over_Y``: Y's share (a delayed Y can only have raised the
    ratio); ``shift_up_X_over_Y``: X's (a delayed X can only have lowered
    it).  :func:`hxfuse.analysis.stats.displacement_bias` turns them into
    the bounds of the median.  NaN where a side lacks the evidence."""
    wide = paired_makespans(tm, workload, "displaced_share") if "displaced_share" in tm else None
    out = pd.DataFrame(index=paired_makespans(tm, workload).index)
    for x, y in SPEEDUP_PAIRS:
        for name, side in (("down", y), ("up", x)):
            col = f"shift_{name}_{x}_over_{y}"
            if wide is not None and x in wide and y in wide:
                out[col] = wide[side].where(wide[x].notna() & wide[y].notna())
            else:
                out[col] = np.nan
    return out


def interfered_round_shares(tm: pd.DataFrame, workload: str) -> dict[str, float]:
    """Per relation ``"X/Y"`` of SPEEDUP_PAIRS: the share of its paired rounds
    that interference hit, from the runner's own evidence
    (:func:`interfered_rounds`, :func:`hit_share`).  NaN for a relation when
    any of its rounds lacks the evidence or when no round pairs: the caller
    then falls back to the MAD proxy (:func:`hxfuse.analysis.stats.interference_share`).
    """
    hits = interfered_rounds(tm, workload)
    ms = paired_makespans(tm, workload)
    out = {}
    for x, y in SPEEDUP_PAIRS:
        both = ms[x].notna() & ms[y].notna() if x in ms and y in ms else pd.Series(False, index=ms.index)
        out[f"{x}/{y}"] = hit_share(hits[f"hit_{x}_over_{y}"][both])
    return out


def hit_share(hits: pd.Series) -> float:
    """Share of rounds hit; NaN when there is none or any lacks evidence."""
    h = pd.to_numeric(hits, errors="coerce")
    return float(h.mean()) if len(h) and h.notna().all() else math.nan
