"""The service mode (docs/serve.md): the runner's records as tidy tables,
per-replay metrics, and their summary with intervals.

Pure functions over tables; traces are :mod:`hxfuse.serve.trace`, the numpy
check :mod:`hxfuse.serve.check`, configuration :mod:`hxfuse.serve.config`, figures :mod:`hxfuse.serve.plots`.

Definitions (each has a known-answer test in tests/serve/test_serve_metrics.py):

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

from hxfuse.analysis import environment
from hxfuse.runner import jsonl
from hxfuse.runner.integrity import IntegrityError, sha256_problems, verify_end_record
from hxfuse.analysis.stats import hierarchical_bootstrap_median

# Metrics of one replay (one policy replaying one trace once).
METRICS = (
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "miss_rate",
    "throughput_rps",
    "pairing_wait_mean_ms",
    "pairing_wait_max_ms",
    "paired_share",
    "short_p99_ms",
    "compute_p99_ms",
    "admit_lag_max_ms",
)
# Ratios paired within a repetition (the same trace, the same minute).
RATIOS = (("p99_ms", "D", "B"), ("p99_ms", "D", "A"), ("short_p99_ms", "D", "B"), ("throughput_rps", "D", "B"))


# --------------------------------------------------------------------------
# the runner's records


def verify_sidecars(
    raws: Sequence[str | Path], provenances: Sequence[str | Path], npys: Sequence[str | Path | None]
) -> None:
    """Refuses raw files that differ from their provenance sidecars (the run
    wrapper's ``raw_sha256``, hxfuse.runner.runpoint), as aggregation does for
    the sweeps: the end record's digest is the runner's own and is rewritten
    as easily as the records, the sidecar's SHA-256 is not.  Raises
    IntegrityError naming every such file (and every unreadable sidecar)."""
    bad = []
    for raw, side, npy in zip(raws, provenances, npys, strict=True):
        try:
            stored = json.loads(Path(side).read_text()).get("raw_sha256")
        except (OSError, ValueError, AttributeError) as exc:
            bad.append(f"{side}: provenance sidecar unreadable ({exc})")
            continue
        bad += sha256_problems(stored, raw, npy)
    if bad:
        raise IntegrityError(
            "hxfuse: serve summary refused: raw files differ from their provenance sidecars "
            "(changed after the run; rerun those replicates with snakemake -f):\n  " + "\n  ".join(bad)
        )


def read_records(path: str | Path) -> list[dict]:
    """Every record of an hxserve output after its integrity check
    (IntegrityError), read by hxfuse.runner.jsonl, the one reader
    (IncompleteRunError naming the file and line of a malformed run)."""
    verify_end_record(path)
    return jsonl.read_records(path).records


def request_table(records: Iterable[dict], replicate: int = 0) -> pd.DataFrame:
    """One row per (replicate, rep, policy, request): the raw times, latency and miss."""
    rows = []
    for r in records:
        if r.get("record") != "request":
            continue
        rows.append(
            {
                "replicate": replicate,
                "rep": r["rep"],
                "policy": r["policy"],
                "id": r["id"],
                "kind": r["kind"],
                "size": r["size"],
                "input": r["input"],
                "arrival_ns": r["arrival_ns"],
                "deadline_ns": r["deadline_ns"],
                "admit_ns": r["admit_ns"],
                "launch_ns": r["launch_ns"],
                "start_ns": r["start_ns"],
                "end_ns": r["end_ns"],
                "pairing_wait_ns": r["pairing_wait_ns"],
                "paired_with": -1 if r["paired_with"] is None else r["paired_with"],
                "service_ns": sum(t["end_ns"] - t["begin_ns"] for t in r["tasks"]),
                "checksum": r["checksum"],
            }
        )
    df = pd.DataFrame(rows)
    if len(df):
        df["latency_ns"] = df["end_ns"] - df["arrival_ns"]
        df["missed"] = df["latency_ns"] > df["deadline_ns"]
    return df


def run_environment(records: Iterable[dict]) -> dict:
    """The machine around one runner invocation: cores, and other work sampled
    before and after (meta and end records; hxfuse.analysis.environment)."""
    recs = list(records)
    meta = next((r for r in recs if r.get("record") == "meta"), {})
    end = next((r for r in recs if r.get("record") == "end"), {})
    return environment.load_fields(meta, end)


def is_loaded(env: dict) -> bool:
    """Other work kept more than BUSY_PER_CORE (hxfuse.analysis.environment)
    of the cores busy before or after."""
    return environment.busy_loaded(environment.other_busy_max(env), env.get("online_cores"))


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
        out.append(
            {
                "replicate": rpl,
                "rep": rep,
                "policy": pol,
                "requests": len(g),
                "p50_ms": nearest_rank(lat, 50) / 1e6,
                "p95_ms": nearest_rank(lat, 95) / 1e6,
                "p99_ms": nearest_rank(lat, 99) / 1e6,
                "miss_rate": float(g["missed"].mean()),
                "throughput_rps": len(g) / span * 1e9 if span > 0 else math.nan,
                "pairing_wait_mean_ms": float(g["pairing_wait_ns"].mean()) / 1e6,
                "pairing_wait_max_ms": float(g["pairing_wait_ns"].max()) / 1e6,
                "paired_share": float((g["paired_with"] >= 0).mean()),
                "short_p99_ms": nearest_rank(short, 99) / 1e6,
                "compute_p99_ms": nearest_rank(comp, 99) / 1e6,
                # how late the dispatcher saw an arrival: its own scheduling delay
                "admit_lag_max_ms": float((g["admit_ns"] - g["arrival_ns"]).max()) / 1e6,
            }
        )
    return pd.DataFrame(out)


def summarize(replays: pd.DataFrame, n_resamples: int = 2000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
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
                e = hierarchical_bootstrap_median(
                    gp[m].to_numpy(float), gp["replicate"].to_numpy(), n_resamples, level, seed
                )
                rows.append({**base, "policy": pol, "metric": m, "median": e.value, "lo": e.lo, "hi": e.hi, "n": e.n})
        wide = g.pivot_table(index=["replicate", "rep"], columns="policy", values=list({r[0] for r in RATIOS}))
        for m, num, den in RATIOS:
            if (m, num) not in wide.columns or (m, den) not in wide.columns:
                continue
            ratio = (wide[(m, num)] / wide[(m, den)]).to_numpy(float)
            clusters = wide.index.get_level_values("replicate").to_numpy()
            e = hierarchical_bootstrap_median(ratio, clusters, n_resamples, level, seed)
            rows.append(
                {**base, "policy": f"{num}/{den}", "metric": m, "median": e.value, "lo": e.lo, "hi": e.hi, "n": e.n}
            )
    return pd.DataFrame(rows)
