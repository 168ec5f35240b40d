"""The per-trial table and the per-point summary (pipeline stage ``aggregate``).

``trial_table`` turns one runner output (one sweep point) into the tidy
per-trial table; concatenate the tables of all points and pass them to
``summarize``.  Every column is documented in docs/columns.md.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from . import metrics as mx
from . import stats as st
from . import verdicts as vd
from .io import Run

DEFAULT_CHECK_COL = "check_ok"

# Meta fields copied onto every trial row (provenance and the k of the bound).
META_COLUMNS = ("target", "kernels", "online_cores", "engines_exceed_cores", "early_completion", "wait")

_TASK_SUFFIXES = (
    "duration_ns", "completion_ns", "host_seen_latency_ns", "latency_no_early_ns", "bytes",
    "bandwidth_GBps", "slowdown", "np",
)
_FIXED = {
    "trial_id", "round", "seq", "warmup", "workload", "group", "empty", "makespan_ns", "device_ns",
    "host_submit_ns", "host_wait_ns", "host_requests", "host_overhead_ns", "device_start_ns", "scratch_peak_bytes",
    "checksums_ok", "n_tasks", "prep_ns", "end_to_end_ns", "overlap_max", "concurrent_ns", "stp",
    "antt", "fairness", "k_engines", *META_COLUMNS,
} | {f"{t}_{s}" for t in mx.TASKS for s in _TASK_SUFFIXES}


def is_metric_column(name: str) -> bool:
    """True for columns that trial_table computes (everything else is a point parameter)."""
    return (
        name in _FIXED
        or (name.startswith("busy_") and name.endswith("_ns"))
        or name.startswith("util_")
        or name.startswith("overlap_")
    )


def _scalar(v: Any) -> Any:
    # Point parameters such as a shape list become one JSON string so the
    # column stays hashable for grouping and readable in CSV.
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True)
    return v


def trial_table(run: Run, point: Mapping[str, Any]) -> pd.DataFrame:
    """Tidy per-trial table of one point: point parameters, metrics, slowdowns, provenance.

    Warm-up trials are kept and flagged (``warmup``); every statistic skips them.
    """
    tm = mx.trial_metrics(run)
    # A point may sweep a runner option that meta also records (e.g. the
    # wait strategy): the point's value is kept and the meta copy dropped.
    # Names of computed metrics cannot be reused.
    clash = [k for k in point if k not in META_COLUMNS and (k in tm.columns or is_metric_column(k))]
    if clash:
        raise ValueError(f"point parameter names clash with metric columns: {clash}")
    alone = mx.alone_durations(tm)
    sd = mx.slowdowns(tm, alone)
    meta = run.meta
    extra = pd.DataFrame(
        {c: [_scalar(meta.get(c))] * len(tm) for c in META_COLUMNS if c not in point}, index=tm.index
    )
    cores = meta.get("online_cores")
    extra["k_engines"] = tm["n_tasks"].map(lambda n: mx.engines_available(int(n), cores))
    params = pd.DataFrame({k: [_scalar(v)] * len(tm) for k, v in point.items()}, index=tm.index)
    return pd.concat([params, tm, sd, extra], axis=1)


def infer_point_cols(trials: pd.DataFrame, check_col: str = DEFAULT_CHECK_COL) -> list[str]:
    """Columns that identify a point: those that are neither metrics nor the check column."""
    return [c for c in trials.columns if not is_metric_column(c) and c != check_col]


def _point_failed(df: pd.DataFrame, check_col: str) -> str:
    """Reason the point must stay out of every speedup, or '' when it is fine."""
    reasons = []
    if check_col in df:
        bad = df[check_col].isna() | ~df[check_col].fillna(False).astype(bool)
        if bad.any():
            reasons.append(f"{check_col} is false")
    if "checksums_ok" in df and not df["checksums_ok"].astype(bool).all():
        n = int((~df["checksums_ok"].astype(bool)).sum())
        reasons.append(f"{n} trial(s) with a checksum mismatch")
    return "; ".join(reasons)


def failed_points(
    trials: pd.DataFrame,
    point_cols: Sequence[str] | None = None,
    check_col: str = DEFAULT_CHECK_COL,
) -> pd.DataFrame:
    """One row per point excluded from speedups, with the reason."""
    point_cols = list(point_cols) if point_cols is not None else infer_point_cols(trials, check_col)
    rows = []
    for key, df in _groups(trials, point_cols):
        reason = _point_failed(df, check_col)
        if reason:
            rows.append(dict(zip(point_cols, key)) | {"excluded_reason": reason})
    return pd.DataFrame(rows, columns=[*point_cols, "excluded_reason"])


def _groups(df: pd.DataFrame, cols: Sequence[str]) -> Iterable[tuple[tuple, pd.DataFrame]]:
    if not cols:
        yield (), df
        return
    for key, g in df.groupby(list(cols), dropna=False, sort=False):
        yield (key if isinstance(key, tuple) else (key,)), g


def _median(s: pd.Series) -> float:
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.median()) if len(s) else math.nan


def summarize(
    trials: pd.DataFrame,
    point_cols: Sequence[str] | None = None,
    check_col: str = DEFAULT_CHECK_COL,
    n_resamples: int = st.DEFAULT_RESAMPLES,
    level: float = st.DEFAULT_LEVEL,
    seed: int = st.DEFAULT_SEED,
    cv_threshold: float = 0.10,
    overlap_threshold: float = vd.DEFAULT_OVERLAP_THRESHOLD,
) -> pd.DataFrame:
    """One row per point x workload x group (A-D and the alone runs).

    ``trials`` is the concatenation of ``trial_table`` outputs, optionally with
    a boolean ``check_col`` from the correctness check.  Points whose check
    failed (or that have a trial checksum mismatch) keep their descriptive
    statistics but get no speedup, overlap efficiency or verdict:
    ``point_ok`` is False and ``excluded_reason`` says why.  The verdict sits
    on the D row of each point x workload (see also :func:`verdict_table`).
    """
    point_cols = list(point_cols) if point_cols is not None else infer_point_cols(trials, check_col)
    boot = dict(n_resamples=n_resamples, level=level, seed=seed)
    engine_cols = [
        c for c in trials.columns
        if (c.startswith("busy_") and c.endswith("_ns")) or c.startswith("util_") or c.startswith("overlap_")
    ]
    per_task_cols = [
        f"{t}_{s}" for t in mx.TASKS
        for s in ("duration_ns", "completion_ns", "slowdown", "host_seen_latency_ns",
                  "latency_no_early_ns", "bandwidth_GBps")
    ]
    median_cols = [
        "device_ns", "host_submit_ns", "host_wait_ns", "host_requests", "host_overhead_ns", "end_to_end_ns",
        *per_task_cols, "stp", "antt", "fairness", *engine_cols, "concurrent_ns",
    ]
    rows: list[dict[str, Any]] = []
    for pkey, pdf in _groups(trials, point_cols):
        pvals = dict(zip(point_cols, pkey))
        reason = _point_failed(pdf, check_col)
        point_ok = not reason
        alone = mx.alone_durations(pdf)
        overhead = pdf[(~pdf["warmup"].astype(bool)) & pdf["empty"].astype(bool)]
        for workload, wdf in pdf.groupby("workload", sort=False):
            meas = mx.measured(wdf)
            tasks = mx.tasks_of(str(workload))
            k = int(wdf["k_engines"].iloc[0]) if "k_engines" in wdf else len(tasks)
            bounds = mx.serial_bounds(alone, tasks, k) if len(tasks) > 1 else {
                "t_serial_ns": math.nan, "t_ideal_ns": math.nan, "t_bound_ns": math.nan}
            speed = mx.paired_speedups(wdf, str(workload))
            group_est: dict[str, st.Estimate] = {}
            group_cv: dict[str, float] = {}
            group_rows: dict[str, dict[str, Any]] = {}
            t_a = math.nan
            for group, gdf in meas.groupby("group", sort=False):
                ms = gdf["makespan_ns"].to_numpy(float)
                est = st.bootstrap_median(ms, **boot)
                row: dict[str, Any] = dict(pvals)
                row |= {
                    "workload": workload,
                    "group": group,
                    "n": est.n,
                    "n_warmup": int((wdf["warmup"].astype(bool) & ~wdf["empty"].astype(bool)
                                      & (wdf["group"] == group)).sum()),
                    "makespan_ns": est.value,
                    "makespan_lo_ns": est.lo,
                    "makespan_hi_ns": est.hi,
                    "makespan_cv": st.cv(ms),
                    "makespan_outliers": int(st.mad_outliers(ms).sum()),
                    "scratch_peak_bytes": float(gdf["scratch_peak_bytes"].max()),
                }
                for c in median_cols:
                    if c in gdf:
                        row[c] = _median(gdf[c])
                for t in mx.TASKS:
                    row[f"{t}_bytes"] = _median(gdf[f"{t}_bytes"]) if f"{t}_bytes" in gdf else math.nan
                emp = overhead[(overhead["workload"] == workload) & (overhead["group"] == group)]
                oe = st.bootstrap_median(emp["makespan_ns"].to_numpy(float), **boot)
                row |= {"control_overhead_ns": oe.value, "control_overhead_lo_ns": oe.lo,
                        "control_overhead_hi_ns": oe.hi}
                row |= {"k_engines": k, **bounds}
                if group in mx.GROUPS:
                    group_est[group] = est
                    group_cv[group] = row["makespan_cv"]
                if group == "A":
                    t_a = est.value
                group_rows[group] = row

            noise = st.noise_warnings(group_est, group_cv, cv_threshold)
            spd: dict[str, st.Estimate] = {}
            for x, y in mx.SPEEDUP_PAIRS:
                col = f"speedup_{x}_over_{y}"
                if x in group_est and y in group_est and col in speed and speed[col].notna().any():
                    spd[f"{x}/{y}"] = st.bootstrap_median(speed[col].to_numpy(float), **boot)

            for group, row in group_rows.items():
                row["t_serial_measured_ns"] = t_a
                for y in ("A", "B", "C"):
                    e = spd.get(f"{group}/{y}") if point_ok else None
                    e = e or st.NAN_ESTIMATE
                    row[f"speedup_over_{y}"] = e.value
                    row[f"speedup_over_{y}_lo"] = e.lo
                    row[f"speedup_over_{y}_hi"] = e.hi
                is_group = group in mx.GROUPS and point_ok
                # The alone times are task durations (device boundary), so
                # this efficiency compares them with the device time of the
                # group; against measured A both sides are host makespans.
                row["eta_vs_alone"] = (
                    mx.overlap_efficiency(bounds["t_serial_ns"], bounds["t_ideal_ns"], row["device_ns"])
                    if is_group else math.nan
                )
                row["eta_vs_A"] = (
                    mx.overlap_efficiency(t_a, bounds["t_ideal_ns"], row["makespan_ns"]) if is_group else math.nan
                )
                row["noise_warning"] = "; ".join(noise) if group in mx.GROUPS else ""
                row["point_ok"] = point_ok
                row["excluded_reason"] = reason
                row |= {"verdict": "", "verdict_key": "", "verdict_matches": "", "relations": "",
                        "timeline_overlap": None, "conclusion": "", "next_step": ""}
                if group == "D":
                    if point_ok:
                        v = vd.classify(spd, row.get("overlap_max"), noise, overlap_threshold)
                    else:
                        v = vd.Verdict.of(vd.EXCLUDED)
                    row |= {
                        "verdict": v.result,
                        "verdict_key": v.key,
                        "verdict_matches": ",".join(v.matches),
                        "relations": vd.relations_text(v.relations),
                        "timeline_overlap": v.timeline_overlap,
                        "conclusion": v.conclusion,
                        "next_step": v.next_step,
                    }
                rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    order = {g: i for i, g in enumerate([*mx.GROUPS, mx.ALONE])}
    out["_g"] = out["group"].map(order).fillna(99)
    out = out.sort_values([*point_cols, "workload", "_g"], kind="stable").drop(columns="_g")
    return out.reset_index(drop=True)


VERDICT_COLUMNS = ["verdict", "verdict_key", "verdict_matches", "relations", "timeline_overlap",
                   "conclusion", "next_step", "noise_warning", "point_ok", "excluded_reason"]


def verdict_table(summary: pd.DataFrame, point_cols: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per point x workload: the verdict and the speedups it rests on (from the D rows)."""
    if point_cols is None:
        # summarize() writes the point parameters first, then "workload".
        cols = list(summary.columns)
        point_cols = cols[: cols.index("workload")] if "workload" in cols else []
    d = summary[summary["group"] == "D"]
    cols = [*point_cols, "workload", "n",
            "speedup_over_A", "speedup_over_A_lo", "speedup_over_A_hi",
            "speedup_over_B", "speedup_over_B_lo", "speedup_over_B_hi",
            "speedup_over_C", "speedup_over_C_lo", "speedup_over_C_hi",
            "overlap_max", "eta_vs_alone", "eta_vs_A", *VERDICT_COLUMNS]
    return d[[c for c in cols if c in d.columns]].reset_index(drop=True)

