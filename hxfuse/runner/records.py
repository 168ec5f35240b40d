"""Reading the runner's JSON Lines output (docs/runner.md) into tidy tables.

This is the only module of the analysis that touches files.  The lines are
read and checked by hxfuse.runner.jsonl (the one reader of the runner's output: a
malformed line, a missing meta or end record raise IncompleteRunError naming
the file and line); :func:`parse_records` builds the tables from the text
lines so that tests and other callers can stay in memory.

Tables produced (joined on ``trial_id``, which numbers the trial records in file
order starting at 0):

``trials``  one row per trial record, host/device objects flattened
            (``host_submit_begin``, ..., ``device_entry_begin``, ...).
``tasks``   one row per trial x task record, with the trial's keys repeated so
            the table can be filtered without a join.  ``launch`` (when the
            task was handed to its engine), ``cpu_ns`` (thread CPU time of its
            work, summed over its threads) and ``cpu_begin``/``cpu_end`` (core
            ids) are NaN in outputs of runners older than schema 2.
``workers`` one row per thread that ran part of a task (V with several vector
            workers has one row per worker); a task record without a
            ``workers`` list (older runners) gives one row copied from the
            task itself.  Engine busy time and the timelines use this table.
            ``checkpoints`` and ``checkpoint_work`` are tuples (the thread's
            progress checkpoints: runner-clock times and the cumulative
            fraction of the task's work done by each); empty where the runner
            recorded none (older runners, ``--checkpoints 0``, empty tasks).
``waits``   one row per wait record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from os import PathLike
from typing import Any, Iterable

import pandas as pd

from hxfuse.runner import jsonl
from hxfuse.runner.jsonl import IncompleteRunError

# Columns of the trial keys that are copied into the tasks and waits tables.
TRIAL_KEYS = ["trial_id", "round", "seq", "warmup", "workload", "group", "empty"]

TRIAL_COLUMNS = TRIAL_KEYS + [
    "host_submit_begin",
    "host_submit_end",
    "host_wait_begin",
    "host_wait_end",
    "host_submit_total_ns",
    "host_wait_total_ns",
    "host_requests",
    "host_submit_max_ns",
    "host_cpu",
    "device_entry_begin",
    "device_entry_end",
    "scratch_peak_bytes",
    "makespan_ns",
    "checksums_ok",
    # another client of the NPU asked for its resources back during the trial
    # (runner ``preempted``; False where the file has no such field)
    "preempted",
    # the trial's interference evidence (runner ``interference``), NaN where
    # the file has none (older runners, the ONNX Runtime harness) or the
    # platform cannot tell (QuRT writes null)
    "involuntary_switches",
    "other_cpu_ns",
    "cores_busy_ns",
    "interference_span_ns",
]
TASK_COLUMNS = TRIAL_KEYS + [
    "task",
    "engine",
    "launch",
    "begin",
    "end",
    "host_seen",
    "checksum",
    "cpu_ns",
    "cpu_begin",
    "cpu_end",
    "involuntary_switches",
]
WORKER_COLUMNS = TRIAL_KEYS + [
    "task",
    "engine",
    "begin",
    "end",
    "cpu_ns",
    "cpu_begin",
    "cpu_end",
    "checkpoints",
    "checkpoint_work",
]
WAIT_COLUMNS = TRIAL_KEYS + ["who", "on", "begin", "end"]
# A task's profiled nodes, where the file has them (the ONNX Runtime harness,
# docs/ort.md: ``tasks[].nodes`` = [name, lane, begin, end]); ``lane`` is the
# thread that ran the node.
NODE_COLUMNS = TRIAL_KEYS + ["task", "name", "lane", "begin", "end"]


@dataclass(frozen=True)
class Run:
    """One runner output file (one sweep point)."""

    meta: dict[str, Any]
    trials: pd.DataFrame
    tasks: pd.DataFrame
    waits: pd.DataFrame
    workers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=WORKER_COLUMNS))
    nodes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=NODE_COLUMNS))
    verify: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] = field(default_factory=dict)
    source: str = "<memory>"


def read_run(path: str | PathLike[str]) -> Run:
    """Read a runner JSON Lines file.

    Raises :class:`IncompleteRunError` naming the file and line when a line is
    not a JSON object with a ``record`` field, when the first record is not
    ``meta``, or when there is no ``end`` record (the runner was killed).
    """
    return run_of(jsonl.read_records(path))


def _num(value: Any) -> float:
    """Timestamps may be null (e.g. ``device`` in groups A/B); keep them as NaN."""
    return math.nan if value is None else value


def _max_submit(host: dict[str, Any]) -> float:
    """Longest single submit of the trial (``host.submits``, schema 2); NaN
    where the runner did not record the individual submits."""
    subs = host.get("submits")
    if isinstance(subs, list) and subs:
        return float(max(subs))
    return math.nan


def _worker_rows(keys: dict[str, Any], t: dict[str, Any]) -> list[dict[str, Any]]:
    """The threads that ran one task: its ``workers`` list, or the task itself."""
    workers = t.get("workers")
    if not isinstance(workers, list) or not workers:
        workers = [t]
    return [
        keys
        | {
            "task": str(t["task"]),
            "engine": str(w["engine"]),
            "begin": w["begin"],
            "end": w["end"],
            "cpu_ns": _num(w.get("cpu_ns")),
            "cpu_begin": _num(w.get("cpu_begin")),
            "cpu_end": _num(w.get("cpu_end")),
            "checkpoints": _series(w.get("checkpoints")),
            "checkpoint_work": _series(w.get("checkpoint_work")),
        }
        for w in workers
    ]


def _series(value: Any) -> tuple[float, ...]:
    """A list of numbers as a tuple (hashable, immutable); () when absent."""
    if not isinstance(value, list):
        return ()
    return tuple(float(v) for v in value)


def parse_records(lines: Iterable[str], source: str = "<memory>") -> Run:
    """Build a :class:`Run` from the text lines of a runner output."""
    return run_of(jsonl.parse(lines, source))


def _trial_keys(rec: dict[str, Any], trial_id: int) -> dict[str, Any]:
    """The columns that name a trial, shared by all its rows."""
    return {
        "trial_id": trial_id,
        "round": int(rec["round"]),
        "seq": int(rec.get("seq", -1)),
        "warmup": bool(rec["warmup"]),
        "workload": str(rec["workload"]),
        "group": str(rec["group"]),
        "empty": bool(rec.get("empty", False)),
    }


def _trial_row(keys: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    """One row of ``Run.trials``."""
    host = rec["host"]
    device = rec.get("device") or {}
    interference = rec.get("interference") or {}
    return keys | {
        "host_submit_begin": host["submit_begin"],
        "host_submit_end": host["submit_end"],
        "host_wait_begin": host["wait_begin"],
        "host_wait_end": host["wait_end"],
        # Sums over the trial's requests (A submits and
        # waits once per task, so the begin/end spans of
        # submit and wait interleave there).
        "host_submit_total_ns": _num(host.get("submit_ns")),
        "host_wait_total_ns": _num(host.get("wait_ns")),
        "host_requests": _num(host.get("requests")),
        "host_submit_max_ns": _max_submit(host),
        "host_cpu": _num(host.get("cpu")),
        "device_entry_begin": _num(device.get("entry_begin")),
        "device_entry_end": _num(device.get("entry_end")),
        "scratch_peak_bytes": _num(rec.get("scratch_peak_bytes")),
        "makespan_ns": rec["makespan_ns"],
        "checksums_ok": bool(rec["checksums_ok"]),
        "preempted": bool(rec.get("preempted", False)),
        "involuntary_switches": _num(interference.get("involuntary_switches")),
        "other_cpu_ns": _num(interference.get("other_cpu_ns")),
        "cores_busy_ns": _num(interference.get("cores_busy_ns")),
        "interference_span_ns": _num(interference.get("span_ns")),
    }


def _task_row(keys: dict[str, Any], t: dict[str, Any]) -> dict[str, Any]:
    """One row of ``Run.tasks``."""
    return keys | {
        "task": str(t["task"]),
        "engine": str(t["engine"]),
        "launch": _num(t.get("launch")),
        "begin": t["begin"],
        "end": t["end"],
        "host_seen": _num(t.get("host_seen")),
        "checksum": t.get("checksum"),
        "cpu_ns": _num(t.get("cpu_ns")),
        "cpu_begin": _num(t.get("cpu_begin")),
        "cpu_end": _num(t.get("cpu_end")),
        "involuntary_switches": _num(t.get("involuntary_switches")),
    }


def _node_rows(keys: dict[str, Any], t: dict[str, Any]) -> list[dict[str, Any]]:
    """The profiled nodes of one task (rows of ``Run.nodes``)."""
    return [
        keys | {"task": str(t["task"]), "name": str(n[0]), "lane": str(n[1]), "begin": n[2], "end": n[3]}
        for n in t.get("nodes") or ()
    ]


def _wait_row(keys: dict[str, Any], w: dict[str, Any]) -> dict[str, Any]:
    """One row of ``Run.waits``."""
    return keys | {"who": str(w["who"]), "on": str(w["on"]), "begin": w["begin"], "end": w["end"]}


def _add_trial(rec: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> None:
    """Appends the rows of one trial record to *rows* (trials, tasks, workers, nodes, waits)."""
    keys = _trial_keys(rec, len(rows["trials"]))
    rows["trials"].append(_trial_row(keys, rec))
    for t in rec.get("tasks") or []:
        rows["tasks"].append(_task_row(keys, t))
        rows["workers"].extend(_worker_rows(keys, t))
        rows["nodes"].extend(_node_rows(keys, t))
    for w in rec.get("waits") or []:
        rows["waits"].append(_wait_row(keys, w))


def run_of(records: jsonl.Records) -> Run:
    """Build a :class:`Run` from the records of a runner output."""
    source = records.source
    meta = {k: v for k, v in records.meta.items() if k != "record"}

    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in ("trials", "tasks", "waits", "workers", "nodes")}
    verify: list[dict[str, Any]] = []

    for lineno, rec in records.lines[1:]:
        kind = rec["record"]
        if kind == "trial":
            try:
                _add_trial(rec, rows)
            except (KeyError, TypeError, ValueError) as exc:
                raise IncompleteRunError(
                    f"{source}:{lineno}: malformed trial record ({type(exc).__name__}: {exc})"
                ) from None
        elif kind == "verify":
            verify.append({k: v for k, v in rec.items() if k != "record"})
        # meta and end: checked by the reader; unknown record kinds from a
        # newer runner are ignored on purpose, so an added record type does
        # not invalidate old analysis code.
    end = {k: v for k, v in records.end.items() if k != "record"}

    trials = pd.DataFrame(rows["trials"], columns=TRIAL_COLUMNS)
    tasks = pd.DataFrame(rows["tasks"], columns=TASK_COLUMNS)
    waits = pd.DataFrame(rows["waits"], columns=WAIT_COLUMNS)
    workers = pd.DataFrame(rows["workers"], columns=WORKER_COLUMNS)
    nodes = pd.DataFrame(rows["nodes"], columns=NODE_COLUMNS)
    for df in (trials, tasks, waits, workers, nodes):
        _fix_dtypes(df)
    return Run(
        meta=meta,
        trials=trials,
        tasks=tasks,
        waits=waits,
        workers=workers,
        verify=verify,
        end=end,
        source=source,
        nodes=nodes,
    )


def _fix_dtypes(df: pd.DataFrame) -> None:
    # Empty tables would otherwise get object columns, which break arithmetic
    # in the metrics (e.g. a run with no wait records).
    ints = {"trial_id", "round", "seq"}
    bools = {"warmup", "empty", "checksums_ok", "preempted"}
    strs = {"workload", "group", "task", "engine", "who", "on", "checksum", "name", "lane"}
    seqs = {"checkpoints", "checkpoint_work"}
    for col in df.columns:
        if col in seqs:
            df[col] = df[col].astype(object)
        elif col in ints:
            df[col] = df[col].astype("int64")
        elif col in bools:
            df[col] = df[col].astype(bool)
        elif col in strs:
            df[col] = df[col].astype(object)
        else:
            df[col] = pd.to_numeric(df[col]).astype("float64")
