"""Interval arithmetic on sets of half-open intervals [begin, end).

An *interval set* is anything convertible to an ``(n, 2)`` float array of
``(begin, end)`` pairs; pairs with ``end <= begin`` are empty and ignored.
Busy time of an engine is the length of the union of its intervals, so two
overlapping records on one engine (e.g. nested slices) are not counted twice.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

IntervalsLike = np.ndarray | Sequence[Sequence[float]] | Iterable[tuple[float, float]]


def as_array(intervals: IntervalsLike) -> np.ndarray:
    """Return an ``(n, 2)`` float array, dropping empty and NaN intervals."""
    arr = np.asarray(list(intervals) if not isinstance(intervals, np.ndarray) else intervals, dtype=float)
    if arr.size == 0:
        return np.empty((0, 2))
    arr = arr.reshape(-1, 2)
    keep = np.isfinite(arr).all(axis=1) & (arr[:, 1] > arr[:, 0])
    return arr[keep]


def normalize(intervals: IntervalsLike) -> np.ndarray:
    """Sorted, disjoint, non-touching intervals covering the same points."""
    arr = as_array(intervals)
    if len(arr) <= 1:
        return arr
    arr = arr[np.argsort(arr[:, 0], kind="stable")]
    # Running maximum of ends: an interval starts a new block when it begins
    # after everything before it has ended.
    run_end = np.maximum.accumulate(arr[:, 1])
    starts_block = np.empty(len(arr), dtype=bool)
    starts_block[0] = True
    starts_block[1:] = arr[1:, 0] > run_end[:-1]
    block = np.cumsum(starts_block) - 1
    begins = arr[starts_block, 0]
    ends = np.zeros(block[-1] + 1)
    np.maximum.at(ends, block, arr[:, 1])
    return np.column_stack([begins, ends])


def union_length(intervals: IntervalsLike) -> float:
    """Total length covered by at least one interval (busy time)."""
    merged = normalize(intervals)
    return float((merged[:, 1] - merged[:, 0]).sum())


def intersect(a: IntervalsLike, b: IntervalsLike) -> np.ndarray:
    """Intervals covered by both sets (normalized)."""
    ua, ub = normalize(a), normalize(b)
    if len(ua) == 0 or len(ub) == 0:
        return np.empty((0, 2))
    # All pairwise intersections; the sets are small (a handful of tasks per
    # engine per trial), so the O(n*m) broadcast is cheaper than a sweep.
    lo = np.maximum(ua[:, None, 0], ub[None, :, 0])
    hi = np.minimum(ua[:, None, 1], ub[None, :, 1])
    pairs = np.stack([lo.ravel(), hi.ravel()], axis=1)
    return normalize(pairs)


def intersection_length(a: IntervalsLike, b: IntervalsLike) -> float:
    """|a ∩ b|: time during which both sets are busy."""
    return union_length(intersect(a, b))


def pairwise_overlap(a: IntervalsLike, b: IntervalsLike) -> float:
    """|busy_a ∩ busy_b| / min(|busy_a|, |busy_b|), in [0, 1].

    1 means the shorter engine ran entirely while the other was busy.  NaN
    when either engine was never busy (no overlap is possible or meaningful).
    """
    la, lb = union_length(a), union_length(b)
    denom = min(la, lb)
    if denom <= 0:
        return math.nan
    return intersection_length(a, b) / denom


def utilisation(intervals: IntervalsLike, span: float) -> float:
    """busy / span, where span is the group's makespan T_X."""
    if not span or span <= 0 or not math.isfinite(span):
        return math.nan
    return union_length(intervals) / span


def subtract(a: IntervalsLike, b: IntervalsLike) -> np.ndarray:
    """Points of a not covered by b (normalized), e.g. host time outside its waits."""
    ua, ub = normalize(a), normalize(b)
    out: list[tuple[float, float]] = []
    for lo, hi in ua:
        cur = lo
        for blo, bhi in ub:
            if bhi <= cur or blo >= hi:
                continue
            if blo > cur:
                out.append((cur, blo))
            cur = max(cur, bhi)
            if cur >= hi:
                break
        if cur < hi:
            out.append((cur, hi))
    return normalize(out)


def clip(intervals: IntervalsLike, lo: float, hi: float) -> np.ndarray:
    """Restrict an interval set to the window [lo, hi)."""
    return intersect(intervals, [(lo, hi)])


def concurrency_length(sets: Sequence[IntervalsLike], at_least: int = 2) -> float:
    """Time during which at least ``at_least`` of the given sets are busy.

    Each set is first merged, so one engine's overlapping records count once.
    """
    edges: list[tuple[float, int]] = []
    for s in sets:
        for b, e in normalize(s):
            edges.append((b, 1))
            edges.append((e, -1))
    if not edges:
        return 0.0
    ev = np.array(edges)
    # Ends before begins at equal times: touching intervals do not overlap.
    order = np.lexsort((ev[:, 1], ev[:, 0]))
    ev = ev[order]
    depth = np.cumsum(ev[:, 1])
    widths = np.diff(ev[:, 0])
    return float(widths[depth[:-1] >= at_least].sum())
