"""Timelines of a representative round: a tidy interval table and a Perfetto trace.

Both views come from :func:`gantt_intervals`, so the Gantt figures and the
trace that opens in ui.perfetto.dev show exactly the same intervals.

Representative trial: for each workload x group, the measured non-empty trial
whose makespan is the median (the lower middle one for an even count), or the
trial of a given round.  Times are relative to that trial's
``host.submit_begin`` so all groups start at 0 and line up for comparison.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from hxfuse.analysis import intervals as iv
from hxfuse.analysis import progress as pg
from hxfuse.runner.records import Run, read_run
from hxfuse.analysis.metrics import ALONE, GROUPS, alone_progress_rates, engine_sort_key, task_curves, tasks_of

HOST = "host"
PROGRESS_COLUMNS = ["trial_id", "round", "workload", "group", "task", "t_rel_ns", "work"]
GANTT_COLUMNS = [
    "trial_id",
    "round",
    "workload",
    "group",
    "makespan_ns",
    "lane",
    "kind",
    "name",
    "begin_ns",
    "end_ns",
    "start_rel_ns",
    "end_rel_ns",
    "run_share",
    "core",
    "task",
]


def representative_trials(run: Run, round: int | None = None) -> pd.DataFrame:
    """The chosen trial of every workload x group (rows of ``run.trials``)."""
    t = run.trials[(~run.trials["warmup"]) & (~run.trials["empty"])]
    if round is not None:
        return t[t["round"] == round].copy()
    chosen = []
    for _, g in t.groupby(["workload", "group"], sort=False):
        # Lower median by rank, so the chosen trial really happened (an even
        # count has no trial at the interpolated median).
        order = g.sort_values(["makespan_ns", "round"], kind="stable")
        chosen.append(order.iloc[(len(order) - 1) // 2])
    if not chosen:
        return t.iloc[0:0].copy()
    return pd.DataFrame(chosen).reset_index(drop=True)


def gantt_intervals(run: Run, round: int | None = None) -> pd.DataFrame:
    """Tidy intervals of the representative trials, one row per interval.

    ``lane`` is an engine name or ``host``; ``kind`` is ``task`` (name = task
    letter; one slice per thread that ran part of it, so V's extra workers
    get their own lanes ``vec1``...; ``run_share`` = its CPU time / span and
    ``core`` = the core it started on, NaN where unknown), ``queue`` (name =
    "queue <task>": launched but not yet running, from the task's launch to
    its begin), ``wait`` (an engine waiting; name = "wait <event>"), ``entry``
    (the fused entry, on the engine that ran it), ``host_wait`` (the host
    waiting; name = "wait <event>") or ``submit`` (host time outside its
    waits: submitting, waking up).  Slices of one
    lane never partly overlap, so the trace viewer nests them correctly.

    A trial whose file records its tasks' profiled nodes (``run.nodes``: the
    ONNX Runtime harness, docs/ort.md) gets one ``node`` slice per node
    instead of its ``task`` slices: lane = the thread the node ran on (the
    harness's ``mx``/``vec``/``dma``/``graph`` threads, ``ort1``... for ONNX
    Runtime's pool threads), name = the node's name; a Loop's body nodes nest
    inside the Loop node.  ``task`` is the task letter of every task, queue
    and node slice (empty for the others).
    """
    chosen = representative_trials(run, round)
    rows: list[dict[str, Any]] = []
    ids = set(chosen["trial_id"])
    tasks = run.tasks[run.tasks["trial_id"].isin(ids)]
    workers = run.workers if len(run.workers) or not len(run.tasks) else run.tasks
    workers = workers[workers["trial_id"].isin(ids)]
    waits = run.waits[run.waits["trial_id"].isin(ids)]
    nodes = run.nodes[run.nodes["trial_id"].isin(ids)]
    for _, tr in chosen.iterrows():
        tid = int(tr["trial_id"])
        add = _adder(rows, tr)
        tw = waits[waits["trial_id"] == tid]
        _host_slices(add, tr, tw[tw["who"] == HOST])
        tt = tasks[tasks["trial_id"] == tid]
        _entry_and_queue_slices(add, tr, tt)
        tn = nodes[nodes["trial_id"] == tid]
        _node_slices(add, tn)
        # (where there are nodes, they stand for the task slices)
        _task_slices(add, workers[(workers["trial_id"] == tid) & (len(tn) == 0)])
        for _, w in tw[tw["who"] != HOST].iterrows():
            add(str(w["who"]), "wait", f"wait {w['on']}", w["begin"], w["end"])
    out = pd.DataFrame(rows, columns=GANTT_COLUMNS)
    for c in ("begin_ns", "end_ns", "start_rel_ns", "end_rel_ns", "makespan_ns", "run_share", "core"):
        out[c] = out[c].astype(float)
    return out


def progress_curves(run: Run, round: int | None = None) -> pd.DataFrame:
    """Each task's progress in the representative trials: one row per
    checkpoint time of the task (over its threads), ``work`` = the fraction
    of the task's work done by then (hxfuse.analysis.progress.progress_curve),
    ``t_rel_ns`` relative to the trial's first submit like the intervals of
    :func:`gantt_intervals`.  Empty where the runner recorded no checkpoints."""
    chosen = representative_trials(run, round)
    curves = task_curves(run)
    rows: list[dict[str, Any]] = []
    for tr in chosen.itertuples(index=False):
        got = curves.get(int(tr.trial_id), {})
        t0 = float(tr.host_submit_begin)
        for task in tasks_of(str(tr.workload)):
            if task not in got:
                continue
            times, work = pg.progress_curve(got[task])
            key = {"trial_id": int(tr.trial_id), "round": int(tr.round), "workload": tr.workload}
            key |= {"group": tr.group, "task": task}
            rows.extend(key | {"t_rel_ns": t - t0, "work": w} for t, w in zip(times, work))
    return pd.DataFrame(rows, columns=PROGRESS_COLUMNS)


def trial_concurrent_progress(run: Run, trial_ids) -> dict[int, float]:
    """``concurrent_progress_ns`` of the given trials (hxfuse.analysis.progress; the
    run's alone rates), for the figures' annotations."""
    return {tid: v for tid, (v, _) in concurrent_progress_spans(run, trial_ids).items()}


def concurrent_progress_spans(run: Run, trial_ids) -> dict[int, tuple[float, list[tuple[float, float]]]]:
    """Per trial: ``concurrent_progress_ns`` and the intervals it adds up,
    relative to the trial's first submit (as the timelines draw them)."""
    curves = task_curves(run)
    alone = alone_progress_rates(run, curves)
    tr = run.trials.set_index("trial_id")
    out = {}
    for tid in trial_ids:
        names = tasks_of(str(tr["workload"].get(tid, "")))
        got = [curves.get(int(tid), {}).get(t, []) for t in names]
        rates = [alone.get(t, math.nan) for t in names]
        t0 = float(tr["host_submit_begin"].get(tid, math.nan))
        segs = [(b - t0, e - t0) for b, e in pg.concurrent_segments(got, rates)]
        out[int(tid)] = (pg.concurrent_progress_ns(got, rates), segs)
    return out


def _adder(rows: list[dict[str, Any]], tr: pd.Series):
    """``add(lane, kind, name, begin, end, share, core, task)``: appends one
    interval of trial *tr* to *rows*, times also relative to its first submit."""
    key = {
        "trial_id": int(tr["trial_id"]),
        "round": int(tr["round"]),
        "workload": tr["workload"],
        "group": tr["group"],
        "makespan_ns": float(tr["makespan_ns"]),
    }
    t0 = float(tr["host_submit_begin"])

    def add(
        lane: str,
        kind: str,
        name: str,
        b: float,
        e: float,
        share: float = math.nan,
        core: float = math.nan,
        task: str = "",
    ) -> None:
        rows.append(
            key
            | {
                "lane": lane,
                "kind": kind,
                "name": name,
                "begin_ns": b,
                "end_ns": e,
                "start_rel_ns": b - t0,
                "end_rel_ns": e - t0,
                "run_share": share,
                "core": core,
                "task": task,
            }
        )

    return add


def _host_slices(add, tr: pd.Series, host_waits: pd.DataFrame) -> None:
    """The host lane: its waits, and ``submit`` for the rest of the trial."""
    trial_span = [(tr["host_submit_begin"], tr["host_wait_end"])]
    if len(host_waits):
        # In A the host submits and waits once per task, so the trial's
        # submit and wait spans interleave; the wait records are exact,
        # and the host is busy (submitting, waking up) in between.
        for _, w in host_waits.iterrows():
            add(HOST, "host_wait", f"wait {w['on']}", w["begin"], w["end"])
        busy = iv.subtract(trial_span, host_waits[["begin", "end"]].to_numpy(float))
    else:
        wait_from = max(tr["host_wait_begin"], tr["host_submit_end"])
        add(HOST, "host_wait", "wait", wait_from, tr["host_wait_end"])
        busy = iv.subtract(trial_span, [(wait_from, tr["host_wait_end"])])
    for b, e in busy:
        add(HOST, "submit", "submit", b, e)


def _entry_and_queue_slices(add, tr: pd.Series, tt: pd.DataFrame) -> None:
    """The fused entry (C/D) and each task's time queued after its launch."""
    if np.isfinite(tr["device_entry_begin"]):
        # The fused entry runs on the device control thread, which also
        # runs V; fall back to "vec" when V is absent (workload md).
        v = tt[tt["task"] == "V"]
        lane = str(v["engine"].iloc[0]) if len(v) else "vec"
        add(lane, "entry", "entry", tr["device_entry_begin"], tr["device_entry_end"])
    for _, t in tt.iterrows():
        launch = t.get("launch", math.nan)
        if np.isfinite(launch) and launch < t["begin"]:
            add(str(t["engine"]), "queue", f"queue {t['task']}", launch, t["begin"], task=str(t["task"]))


def _node_slices(add, tn: pd.DataFrame) -> None:
    """The profiled nodes of a trial (ONNX Runtime harness), if any."""
    if len(tn):
        # longer first at equal start, so a Loop precedes the body nodes it holds
        tn = tn.assign(dur=tn["end"] - tn["begin"]).sort_values(
            ["begin", "dur"], ascending=[True, False], kind="stable"
        )
        for n in tn.itertuples(index=False):
            add(str(n.lane), "node", str(n.name), n.begin, n.end, task=str(n.task))


def _task_slices(add, workers: pd.DataFrame) -> None:
    """One ``task`` slice per thread that ran part of a task."""
    for _, w in workers.iterrows():
        span = w["end"] - w["begin"]
        share = w["cpu_ns"] / span if np.isfinite(w.get("cpu_ns", math.nan)) and span > 0 else math.nan
        add(
            str(w["engine"]),
            "task",
            str(w["task"]),
            w["begin"],
            w["end"],
            share,
            w.get("cpu_begin", math.nan),
            task=str(w["task"]),
        )


def improper_nesting(gi: pd.DataFrame) -> list[tuple]:
    """Pairs of slices on one lane that overlap without nesting; a trace viewer
    would draw them wrongly.  Empty for well-formed runner output."""
    bad = []
    for key, sub in gi.groupby(["trial_id", "lane"]):
        ivs = sub[["begin_ns", "end_ns"]].to_numpy(float)
        b, e = ivs[:, 0], ivs[:, 1]
        # a begins first, b begins inside a and ends after it.
        mask = (b[:, None] < b[None, :]) & (b[None, :] < e[:, None]) & (e[:, None] < e[None, :])
        for i, j in zip(*np.nonzero(mask)):
            bad.append((key, tuple(ivs[i]), tuple(ivs[j])))
    return bad


def _lane_key(lane: str) -> tuple:
    return (0, 0, "") if lane == HOST else (1, *engine_sort_key(lane))


def perfetto_trace(run: Run, round: int | None = None) -> dict[str, Any]:
    """Chrome trace-event JSON (``json.dump`` it) of the representative trials.

    One process per workload x group (named e.g. ``mvd D``), one thread per
    lane (host first, then the engines), complete ("X") events in
    microseconds relative to each trial's submit.
    """
    gi = gantt_intervals(run, round)
    events: list[dict[str, Any]] = []
    # hxrun's groups, then any other group in its file's meta.group_mapping
    # order (the ONNX Runtime harness's A_ort, B_ort, B_ort_graph), then alone
    mapping = run.meta.get("group_mapping")
    named = dict.fromkeys([*GROUPS, *(mapping if isinstance(mapping, dict) else {}), ALONE])
    named.pop(ALONE)
    order = {g: i for i, g in enumerate([*named, ALONE])}
    procs = sorted(
        gi[["workload", "group"]].drop_duplicates().itertuples(index=False),
        key=lambda r: (str(r.workload).upper() in ("M", "V", "D"), str(r.workload), order.get(r.group, 99)),
    )
    for pid, proc in enumerate(procs, start=1):
        sub = gi[(gi["workload"] == proc.workload) & (gi["group"] == proc.group)]
        first = sub.iloc[0]
        pname = f"{proc.workload} {proc.group}"
        events.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": pname}})
        events.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index", "args": {"sort_index": pid}})
        lanes = sorted(sub["lane"].unique(), key=_lane_key)
        tids = {lane: i for i, lane in enumerate(lanes, start=1)}
        for lane, tid in tids.items():
            events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": lane}})
            events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}})
        # Longer slices first at equal start so the viewer nests the shorter
        # ones (a wait inside the entry) under the longer ones.
        sub = sub.assign(dur_ns=sub["end_rel_ns"] - sub["start_rel_ns"]).sort_values(
            ["start_rel_ns", "dur_ns"], ascending=[True, False], kind="stable"
        )
        for r in sub.itertuples(index=False):
            args: dict[str, Any] = {
                "trial_id": int(r.trial_id),
                "round": int(r.round),
                "makespan_us": float(first["makespan_ns"]) / 1000.0,
            }
            if math.isfinite(r.run_share):
                # share of the slice the thread was running (CPU time / span)
                args["run_share"] = float(f"{r.run_share:.4f}")
            if math.isfinite(r.core):
                args["core"] = int(r.core)
            if r.kind == "node":
                args["task"] = r.task
            events.append(
                {
                    "ph": "X",
                    "pid": pid,
                    "tid": tids[r.lane],
                    "name": r.name,
                    "cat": r.kind,
                    "ts": r.start_rel_ns / 1000.0,
                    "dur": max(0.0, r.dur_ns / 1000.0),
                    "args": args,
                }
            )
    _progress_counters(events, progress_curves(run, round), procs)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "source": run.source,
            "target": str(run.meta.get("target", "")),
            "round": "median-makespan per group" if round is None else int(round),
        },
    }


def _progress_counters(events: list[dict[str, Any]], pc: pd.DataFrame, procs) -> None:
    """One counter track per task of each process ("progress M", ...): the
    fraction of the task's work done, at each of its checkpoints."""
    for pid, proc in enumerate(procs, start=1):
        sub = pc[(pc["workload"] == proc.workload) & (pc["group"] == proc.group)]
        for r in sub.itertuples(index=False):
            events.append(
                {
                    "ph": "C",
                    "pid": pid,
                    "name": f"progress {r.task}",
                    "ts": r.t_rel_ns / 1000.0,
                    "args": {"work": float(f"{r.work:.6f}")},
                }
            )


def trace_problems(trace: Mapping[str, Any]) -> list[str]:
    """What would keep a trace from loading or displaying correctly (empty: fine).

    Checks the Chrome trace-event structure that ui.perfetto.dev reads:
    a ``traceEvents`` list; every event a "M" (metadata) or "X" (complete)
    event with integer ``pid``/``tid``; every X event with a name and finite
    ``ts`` >= 0 and ``dur`` >= 0 (microseconds); a ``process_name`` for every
    pid and a ``thread_name`` for every (pid, tid) that has slices; and slices
    of one thread that nest (no partial overlap).
    """
    bad: list[str] = []
    ev = trace.get("traceEvents") if isinstance(trace, Mapping) else None
    if not isinstance(ev, list):
        return ["no traceEvents list"]
    procs, threads, slices = set(), set(), {}
    for i, e in enumerate(ev):
        if not isinstance(e, Mapping) or e.get("ph") not in ("M", "X", "C"):
            bad.append(f"event {i}: not a metadata, complete or counter event: {e!r:.80}")
            continue
        if e["ph"] == "C":
            bad.extend(_counter_problems(i, e))
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            bad.append(f"event {i}: pid/tid not integers")
            continue
        if e["ph"] == "M":
            name = (e.get("args") or {}).get("name")
            if e.get("name") == "process_name" and name:
                procs.add(e["pid"])
            elif e.get("name") == "thread_name" and name:
                threads.add((e["pid"], e["tid"]))
            continue
        ts, dur = e.get("ts"), e.get("dur")
        if not isinstance(e.get("name"), str) or not e["name"]:
            bad.append(f"event {i}: X event without a name")
        if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in (ts, dur)):
            bad.append(f"event {i}: ts/dur not finite non-negative numbers ({ts!r}, {dur!r})")
            continue
        slices.setdefault((e["pid"], e["tid"]), []).append((float(ts), float(ts) + float(dur)))
    for pid, tid in slices:
        if pid not in procs:
            bad.append(f"pid {pid}: no process_name")
        if (pid, tid) not in threads:
            bad.append(f"pid {pid} tid {tid}: no thread_name")
    # Partial overlaps on one thread; a tolerance of 1 ns absorbs the ns -> us
    # float conversion.
    eps = 1e-3
    for (pid, tid), ivs in slices.items():
        a = np.asarray(ivs, dtype=float)
        b, e = a[:, 0], a[:, 1]
        mask = (b[:, None] + eps < b[None, :]) & (b[None, :] + eps < e[:, None]) & (e[:, None] + eps < e[None, :])
        n = int(mask.sum())
        if n:
            bad.append(f"pid {pid} tid {tid}: {n} pair(s) of slices overlap without nesting")
    return bad


def _counter_problems(i: int, e: Mapping[str, Any]) -> list[str]:
    """A counter event needs an integer pid, a name, a finite ts >= 0 and numeric args."""
    ts, args = e.get("ts"), e.get("args")
    bad = []
    if not isinstance(e.get("pid"), int) or not isinstance(e.get("name"), str) or not e["name"]:
        bad.append(f"event {i}: counter without an integer pid or a name")
    if not (isinstance(ts, (int, float)) and math.isfinite(ts) and ts >= 0):
        bad.append(f"event {i}: counter ts not a finite non-negative number ({ts!r})")
    if not isinstance(args, Mapping) or not args or not all(isinstance(v, (int, float)) for v in args.values()):
        bad.append(f"event {i}: counter args not numbers")
    return bad


def write_perfetto(
    jsonl: str | os.PathLike[str],
    out: str | os.PathLike[str],
    info: Mapping[str, Any] | None = None,
    round: int | None = None,
) -> dict[str, Any]:
    """Read one runner output, write its Perfetto/Chrome trace to ``out``.

    ``info`` (e.g. the point id and its check status) is merged into the
    trace's ``otherData``.  Raises ValueError, writing nothing, when
    :func:`trace_problems` finds anything.  The file is written atomically.
    """
    run = read_run(jsonl)
    trace = perfetto_trace(run, round)
    trace["otherData"].update(
        {
            "time_unit": "ts and dur in microseconds, relative to each trial's host.submit_begin",
            "clock": run.meta.get("clock"),
            "emulated": bool(run.meta.get("emulated", False)),
            **dict(info or {}),
        }
    )
    problems = trace_problems(trace)
    if problems:
        raise ValueError(f"{jsonl}: invalid trace: " + "; ".join(problems[:5]))
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(trace, separators=(",", ":"), default=str) + "\n")
    tmp.replace(out)
    return trace
