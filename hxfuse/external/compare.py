"""The runner's fused group D against ONNX Runtime's own concurrency, per point.

Inputs: one point's ONNX Runtime raw files (``python -m hxfuse.external.ort``, groups
``A_ort``, ``B_ort``, ``B_ort_graph``, ``alone``) and the same point's hxrun
raw files, each side possibly several replicates (independent invocations).
Output: one tidy row per point x workload (:func:`compare`), written as CSV.

Two kinds of comparison (docs/ort.md):

* **Across processes, unpaired.**  D (runner) against B_ort and against A_ort
  come from different processes, so no round of one is paired with a round of
  the other.  The speedup of X over Y is the ratio of medians
  ``median(T_Y) / median(T_X)``; its interval comes from bootstrapping each
  side independently on two levels (replicates, then rounds within each
  drawn replicate) and taking percentiles of the ratio of the two resampled
  medians.  ``kernel_ratio_<T>`` (ORT's kernel time of task T alone over
  hxrun's, > 1: ORT's kernel is slower) is computed the same way, on the
  tasks' busy intervals: a faster or slower kernel is reported as its own
  variable and must not be read as a scheduling effect.
* **Within ONNX Runtime, paired.**  B_ort and B_ort_graph against A_ort run
  in the same rounds of the same process: per-round ratios, with the
  two-level bootstrap of :func:`hxfuse.analysis.stats.hierarchical_bootstrap_median`.

Every speedup gets its relation (``<``, ``>``, ``~``, ``?``) from
:func:`hxfuse.analysis.verdicts.relation` with the minimum effect.

Usage::

    python -m hxfuse.external.compare --ort O1.jsonl [O2 ...] --runner R1.jsonl [R2 ...] --out P.csv
"""

from __future__ import annotations

import argparse
import math
import sys
from os import PathLike
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from hxfuse.analysis.environment import BUSY_PER_CORE, LOADED_PER_CORE, environment
from hxfuse.runner.records import Run, read_run
from hxfuse.analysis.metrics import trial_metrics
from hxfuse.model import MATCH_TOLERANCE, ORT_GROUPS, WORKLOAD_TASKS
from hxfuse.analysis.stats import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Estimate,
    hierarchical_bootstrap_median,
    hierarchical_resample_medians,
    median_bias_bound,
    relation_decision,
)
from hxfuse.analysis.verdicts import DEFAULT_MIN_EFFECT, classify, relation
from hxfuse.external.gaps import trial_gaps

# What must agree between the two sides for them to be the same point
# (meta.tasks of both schemas).
SAME_POINT_KEYS = {
    "M": ("m", "n", "k", "precision"),
    "V": ("rows", "cols", "passes", "workers", "precision", "variant"),
    "D": ("rows", "row_bytes", "src_stride", "repeat"),
}


class ExternalInputError(ValueError):
    """The files cannot be compared (incomplete, failed, or not the same point)."""


# --------------------------------------------------------------------------
# statistics


# the resampled medians of stats.hierarchical_bootstrap_median, one per resample
hierarchical_medians = hierarchical_resample_medians


def unpaired_ratio(
    num: Sequence[float],
    num_clusters: Sequence[Any],
    den: Sequence[float],
    den_clusters: Sequence[Any],
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """median(num) / median(den) with a percentile interval from resampling the
    two sides independently (two levels each).  For the speedup of X over Y
    pass (T_Y, T_X).  ``n`` is the smaller side's sample count."""
    num_a, den_a = np.asarray(num, float), np.asarray(den, float)
    ok_n, ok_d = np.isfinite(num_a), np.isfinite(den_a)
    if not ok_n.any() or not ok_d.any():
        return Estimate(math.nan, math.nan, math.nan, 0)
    value = float(np.median(num_a[ok_n]) / np.median(den_a[ok_d]))
    mn = hierarchical_medians(num_a, num_clusters, n_resamples, seed)
    md = hierarchical_medians(den_a, den_clusters, n_resamples, seed + 7919)  # independent draws
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(mn / md, [alpha, 1.0 - alpha])
    return Estimate(value, float(lo), float(hi), int(min(ok_n.sum(), ok_d.sum())))


# --------------------------------------------------------------------------
# reading one point


def _as_runs(items: Iterable[Run | str | PathLike[str]]) -> list[Run]:
    runs = [it if isinstance(it, Run) else read_run(it) for it in items]
    for r in runs:
        status = r.end.get("status")
        if status != "ok":
            raise ExternalInputError(f"{r.source}: status {status!r}: a failed run is not compared")
    return runs


def _measured(runs: Sequence[Run]) -> pd.DataFrame:
    """Measured, non-empty trial metrics of every replicate, with ``replicate`` = file index."""
    frames = []
    for i, r in enumerate(runs):
        tm = trial_metrics(r)
        tm = tm[~tm["warmup"].astype(bool) & ~tm["empty"].astype(bool)].copy()
        tm["replicate"] = i
        frames.append(tm)
    return pd.concat(frames, ignore_index=True)


def _same_point(ort_runs: Sequence[Run], runner_runs: Sequence[Run]) -> None:
    ref = runner_runs[0]
    for r in [*ort_runs, *runner_runs[1:]]:
        # a duration-matched ONNX Runtime run rescaled its shapes on purpose:
        # the point it was given (meta.point_tasks) must be the runner's
        tasks_of = r.meta.get("point_tasks") or r.meta.get("tasks") or {}
        for task, keys in SAME_POINT_KEYS.items():
            a, b = (ref.meta.get("tasks") or {}).get(task), tasks_of.get(task)
            if a is None or b is None:
                continue
            diff = [f"{k} {a.get(k)} vs {b.get(k)}" for k in keys if a.get(k) != b.get(k)]
            if diff:
                raise ExternalInputError(
                    f"{r.source} is not the same point as {ref.source}: task {task}: {', '.join(diff)}"
                )
    for r in ort_runs:
        if "onnxruntime" not in str(r.meta.get("backend", "")):
            raise ExternalInputError(
                f"{r.source}: meta.backend {r.meta.get('backend')!r} is not an ONNX Runtime run "
                "(python -m hxfuse.external.ort)"
            )


def _samples(tm: pd.DataFrame, group: str, workload: str, col: str = "makespan_ns") -> tuple[np.ndarray, np.ndarray]:
    s = tm[(tm["group"] == group) & (tm["workload"] == workload)]
    return s[col].to_numpy(float), s["replicate"].to_numpy()


def _paired(tm: pd.DataFrame, x: str, y: str, workload: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-round T_y / T_x within each replicate (the speedup of x over y)."""
    s = tm[(tm["workload"] == workload) & tm["group"].isin([x, y])]
    wide = s.pivot_table(index=["replicate", "round"], columns="group", values="makespan_ns", aggfunc="median")
    if x not in wide or y not in wide:
        return np.array([]), np.array([])
    ratio = (wide[y] / wide[x]).dropna()
    return ratio.to_numpy(float), ratio.index.get_level_values("replicate").to_numpy()


def _env_max(runs: Sequence[Run], before: str, after: str) -> float:
    """Largest value over the replicates' meta[before] and end[after]; negative
    values mean unreadable and are skipped; NaN when none is known."""
    # hxfuse.analysis.environment reads the fields (NaN where unreadable)
    vals = [v for env in map(environment, runs) for v in (env[before], env[after]) if math.isfinite(v)]
    return float(max(vals)) if vals else math.nan


def _loaded(row: Mapping[str, Any], cores: Any) -> bool:
    """The rule of hxfuse.analysis.environment's findings, on either side: other
    processes kept more than BUSY_PER_CORE x cores busy, or (where that sample is
    missing) the load average exceeded LOADED_PER_CORE x cores."""
    if not isinstance(cores, (int, float)) or cores < 1:
        return False
    for side in ("ort", "runner"):
        busy, load = row[f"other_busy_cores_max_{side}"], row[f"load_max_{side}"]
        if math.isfinite(busy):
            if busy > BUSY_PER_CORE * cores:
                return True
        elif math.isfinite(load) and load > LOADED_PER_CORE * cores:
            return True
    return False


def _put(row: dict, name: str, est: Estimate, min_effect: float | None = None) -> None:
    row[name], row[f"{name}_lo"], row[f"{name}_hi"] = est.value, est.lo, est.hi
    if min_effect is not None:
        row[f"{name}_rel"] = relation(est, min_effect)


def compare(
    ort: Iterable[Run | str | PathLike[str]],
    runner: Iterable[Run | str | PathLike[str]],
    point: Mapping[str, Any] | None = None,
    min_effect: float = DEFAULT_MIN_EFFECT,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> pd.DataFrame:
    """One row per workload present on both sides; see the module docstring and
    docs/ort.md for every column.  *point* (e.g. sweep, point, target) is
    copied into every row."""
    ort_runs, runner_runs = _as_runs(ort), _as_runs(runner)
    if not ort_runs or not runner_runs:
        raise ExternalInputError("compare: needs at least one ONNX Runtime file and one hxrun file")
    _same_point(ort_runs, runner_runs)
    to, tr = _measured(ort_runs), _measured(runner_runs)
    workloads = [
        w
        for w in WORKLOAD_TASKS
        if ((to["workload"] == w) & (to["group"] == "B_ort")).any()
        and ((tr["workload"] == w) & (tr["group"] == "D")).any()
    ]
    if not workloads:
        raise ExternalInputError("no workload has both ONNX Runtime's B_ort and hxrun's D trials")
    kw = dict(n_resamples=n_resamples, level=level, seed=seed)
    rows = []
    for w in workloads:
        row: dict[str, Any] = dict(point or {}) | {
            "workload": w,
            "replicates_ort": len(ort_runs),
            "replicates_runner": len(runner_runs),
            "backend": ort_runs[0].meta.get("backend"),
            "min_effect": min_effect,
        }
        # the machine's state: the host is shared, and a loaded run is read with care
        for side, runs in (("ort", ort_runs), ("runner", runner_runs)):
            row[f"load_max_{side}"] = _env_max(runs, "load_average_before", "load_average_after")
            row[f"other_busy_cores_max_{side}"] = _env_max(runs, "other_busy_cores_before", "other_busy_cores_after")
        row["loaded"] = _loaded(row, ort_runs[0].meta.get("online_cores") or runner_runs[0].meta.get("online_cores"))
        t_d, c_d = _samples(tr, "D", w)
        row["rounds_runner"], row["rounds_ort"] = len(t_d), len(_samples(to, "B_ort", w)[0])
        row["T_D_ms"] = float(np.median(t_d)) / 1e6
        for g in ORT_GROUPS:
            t, _ = _samples(to, g, w)
            row[f"T_{g}_ms"] = float(np.median(t)) / 1e6 if len(t) else math.nan
        # across processes: unpaired
        for g in ("B_ort", "A_ort"):
            t_g, c_g = _samples(to, g, w)
            _put(row, f"speedup_D_over_{g}", unpaired_ratio(t_g, c_g, t_d, c_d, **kw), min_effect)
        # within ONNX Runtime: paired by round
        for g in ("B_ort", "B_ort_graph"):
            r, c = _paired(to, g, "A_ort", w)
            _put(row, f"speedup_{g}_over_A_ort", hierarchical_bootstrap_median(r, c, **kw), min_effect)
        for side, tm, g in (("B_ort", to, "B_ort"), ("D", tr, "D")):
            p, c = _samples(tm, g, w, "parallelism")
            _put(row, f"parallelism_{side}", hierarchical_bootstrap_median(p, c, **kw))
        # overlap efficiency of each backend against its own alone times
        for side, tm, g, t_x in (("B_ort", to, "B_ort", row["T_B_ort_ms"]), ("D", tr, "D", row["T_D_ms"])):
            alone = [np.median(_samples(tm, "alone", t, f"{t}_duration_ns")[0]) / 1e6 for t in WORKLOAD_TASKS[w]]
            serial, ideal = float(np.sum(alone)), float(np.max(alone))
            row[f"eta_{side}"] = (serial - t_x) / (serial - ideal) if serial > ideal else math.nan
        # kernel-time differences, their own variable
        for t in WORKLOAD_TASKS[w]:
            ko, co = _samples(to, "alone", t, f"{t}_duration_ns")
            kr, cr = _samples(tr, "alone", t, f"{t}_duration_ns")
            row[f"{t}_alone_ort_ms"] = float(np.median(ko)) / 1e6 if len(ko) else math.nan
            row[f"{t}_alone_runner_ms"] = float(np.median(kr)) / 1e6 if len(kr) else math.nan
            _put(row, f"kernel_ratio_{t}", unpaired_ratio(ko, co, kr, cr, **kw), min_effect)
        row |= schedule_columns(ort_runs, runner_runs, to, tr, w, row)
        row |= verdict_vs_b_ort(tr, w, row, min_effect, **kw)
        row |= gated(row, WORKLOAD_TASKS[w], min_effect)
        row["reading"] = reading(row, WORKLOAD_TASKS[w])
        rows.append(row)
    return pd.DataFrame(rows)


def schedule_columns(
    ort_runs: Sequence[Run], runner_runs: Sequence[Run], to: pd.DataFrame, tr: pd.DataFrame, w: str, row: Mapping
) -> dict[str, Any]:
    """What isolates scheduling from kernels (docs/ort.md): each task's
    alone-time matching error (ORT alone / runner alone - 1), the sizes
    duration matching chose, the point's task ratio on both sides, the
    hand-over gaps (:mod:`hxfuse.external.gaps`) of B_ort, A_ort and D, and
    D/B_ort per replicate pair (ORT replicate r was matched to, and run
    after, runner replicate r)."""
    tasks = WORKLOAD_TASKS[w]
    out: dict[str, Any] = {}
    for t in tasks:
        out[f"{t}_alone_error"] = row[f"{t}_alone_ort_ms"] / row[f"{t}_alone_runner_ms"] - 1.0
    out["duration_matched"] = all(abs(out[f"{t}_alone_error"]) <= MATCH_TOLERANCE for t in tasks)
    matching = ort_runs[0].meta.get("matching") or {}
    out["matching"] = (
        "; ".join(
            f"{t} {m['scaled']} {m['runner_size']}->{m['ort_size']}"
            + (f", {m['fine']['scaled']} {m['fine']['runner_size']}->{m['fine']['ort_size']}" if "fine" in m else "")
            for t, m in matching.items()
            if t in tasks
        )
        or "none (the point's own shapes)"
    )
    for side in ("ort", "runner"):
        a, b = (row[f"{t}_alone_{side}_ms"] for t in tasks[:2])
        out[f"task_ratio_{side}"] = a / b if b > 0 else math.nan
    for side, runs, g in (("B_ort", ort_runs, "B_ort"), ("A_ort", ort_runs, "A_ort"), ("D", runner_runs, "D")):
        gp = pd.concat([trial_gaps(r) for r in runs], ignore_index=True)
        gp = gp[(gp["group"] == g) & (gp["workload"] == w)]
        out[f"gap_{side}_ms"] = float(gp["gap_ns"].median()) / 1e6 if len(gp) else math.nan
        out[f"start_gap_{side}_ms"] = float(gp["start_gap_ns"].median()) / 1e6 if len(gp) else math.nan
    pairs = []
    for i in range(min(len(ort_runs), len(runner_runs))):
        b, d = (
            to[(to["replicate"] == i) & (to["group"] == "B_ort") & (to["workload"] == w)],
            tr[(tr["replicate"] == i) & (tr["group"] == "D") & (tr["workload"] == w)],
        )
        if len(b) and len(d):
            pairs.append(float(b["makespan_ns"].median() / d["makespan_ns"].median()))
    out["speedup_D_over_B_ort_pairs"] = " ".join(f"{p:.3f}" for p in pairs)
    out["pairing"] = "replicate r of each side (ORT run r matched to and run after runner run r)"
    return out


# the conditions that withhold a verdict on D vs B_ort, by name
GATE_CONDITIONS = {
    "duration_mismatch": "a task's alone time under ONNX Runtime differs from the runner's by more than 10%",
    "no_parallelism": "B_ort's own parallelism does not show it ran in parallel (interval not above 1 + min effect)",
}


def verdict_gate(row: Mapping[str, Any], tasks: Sequence[str], min_effect: float) -> list[tuple[str, str]]:
    """The conditions (name, what failed) that withhold a verdict on D vs
    B_ort: durations not matched within :data:`MATCH_TOLERANCE`, or B_ort's
    parallelism interval not above 1 + *min_effect*.  Empty: a verdict."""
    failed = []
    bad = [
        f"{t} {row[f'{t}_alone_ort_ms']:.3g} vs {row[f'{t}_alone_runner_ms']:.3g} ms ({row[f'{t}_alone_error']:+.0%})"
        for t in tasks
        if not abs(row[f"{t}_alone_error"]) <= MATCH_TOLERANCE  # NaN fails too
    ]
    if bad:
        failed.append(("duration_mismatch", "alone ORT vs runner not within 10%: " + ", ".join(bad)))
    lo = row.get("parallelism_B_ort_lo", math.nan)
    if not lo > 1.0 + min_effect:
        failed.append(
            (
                "no_parallelism",
                f"B_ort's parallelism {row.get('parallelism_B_ort', math.nan):.2f} "
                f"[{lo:.2f}, {row.get('parallelism_B_ort_hi', math.nan):.2f}] not above {1 + min_effect:.2f}",
            )
        )
    return failed


def gated(row: Mapping[str, Any], tasks: Sequence[str], min_effect: float) -> dict[str, Any]:
    """The verdict columns after :func:`verdict_gate`: withheld, naming each
    failed condition, or the reading table's verdict with ``verdict_withheld``
    ``none``."""
    failed = verdict_gate(row, tasks, min_effect)
    if not failed:
        return {"verdict_withheld": "none"}
    return {
        "verdict_vs_B_ort": "withheld: " + ", ".join(n for n, _ in failed),
        "verdict_vs_B_ort_key": "withheld",
        "verdict_vs_B_ort_reason": "; ".join(why for _, why in failed),
        "verdict_withheld": ",".join(n for n, _ in failed),
    }


def verdict_vs_b_ort(
    tr: pd.DataFrame, workload: str, row: Mapping[str, Any], min_effect: float, **kw: Any
) -> dict[str, Any]:
    """The reading table with B := B_ort: the runner's own paired D/A, D/C, C/A
    and D's progress and wall overlap, with D/B replaced by the unpaired
    D/B_ort.  The runner's relations are decided on their decision intervals
    (bootstrap joined with the t interval on the replicates' medians, widened
    by the interference bound), as in hxfuse.analysis.aggregate.  Inconclusive when
    the machine was loaded on either side or the replicates' own intervals
    disagree on a relation the row reads."""
    rel: dict[str, Estimate | None] = {
        "D/B": Estimate(
            row["speedup_D_over_B_ort"],
            row["speedup_D_over_B_ort_lo"],
            row["speedup_D_over_B_ort_hi"],
            int(row["rounds_runner"]),
        )
    }
    rep_ivs: dict[str, list[Estimate]] = {}
    for x, y in (("D", "A"), ("D", "C"), ("C", "A")):
        r, c = _paired(tr, x, y, workload)
        if len(r):
            d = relation_decision(r, c, median_bias_bound(r, min_effect), **kw)
            rel[f"{x}/{y}"], rep_ivs[f"{x}/{y}"] = d.decision, d.replicate_intervals
    p, c = _samples(tr, "D", workload, "parallelism")
    par = hierarchical_bootstrap_median(p, c, **kw) if len(p) else None
    d = tr[(tr["group"] == "D") & (tr["workload"] == workload)]
    wall = float(d["overlap_max"].median()) if "overlap_max" in d and len(d) else None
    disturb = ["the machine was loaded during the ONNX Runtime or the runner's runs"] if row.get("loaded") else []
    v = classify(
        rel,
        par,
        wall,
        min_effect=min_effect,
        replicate_intervals=rep_ivs,
        disturbances=disturb,
    )
    return {
        "verdict_vs_B_ort": v.result,
        "verdict_vs_B_ort_key": v.key,
        "verdict_vs_B_ort_reason": "; ".join(v.reasons),
    }


def _fmt(row: Mapping[str, Any], name: str) -> str:
    return f"{row[name]:.2f} [{row[name + '_lo']:.2f}, {row[name + '_hi']:.2f}]"


def reading(row: Mapping[str, Any], tasks: Sequence[str]) -> str:
    """One sentence per comparison, in the relation notation of the verdicts."""
    rel = {
        "<": "faster than",
        ">": "slower than",
        "~": "no different from",
        "?": "undetermined against",
        None: "not measured against",
    }
    out = [
        f"D is {rel[row['speedup_D_over_B_ort_rel']]} B_ort ({_fmt(row, 'speedup_D_over_B_ort')})",
        f"B_ort is {rel[row['speedup_B_ort_over_A_ort_rel']]} A_ort "
        f"({_fmt(row, 'speedup_B_ort_over_A_ort')}): ONNX Runtime's sessions "
        + {"<": "overlap", "~": "gain nothing from concurrency", ">": "lose from concurrency"}.get(
            row["speedup_B_ort_over_A_ort_rel"], "may or may not gain from concurrency"
        ),
        f"B_ort_graph is {rel[row['speedup_B_ort_graph_over_A_ort_rel']]} A_ort "
        f"({_fmt(row, 'speedup_B_ort_graph_over_A_ort')})",
    ]
    differ = [f"{t} x{row[f'kernel_ratio_{t}']:.2f}" for t in tasks if row.get(f"kernel_ratio_{t}_rel") in ("<", ">")]
    if differ:
        out.append(
            "ORT's kernels alone differ from hxrun's (ORT / hxrun time: "
            + ", ".join(differ)
            + "), so D vs B_ort mixes kernel speed with scheduling; compare eta_D "
            f"{row['eta_D']:.2f} with eta_B_ort {row['eta_B_ort']:.2f}"
        )
    if row.get("loaded"):
        out.append(
            f"the machine was loaded (load average up to {row['load_max_ort']:.2f} / "
            f"{row['load_max_runner']:.2f}, other busy cores up to {row['other_busy_cores_max_ort']:.2f} / "
            f"{row['other_busy_cores_max_runner']:.2f}, ORT / hxrun): timings disturbed"
        )
    return "; ".join(out)


def write_csv(df: pd.DataFrame, path: str | PathLike[str]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, float_format="%.6g")


def concat_csv(paths: Iterable[str | PathLike[str]], out: str | PathLike[str]) -> pd.DataFrame:
    """The per-point tables as one (the pipeline's results/<target>/external.csv)."""
    frames = [pd.read_csv(p) for p in paths]
    if not frames:
        raise ExternalInputError("concat_csv: no per-point table")
    df = pd.concat(frames, ignore_index=True)
    write_csv(df, out)
    return df


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m hxfuse.external.compare",
        description="Compare one point's hxrun D with ONNX Runtime's A_ort/B_ort.",
    )
    ap.add_argument("--ort", nargs="+", required=True, help="ONNX Runtime raw files (replicates)")
    ap.add_argument("--runner", nargs="+", required=True, help="hxrun raw files of the same point (replicates)")
    ap.add_argument("--out", required=True, help="CSV output")
    ap.add_argument("--min-effect", type=float, default=DEFAULT_MIN_EFFECT)
    ap.add_argument("--bootstrap", type=int, default=DEFAULT_RESAMPLES)
    ap.add_argument("--label", action="append", default=[], help="KEY=VALUE copied into every row")
    ns = ap.parse_args(argv)
    try:
        labels = dict(lab.split("=", 1) for lab in ns.label)
        df = compare(ns.ort, ns.runner, labels, ns.min_effect, ns.bootstrap)
    except (ExternalInputError, OSError, ValueError) as exc:
        print(f"hxfuse.external.compare: error: {exc}", file=sys.stderr)
        return 2
    write_csv(df, ns.out)
    for _, r in df.iterrows():
        print(f"{r['workload']}: {r['reading']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
