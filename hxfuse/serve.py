"""The service mode (docs/serve.md): arrival traces, the runner's records as
tidy tables, per-replay metrics, and their summary with intervals.

Pure functions over tables; the numpy check is :mod:`hxfuse.serve_check`,
configuration :mod:`hxfuse.serve_config`, figures :mod:`hxfuse.serve_plots`.

Definitions (each has a known-answer test in tests/test_serve_metrics.py):

- latency of a request: ``end_ns - arrival_ns`` (its last task's end on its
  engine minus its arrival in the trace; the dispatcher's own lateness in
  seeing the arrival counts against the policy, as it would for a server);
- percentile q of n latencies: the nearest-rank value, the smallest latency
  x with at least q% of the latencies <= x (sorted: element ceil(q n / 100));
- deadline miss rate: share of requests with latency > deadline_ns;
- throughput: completed requests / (last end - first arrival), per second;
- pairing wait: time a request spent as the oldest ready request, with the
  fused entry free, waiting for a partner (policy D; 0 elsewhere);
- short-task tail: the p99 latency of the bandwidth (decode-like) requests,
  the short ones a long compute request can hold up.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .integrity import verify_end_record
from .stats import hierarchical_bootstrap_median

KINDS = ("compute", "bandwidth")
POLICIES = ("A", "B", "D")
TRACE_COLUMNS = ("arrival_ns", "kind", "size", "deadline_ns")
MAX_SIZE = 4096  # kernels/src/serve.h SV_MAX_SIZE
# Metrics of one replay (one policy replaying one trace once).
METRICS = ("p50_ms", "p95_ms", "p99_ms", "miss_rate", "throughput_rps", "pairing_wait_mean_ms",
           "pairing_wait_max_ms", "paired_share", "short_p99_ms", "compute_p99_ms")
# Ratios paired within a repetition (the same trace, the same minute).
RATIOS = (("p99_ms", "D", "B"), ("p99_ms", "D", "A"), ("short_p99_ms", "D", "B"),
          ("throughput_rps", "D", "B"))


class ServeError(ValueError):
    """A bad trace, record or configuration, with the file and field at fault."""


# --------------------------------------------------------------------------
# traces


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


def make_trace(rate_per_s: float, n: int, seed: int, compute_share: float,
               compute_sizes: Sequence[int], bandwidth_sizes: Sequence[int],
               deadline_ms: dict) -> pd.DataFrame:
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
    df = pd.DataFrame({"arrival_ns": arrivals, "kind": kind, "size": np.where(compute, csz, bsz),
                       "deadline_ns": dl.astype(np.int64)})
    validate_trace(df, "generated trace")
    return df


def validate_trace(df: pd.DataFrame, where: str = "trace") -> pd.DataFrame:
    """The runner's rules (kernels/src/serve_trace.c), checked before any work."""
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
    checks = [("arrival_ns", df["arrival_ns"] < 0, "is negative"),
              ("size", (df["size"] < 1) | (df["size"] > MAX_SIZE), f"is not in [1, {MAX_SIZE}]"),
              ("deadline_ns", df["deadline_ns"] < 1, "is not positive")]
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


# --------------------------------------------------------------------------
# the runner's records


def read_records(jsonl: str | Path) -> list[dict]:
    """Every record of an hxserve output after its integrity check."""
    verify_end_record(jsonl)
    with open(jsonl) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def request_table(records: Iterable[dict], replicate: int = 0) -> pd.DataFrame:
    """One row per (replicate, rep, policy, request): the raw times, latency and miss."""
    rows = []
    for r in records:
        if r.get("record") != "request":
            continue
        rows.append({"replicate": replicate, "rep": r["rep"], "policy": r["policy"], "id": r["id"],
                     "kind": r["kind"], "size": r["size"], "input": r["input"],
                     "arrival_ns": r["arrival_ns"], "deadline_ns": r["deadline_ns"],
                     "admit_ns": r["admit_ns"], "launch_ns": r["launch_ns"], "start_ns": r["start_ns"],
                     "end_ns": r["end_ns"], "pairing_wait_ns": r["pairing_wait_ns"],
                     "paired_with": -1 if r["paired_with"] is None else r["paired_with"],
                     "service_ns": sum(t["end_ns"] - t["begin_ns"] for t in r["tasks"]),
                     "checksum": r["checksum"]})
    df = pd.DataFrame(rows)
    if len(df):
        df["latency_ns"] = df["end_ns"] - df["arrival_ns"]
        df["missed"] = df["latency_ns"] > df["deadline_ns"]
    return df


def nearest_rank(x: Sequence[float] | np.ndarray, q: float) -> float:
    """Percentile q (0 < q <= 100) by nearest rank; NaN for no data."""
    a = np.sort(np.asarray(x, dtype=float))
    if len(a) == 0:
        return math.nan
    k = max(1, math.ceil(q * len(a) / 100.0 - 1e-9))
    return float(a[k - 1])


def replay_metrics(requests: pd.DataFrame) -> pd.DataFrame:
    """One row per replay (replicate, rep, policy) with METRICS (ms, rates)."""
    out = []
    for (rpl, rep, pol), g in requests.groupby(["replicate", "rep", "policy"], sort=True):
        lat = g["latency_ns"].to_numpy(float)
        short = g.loc[g["kind"] == "bandwidth", "latency_ns"].to_numpy(float)
        comp = g.loc[g["kind"] == "compute", "latency_ns"].to_numpy(float)
        span = float(g["end_ns"].max() - g["arrival_ns"].min())
        out.append({"replicate": rpl, "rep": rep, "policy": pol, "requests": len(g),
                    "p50_ms": nearest_rank(lat, 50) / 1e6, "p95_ms": nearest_rank(lat, 95) / 1e6,
                    "p99_ms": nearest_rank(lat, 99) / 1e6,
                    "miss_rate": float(g["missed"].mean()),
                    "throughput_rps": len(g) / span * 1e9 if span > 0 else math.nan,
                    "pairing_wait_mean_ms": float(g["pairing_wait_ns"].mean()) / 1e6,
                    "pairing_wait_max_ms": float(g["pairing_wait_ns"].max()) / 1e6,
                    "paired_share": float((g["paired_with"] >= 0).mean()),
                    "short_p99_ms": nearest_rank(short, 99) / 1e6,
                    "compute_p99_ms": nearest_rank(comp, 99) / 1e6})
    return pd.DataFrame(out)


def summarize(replays: pd.DataFrame, n_resamples: int = 2000, level: float = 0.95,
              seed: int = 0) -> pd.DataFrame:
    """Per (point columns..., policy, metric): the median over replays with a
    two-level bootstrap interval (replicates, then repetitions within each);
    then the paired ratios RATIOS, one value per (replicate, rep)."""
    keys = [c for c in ("point", "rate", "window_us") if c in replays.columns]
    rows = []
    groups = replays.groupby(keys, sort=True) if keys else [((), replays)]
    for kv, g in groups:
        kv = kv if isinstance(kv, tuple) else (kv,)
        base = dict(zip(keys, kv))
        for pol, gp in g.groupby("policy", sort=True):
            for m in METRICS:
                e = hierarchical_bootstrap_median(gp[m].to_numpy(float), gp["replicate"].to_numpy(),
                                                  n_resamples, level, seed)
                rows.append({**base, "policy": pol, "metric": m, "median": e.value, "lo": e.lo,
                             "hi": e.hi, "n": e.n})
        wide = g.pivot_table(index=["replicate", "rep"], columns="policy", values=list({r[0] for r in RATIOS}))
        for m, num, den in RATIOS:
            if (m, num) not in wide.columns or (m, den) not in wide.columns:
                continue
            ratio = (wide[(m, num)] / wide[(m, den)]).to_numpy(float)
            clusters = wide.index.get_level_values("replicate").to_numpy()
            e = hierarchical_bootstrap_median(ratio, clusters, n_resamples, level, seed)
            rows.append({**base, "policy": f"{num}/{den}", "metric": m, "median": e.value, "lo": e.lo,
                         "hi": e.hi, "n": e.n})
    return pd.DataFrame(rows)
