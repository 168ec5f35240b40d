"""Progress evidence from the runner's checkpoints (docs/metrics.md, "Concurrent progress").

Every thread that runs part of a task records the runner's clock after each
block of its work with the cumulative fraction of the task's work done by
then (``workers[].checkpoints`` and ``checkpoint_work``, docs/runner.md).
Between two checkpoints the task's rate is taken as constant: the work of
the block over the time it took.  Unlike thread CPU time, a clock reading
after real work exists on every platform and counts progress, not
occupancy: a thread stalled on a DMA or preempted by another engine shows a
low rate over that interval.

A task *advances* over an interval when its rate there is at least
``threshold`` (``PROGRESS_THRESHOLD``, 50%) of its alone rate, the rate it
sustains when it runs by itself.  ``concurrent_progress_ns`` is the time
during which at least two tasks advance at once: on one shared core two
tasks take turns, so at any moment at most one of them runs at its alone
rate, however much their spans overlap.

A curve is ``(times, work)``: checkpoint times in ns and the cumulative work
fraction at each, non-decreasing.  A task is a sequence of curves, one per
thread (V with several vector workers has several; their fractions add up
to the task's).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

# Share of its alone rate at which a task counts as advancing.  Two tasks
# time-sharing one core get about half of it each on average but, at a
# scheduler time slice far longer than a checkpoint interval, each interval
# sees one of them near its full rate and the other near zero.
PROGRESS_THRESHOLD = 0.5

Curve = tuple[Sequence[float], Sequence[float]]


def _arrays(curve: Curve) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(curve[0], dtype=float)
    w = np.asarray(curve[1], dtype=float)
    if t.shape != w.shape or t.ndim != 1:
        raise ValueError("a progress curve needs as many work values as times")
    return t, w


def work_span_ns(task: Sequence[Curve]) -> float:
    """From the task's first checkpoint to its last (over its threads); NaN without checkpoints."""
    firsts = [t[0] for t, _ in map(_arrays, task) if len(t)]
    lasts = [t[-1] for t, _ in map(_arrays, task) if len(t)]
    return float(max(lasts) - min(firsts)) if firsts else math.nan


def mean_rate(task: Sequence[Curve]) -> float:
    """The task's work done (sum of its threads' last fractions) over its work span, per ns."""
    span = work_span_ns(task)
    done = sum(float(w[-1] - w[0]) for _, w in map(_arrays, task) if len(w) >= 2)
    if not math.isfinite(span) or span <= 0:
        return math.nan
    return done / span


def rate_at(task: Sequence[Curve], edges: np.ndarray) -> np.ndarray:
    """The task's rate (work fraction per ns) on each segment [edges[j], edges[j+1]):
    the sum of its threads' piecewise-constant rates, 0 outside a thread's checkpoints."""
    edges = np.asarray(edges, dtype=float)
    mid = (edges[:-1] + edges[1:]) / 2.0
    rate = np.zeros(len(mid))
    for curve in task:
        t, w = _arrays(curve)
        if len(t) < 2:
            continue
        dt = np.diff(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(dt > 0, np.diff(w) / dt, 0.0)
        j = np.searchsorted(t, mid, side="right") - 1
        inside = (j >= 0) & (j < len(r))
        rate[inside] += r[j[inside]]
    return rate


def advancing(task: Sequence[Curve], alone_rate: float, edges: np.ndarray, threshold: float) -> np.ndarray:
    """Per segment of *edges*: does the task advance (some work, at >= threshold x alone_rate)?"""
    rate = rate_at(task, edges)
    return (rate > 0) & (rate >= threshold * alone_rate)


def _edges(tasks: Sequence[Sequence[Curve]]) -> np.ndarray:
    times = [_arrays(c)[0] for task in tasks for c in task]
    return np.unique(np.concatenate(times)) if times else np.zeros(0)


def _usable(tasks: Sequence[Sequence[Curve]], alone_rates: Sequence[float]) -> bool:
    if len(tasks) != len(alone_rates):
        raise ValueError("one alone rate per task")
    rates_ok = all(math.isfinite(r) and r > 0 for r in alone_rates)
    return rates_ok and all(any(len(_arrays(c)[0]) >= 2 for c in task) for task in tasks)


def advancing_ns(task: Sequence[Curve], alone_rate: float, threshold: float = PROGRESS_THRESHOLD) -> float:
    """Time during which one task advances at >= threshold x its alone rate; NaN without
    checkpoints or a usable alone rate."""
    if not _usable([task], [alone_rate]):
        return math.nan
    edges = _edges([task])
    return float(np.diff(edges)[advancing(task, alone_rate, edges, threshold)].sum())


def concurrent_progress_ns(
    tasks: Sequence[Sequence[Curve]],
    alone_rates: Sequence[float],
    threshold: float = PROGRESS_THRESHOLD,
    at_least: int = 2,
) -> float:
    """Time during which at least *at_least* tasks each advance at >= threshold x their alone rate.

    Sweeps the union of every task's checkpoint times; on each segment
    between consecutive boundaries every task's rate is constant.  NaN when
    fewer tasks than *at_least* are given, a task has no two checkpoints,
    or an alone rate is not a positive number.
    """
    if len(tasks) < at_least or not _usable(tasks, alone_rates):
        return math.nan
    return float(sum(e - b for b, e in concurrent_segments(tasks, alone_rates, threshold, at_least)))


def concurrent_segments(
    tasks: Sequence[Sequence[Curve]],
    alone_rates: Sequence[float],
    threshold: float = PROGRESS_THRESHOLD,
    at_least: int = 2,
) -> list[tuple[float, float]]:
    """The intervals :func:`concurrent_progress_ns` adds up (adjacent ones
    merged); empty where it is NaN or 0."""
    if len(tasks) < at_least or not _usable(tasks, alone_rates):
        return []
    edges = _edges(tasks)
    count = np.zeros(len(edges) - 1, dtype=int)
    for task, alone in zip(tasks, alone_rates):
        count += advancing(task, alone, edges, threshold)
    out: list[tuple[float, float]] = []
    for j in np.flatnonzero(count >= at_least):
        b, e = float(edges[j]), float(edges[j + 1])
        if out and out[-1][1] == b:
            out[-1] = (out[-1][0], e)
        else:
            out.append((b, e))
    return out


def work_at(task: Sequence[Curve], times: np.ndarray) -> np.ndarray:
    """The task's cumulative work fraction at *times* (linear between checkpoints,
    constant before the first and after the last of each thread)."""
    times = np.asarray(times, dtype=float)
    out = np.zeros(len(times))
    for curve in task:
        t, w = _arrays(curve)
        if len(t):
            out += np.interp(times, t, w)
    return out


def progress_curve(task: Sequence[Curve]) -> tuple[np.ndarray, np.ndarray]:
    """The task's own curve: its work fraction at the union of its threads' checkpoints."""
    edges = _edges([task])
    return edges, work_at(task, edges)
