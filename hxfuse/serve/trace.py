"""Arrival traces of the service mode (docs/serve.md): the seeded Poisson
generator, and the CSV the runner reads, validated with the runner's own rules
(kernels/hxserve/serve_trace.c) before any work.  Its own module so that the
trace rule reruns only when this code changes."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

KINDS = ("compute", "bandwidth")
POLICIES = ("A", "B", "D")
TRACE_COLUMNS = ("arrival_ns", "kind", "size", "deadline_ns")
MAX_SIZE = 4096  # kernels/hxserve/serve.h SV_MAX_SIZE


class ServeError(ValueError):
    """A bad trace, record or configuration, with the file and field at fault."""


def poisson_arrivals(rate_per_s: float, n: int, seed: int) -> np.ndarray:
    """n arrival times (ns, int64, non-decreasing) of a Poisson process of the
    given rate: exponential gaps of mean 1/rate from a seeded generator; the
    first arrival is one gap after time 0."""
    if not (rate_per_s > 0 and math.isfinite(rate_per_s)):
        raise ServeError(f"rate: {rate_per_s!r} is not a positive number of requests per second")
    if n < 1:
        raise ServeError(f"requests: {n!r} must be at least 1")
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1e9 / rate_per_s, size=n)
    return np.floor(np.cumsum(gaps)).astype(np.int64)


def make_trace(
    rate_per_s: float,
    n: int,
    seed: int,
    compute_share: float,
    compute_sizes: Sequence[int],
    bandwidth_sizes: Sequence[int],
    deadline_ms: dict,
) -> pd.DataFrame:
    """A seeded trace: Poisson arrivals, each request compute with probability
    ``compute_share`` (else bandwidth), its size drawn uniformly from its
    kind's sizes, its deadline its kind's latency budget."""
    arrivals = poisson_arrivals(rate_per_s, n, seed)
    # a second stream for the mix, so the arrivals of a seed do not depend on it
    rng = np.random.default_rng([seed, 1])
    compute = rng.random(n) < compute_share
    csz = rng.choice(np.asarray(compute_sizes, dtype=np.int64), size=n)
    bsz = rng.choice(np.asarray(bandwidth_sizes, dtype=np.int64), size=n)
    kind = np.where(compute, "compute", "bandwidth")
    dl = np.where(compute, int(round(deadline_ms["compute"] * 1e6)), int(round(deadline_ms["bandwidth"] * 1e6)))
    df = pd.DataFrame(
        {"arrival_ns": arrivals, "kind": kind, "size": np.where(compute, csz, bsz), "deadline_ns": dl.astype(np.int64)}
    )
    validate_trace(df, "generated trace")
    return df


def validate_trace(df: pd.DataFrame, where: str = "trace") -> pd.DataFrame:
    """The runner's rules (kernels/hxserve/serve_trace.c), checked before any work."""
    if tuple(df.columns) != TRACE_COLUMNS:
        raise ServeError(f"{where}: columns must be {','.join(TRACE_COLUMNS)} (got {','.join(map(str, df.columns))})")
    if len(df) == 0:
        raise ServeError(f"{where}: no requests")
    for col in ("arrival_ns", "size", "deadline_ns"):
        if not pd.api.types.is_integer_dtype(df[col]):
            raise ServeError(f"{where}: {col} must be integers")
    bad = [(i, k) for i, k in enumerate(df["kind"]) if k not in KINDS]
    if bad:
        raise ServeError(f"{where}: row {bad[0][0] + 1}: kind {bad[0][1]!r} is not compute or bandwidth")
    checks = [
        ("arrival_ns", df["arrival_ns"] < 0, "is negative"),
        ("size", (df["size"] < 1) | (df["size"] > MAX_SIZE), f"is not in [1, {MAX_SIZE}]"),
        ("deadline_ns", df["deadline_ns"] < 1, "is not positive"),
    ]
    for col, mask, what in checks:
        if mask.any():
            i = int(np.flatnonzero(mask.to_numpy())[0])
            raise ServeError(f"{where}: row {i + 1}: {col} {df[col].iloc[i]} {what}")
    dec = np.flatnonzero(np.diff(df["arrival_ns"].to_numpy()) < 0)
    if len(dec):
        raise ServeError(f"{where}: row {dec[0] + 2}: arrival_ns decreases (arrivals must not decrease)")
    return df


def write_trace(df: pd.DataFrame, path: str | Path) -> None:
    validate_trace(df, str(path))
    df.to_csv(path, index=False, lineterminator="\n")


def read_trace(path: str | Path) -> pd.DataFrame:
    try:
        df = pd.read_csv(path, dtype={"kind": str})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ServeError(f"{path}: cannot read the trace: {exc}") from None
    return validate_trace(df, str(path))
