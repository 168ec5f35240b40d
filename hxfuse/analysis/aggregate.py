"""The per-trial table and the per-point summary (pipeline stage ``aggregate``).

``trial_table`` turns one runner output (one sweep point) into the tidy
per-trial table; concatenate the tables of all points and pass them to
``summarize``.  Every column is documented in docs/columns.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from hxfuse.analysis import metrics as mx
from hxfuse.analysis import stats as st
from hxfuse.analysis import verdicts as vd
from hxfuse.runner.records import Run
from hxfuse.analysis.environment import (
    ENV_COLUMNS,
    ENV_SUMMARY_COLUMNS,
    disturbance_warnings,
    environment,
    parallel_units,
    environment_warnings,
    to_float,
)
from hxfuse.config.targets import emulated_flag

DEFAULT_CHECK_COL = "check_ok"

# Meta fields copied onto every trial row (provenance and the k of the bound).
# hw_threads: the cDSP's hardware threads, written instead of online_cores
# there (hxfuse.analysis.environment.parallel_units)
META_COLUMNS = ("target", "kernels", "online_cores", "hw_threads", "engines_exceed_cores", "early_completion", "wait")

_TASK_SUFFIXES = (
    "duration_ns",
    "completion_ns",
    "host_seen_latency_ns",
    "latency_no_early_ns",
    "bytes",
    "bandwidth_GBps",
    "slowdown",
    "np",
    "cpu_ns",
    "queue_ns",
    "run_share",
    "cpu_begin",
    "involuntary_switches",
    "advancing_ns",
)
_FIXED = {
    "trial_id",
    "round",
    "seq",
    "warmup",
    "workload",
    "group",
    "empty",
    "makespan_ns",
    "device_ns",
    "host_submit_ns",
    "host_wait_ns",
    "host_requests",
    "host_overhead_ns",
    "device_start_ns",
    "scratch_peak_bytes",
    "checksums_ok",
    "preempted",
    "n_tasks",
    "prep_ns",
    "end_to_end_ns",
    "overlap_max",
    "concurrent_ns",
    "stp",
    "antt",
    "fairness",
    "k_engines",
    *META_COLUMNS,
    *ENV_COLUMNS,
    "env_warning",
    "cpu_ns",
    "parallelism",
    "concurrent_progress_ns",
    "concurrent_progress_share",
    "host_submit_max_ns",
    "host_cpu",
    "submit_outlier",
    "handover_ns",
    "late_handover",
    "involuntary_switches",
    "task_involuntary_switches",
    "other_cpu_ns",
    "other_cpu_share",
    "displaced_cpu_ns",
    "displaced_share",
    "interfered",
    mx.REPLICATE,
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
    # ``replicate`` is given by the caller (which runner invocation) and is
    # not a point parameter: infer_point_cols leaves it out.
    clash = [
        k for k in point if k not in META_COLUMNS and k != mx.REPLICATE and (k in tm.columns or is_metric_column(k))
    ]
    if clash:
        raise ValueError(f"point parameter names clash with metric columns: {clash}")
    # Slowdowns against this runner output's own alone runs: a replicate's
    # frequency and machine state would otherwise count as contention
    # (docs/metrics.md, "Which alone time").
    alone = mx.alone_durations(tm)
    sd = mx.slowdowns(tm, alone)
    meta = run.meta
    extra = pd.DataFrame({c: [_scalar(meta.get(c))] * len(tm) for c in META_COLUMNS if c not in point}, index=tm.index)
    for c, v in environment(run).items():
        if c not in point:
            extra[c] = [v] * len(tm)
    units, _ = parallel_units(meta)  # cores, or the cDSP's hardware threads
    cores = int(units) if math.isfinite(units) else None
    extra["k_engines"] = tm["n_tasks"].map(lambda n: mx.engines_available(int(n), cores))
    params = pd.DataFrame({k: [_scalar(v)] * len(tm) for k, v in point.items()}, index=tm.index)
    # copy(): one block per dtype, so a caller adding a column (the
    # replicate, the check) does not work on a fragmented frame
    return pd.concat([params, tm, sd, extra], axis=1).copy()


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


def _replicates(df: pd.DataFrame) -> np.ndarray | None:
    """Replicate label of each row (None when the table has no replicate column)."""
    return df[mx.REPLICATE].to_numpy() if mx.REPLICATE in df.columns else None


def summarize(
    trials: pd.DataFrame,
    point_cols: Sequence[str] | None = None,
    check_col: str = DEFAULT_CHECK_COL,
    n_resamples: int = st.DEFAULT_RESAMPLES,
    level: float = st.DEFAULT_LEVEL,
    seed: int = st.DEFAULT_SEED,
    cv_threshold: float = 0.10,
    overlap_threshold: float = vd.DEFAULT_OVERLAP_THRESHOLD,
    min_effect: float = vd.DEFAULT_MIN_EFFECT,
    overlap_min_fraction: float = vd.DEFAULT_OVERLAP_MIN_FRACTION,
    min_replicates: int = vd.DEFAULT_MIN_REPLICATES,
) -> pd.DataFrame:
    """One row per point x workload x group (A-D and the alone runs).

    ``trials`` is the concatenation of ``trial_table`` outputs, optionally with
    a boolean ``check_col`` from the correctness check and an integer
    ``replicate`` column (independent runner invocations of one point; their
    intervals come from a two-level bootstrap, replicates then rounds).
    Points whose check failed (or that have a trial checksum mismatch) keep
    their descriptive statistics but get no speedup, overlap efficiency or
    verdict: ``point_ok`` is False and ``excluded_reason`` says why.  The
    verdict sits on the D row of each point x workload (see also
    :func:`verdict_table`).
    """
    point_cols = list(point_cols) if point_cols is not None else infer_point_cols(trials, check_col)
    boot = dict(n_resamples=n_resamples, level=level, seed=seed)
    median_cols = _median_columns(trials)
    rows: list[dict[str, Any]] = []
    for pkey, pdf in _groups(trials, point_cols):
        rep_envs = replicate_environments(pdf)
        point = _Point(
            values=dict(zip(point_cols, pkey)),
            reason=_point_failed(pdf, check_col),
            env=_point_environment(rep_envs),
            replicates=tuple(rep_envs),
            disturbed=disturbed_replicates(pdf, rep_envs),
            n_reps=int(pdf[mx.REPLICATE].nunique()) if mx.REPLICATE in pdf else 1,
            alone=mx.alone_durations(pdf),
            overhead=pdf[(~pdf["warmup"].astype(bool)) & pdf["empty"].astype(bool)],
        )
        for workload, wdf in pdf.groupby("workload", sort=False):
            rows += _workload_rows(
                point,
                str(workload),
                wdf,
                median_cols,
                boot,
                cv_threshold,
                overlap_threshold,
                min_effect,
                overlap_min_fraction,
                min_replicates,
            )
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    order = {g: i for i, g in enumerate([*mx.GROUPS, mx.ALONE])}
    out["_g"] = out["group"].map(order).fillna(99)
    out = out.sort_values([*point_cols, "workload", "_g"], kind="stable").drop(columns="_g")
    return out.reset_index(drop=True)


@dataclass(frozen=True)
class _Point:
    """What every workload of one point shares in its summary rows."""

    values: dict[str, Any]
    reason: str  # why the point is excluded; "" when it passed its checks
    env: dict[str, Any]
    replicates: tuple[Any, ...]  # replicate labels (None: the table has none)
    disturbed: dict[Any, list[str]]  # replicate -> what disturbed its machine
    n_reps: int
    alone: Any  # mx.alone_durations of the point
    overhead: pd.DataFrame  # its measured empty trials (control overhead)

    @property
    def ok(self) -> bool:
        return not self.reason


def _median_columns(trials: pd.DataFrame) -> list[str]:
    """Columns summarized by their plain median (no interval)."""
    engine_cols = [
        c
        for c in trials.columns
        if (c.startswith("busy_") and c.endswith("_ns")) or c.startswith("util_") or c.startswith("overlap_")
    ]
    per_task_cols = [
        f"{t}_{s}"
        for t in mx.TASKS
        for s in (
            "duration_ns",
            "completion_ns",
            "slowdown",
            "host_seen_latency_ns",
            "latency_no_early_ns",
            "bandwidth_GBps",
            "cpu_ns",
            "queue_ns",
            "run_share",
            "advancing_ns",
        )
    ]
    return [
        "device_ns",
        "host_submit_ns",
        "host_wait_ns",
        "host_requests",
        "host_overhead_ns",
        "end_to_end_ns",
        *per_task_cols,
        "stp",
        "antt",
        "fairness",
        *engine_cols,
        "concurrent_ns",
        "concurrent_progress_ns",
        "concurrent_progress_share",
        "cpu_ns",
        "host_submit_max_ns",
        "handover_ns",
    ]


def _estimate(df: pd.DataFrame, col: str, reps: np.ndarray | None, boot: Mapping[str, Any]) -> st.Estimate:
    """Median of a per-trial column with its two-level interval (NaN when
    the column is absent or never measured)."""
    if col not in df or not pd.to_numeric(df[col], errors="coerce").notna().any():
        return st.NAN_ESTIMATE
    return st.hierarchical_bootstrap_median(pd.to_numeric(df[col], errors="coerce").to_numpy(float), reps, **boot)


def _group_row(
    point: _Point,
    workload: str,
    group: str,
    gdf: pd.DataFrame,
    wdf: pd.DataFrame,
    median_cols: Sequence[str],
    boot: Mapping[str, Any],
) -> tuple[dict[str, Any], st.Estimate]:
    """One group's descriptive row (makespan with its interval, medians,
    parallelism, control overhead) and its parallelism estimate."""
    ms = gdf["makespan_ns"].to_numpy(float)
    reps = _replicates(gdf)
    est = st.hierarchical_bootstrap_median(ms, reps, **boot)
    rep_meds = st.cluster_medians(ms, reps) if reps is not None else np.array([est.value])
    row: dict[str, Any] = dict(point.values)
    row |= {
        "workload": workload,
        "group": group,
        "n": est.n,
        "n_replicates": point.n_reps,
        "n_warmup": int((wdf["warmup"].astype(bool) & ~wdf["empty"].astype(bool) & (wdf["group"] == group)).sum()),
        "makespan_ns": est.value,
        "makespan_lo_ns": est.lo,
        "makespan_hi_ns": est.hi,
        "makespan_cv": st.cv(ms),
        "makespan_rcv": st.robust_cv(ms),
        "makespan_outliers": int(st.mad_outliers(ms).sum()),
        # between-replicate spread: (max - min) / median of the
        # replicates' medians (0 with one replicate)
        "makespan_rep_spread": (
            float((np.nanmax(rep_meds) - np.nanmin(rep_meds)) / est.value)
            if est.value and np.isfinite(rep_meds).any()
            else math.nan
        ),
        "scratch_peak_bytes": float(gdf["scratch_peak_bytes"].max()),
    }
    for c in median_cols:
        if c in gdf:
            row[c] = _median(gdf[c])
    for t in mx.TASKS:
        row[f"{t}_bytes"] = _median(gdf[f"{t}_bytes"]) if f"{t}_bytes" in gdf else math.nan
    pe = _estimate(gdf, "parallelism", reps, boot)
    row |= {"parallelism": pe.value, "parallelism_lo": pe.lo, "parallelism_hi": pe.hi}
    # progress evidence that needs no CPU counters: the same two-level
    # interval (the plain median above is its point estimate)
    for col, lo, hi in (
        ("concurrent_progress_ns", "concurrent_progress_lo_ns", "concurrent_progress_hi_ns"),
        ("concurrent_progress_share", "concurrent_progress_share_lo", "concurrent_progress_share_hi"),
    ):
        ce = _estimate(gdf, col, reps, boot)
        row |= {col: ce.value, lo: ce.lo, hi: ce.hi}
    # interfered: the runner's evidence of other work (metrics.py); NaN for
    # files without it
    for flag in ("submit_outlier", "late_handover", "interfered"):
        f = pd.to_numeric(gdf[flag], errors="coerce") if flag in gdf else None
        row[f"{flag}_share"] = float(f.mean()) if f is not None and f.notna().any() else math.nan
    emp = point.overhead[(point.overhead["workload"] == workload) & (point.overhead["group"] == group)]
    oe = st.hierarchical_bootstrap_median(emp["makespan_ns"].to_numpy(float), _replicates(emp), **boot)
    row |= {"control_overhead_ns": oe.value, "control_overhead_lo_ns": oe.lo, "control_overhead_hi_ns": oe.hi}
    return row, pe


@dataclass(frozen=True)
class RelationEvidence:
    """What each speedup pair X/Y of one workload rests on (keys "X/Y")."""

    calls: dict[str, vd.RelationCall]  # the relation decided (hxfuse.analysis.verdicts)
    bias: dict[str, float]  # worst-case interference shift of the median (fraction, larger side)
    sides: dict[str, tuple[float, float]]  # that shift per side (down, up): what the interval is widened by
    hit_share: dict[str, float]  # share of rounds hit by interference
    hit_source: dict[str, str]  # "measured" (the runner saw it) or "mad" (the proxy)


def relation_evidence(
    speed: pd.DataFrame,
    speed_reps: np.ndarray | None,
    groups: Iterable[str],
    boot: Mapping[str, Any],
    min_effect: float,
    hits: pd.DataFrame | None = None,
    min_replicates: int = 1,
    n_total: int | None = None,
) -> RelationEvidence:
    """Each speedup pair's inputs, for the pairs whose groups ran, and its
    decision by :func:`hxfuse.analysis.verdicts.decide_relation`: the interval
    machinery on log(ratio) (:func:`hxfuse.analysis.stats.relation_decision`)
    and the interference bound.  ``hits``
    (:func:`hxfuse.analysis.metrics.interfered_rounds`, aligned with
    ``speed``) gives the share of hit rounds the bound rests on; without
    the runner's evidence the MAD proxy stands in
    (:func:`hxfuse.analysis.stats.relation_bias`)."""
    present = set(groups)
    ev = RelationEvidence({}, {}, {}, {}, {})
    for x, y in mx.SPEEDUP_PAIRS:
        col, key = f"speedup_{x}_over_{y}", f"{x}/{y}"
        if not (x in present and y in present and col in speed and speed[col].notna().any()):
            continue
        ev.sides[key], ev.hit_share[key], ev.hit_source[key] = _relation_bias(speed, col, hits, x, y, min_effect)
        ev.bias[key] = _larger(ev.sides[key])
        d = st.relation_decision(speed[col].to_numpy(float), speed_reps, ev.sides[key], **boot)
        ev.calls[key] = vd.decide_relation(d, ev.bias[key], min_effect, min_replicates, n_total)
    return ev


def _relation_bias(
    speed: pd.DataFrame, col: str, hits: pd.DataFrame | None, x: str, y: str, min_effect: float
) -> tuple[tuple[float, float], float, str]:
    """((down, up) bias bound, share of hit rounds, source) of one relation:
    from the displacement each round's two trials measured
    (``shift_down_X_over_Y``, ``shift_up_X_over_Y``:
    :func:`hxfuse.analysis.stats.displacement_bias`, each side its own)
    where every round has it; else Huber's bound, the same on both sides,
    from the share of rounds flagged ``hit_X_over_Y``; else from the MAD
    proxy (:func:`hxfuse.analysis.stats.relation_bias`)."""
    rows = speed[col].notna()
    vals = speed.loc[rows, col].to_numpy(float)
    down = hits.get(f"shift_down_{x}_over_{y}") if hits is not None else None
    up = hits.get(f"shift_up_{x}_over_{y}") if hits is not None else None
    if down is not None and up is not None and len(vals) and down[rows].notna().all() and up[rows].notna().all():
        b_down, b_up, c = st.displacement_bias(vals, down[rows].to_numpy(float), up[rows].to_numpy(float))
        if math.isfinite(c):
            return (b_down, b_up), c, "measured"
    hit = hits.get(f"hit_{x}_over_{y}") if hits is not None else None
    share = mx.hit_share(hit[rows]) if hit is not None else None
    b, c, source = st.relation_bias(vals, share, min_effect)
    return (b, b), c, source


def _larger(sides: tuple[float, float]) -> float:
    """The larger side of a (down, up) bias bound, the one a reason quotes;
    NaN when both are unknown."""
    known = [b for b in sides if isinstance(b, float) and not math.isnan(b)]
    return max(known) if known else math.nan


def _end_to_end_speedups(
    wdf: pd.DataFrame, workload: str, groups: Iterable[str], boot: Mapping[str, Any]
) -> dict[str, st.Estimate]:
    """The paired speedups of ``end_to_end_ns`` (preparation + makespan)
    with the same two-level interval as the makespan ones.  Reported beside
    them, never read by a verdict: preparation is done before timing and is
    the same for every group of a replicate, so it only dilutes the ratio."""
    speed = mx.paired_speedups(wdf, workload, value="end_to_end_ns")
    names = speed.index.names or []
    reps = speed.index.get_level_values(mx.REPLICATE).to_numpy() if mx.REPLICATE in names else None
    groups = set(groups)
    # on log(ratio), as every ratio (hxfuse.analysis.stats.relation_decision)
    return {
        f"{x}/{y}": st.exp_estimate(
            st.hierarchical_bootstrap_median(st.log_ratios(speed[col].to_numpy(float)), reps, **boot)
        )
        for x, y in mx.SPEEDUP_PAIRS
        if x in groups and y in groups and (col := f"speedup_{x}_over_{y}") in speed and speed[col].notna().any()
    }


def _comparison_columns(
    row: dict[str, Any],
    group: str,
    ok: bool,
    ev: RelationEvidence,
    bounds: Mapping[str, float],
    t_a: float,
    e2e: Mapping[str, st.Estimate],
) -> None:
    """Speedups over A, B and C (makespan, with what a decision reads of
    them, and end to end) and the overlap efficiencies (NaN for an excluded
    point)."""
    row["t_serial_measured_ns"] = t_a
    for y in ("A", "B", "C"):
        key = f"{group}/{y}"
        c = ev.calls.get(key) if ok else None
        c = c or vd.RelationCall(None, math.nan, math.nan, math.nan)
        reps = [m for m in c.replicate_medians if math.isfinite(m)]
        # one interval per relation: _lo/_hi are the decision interval (log
        # scale, joined with the replicates' t interval, widened by the
        # interference bound); its ingredients are named as such
        row[f"speedup_over_{y}"] = c.value
        row[f"speedup_over_{y}_lo"] = c.lo
        row[f"speedup_over_{y}_hi"] = c.hi
        row[f"speedup_over_{y}_rel"] = c.relation
        row[f"speedup_over_{y}_why"] = c.reason
        row[f"speedup_over_{y}_boot_lo"], row[f"speedup_over_{y}_boot_hi"] = c.boot_lo, c.boot_hi
        # the replicates' own medians: how far independent runs agree
        row[f"speedup_over_{y}_rep_min"] = min(reps) if reps else math.nan
        row[f"speedup_over_{y}_rep_max"] = max(reps) if reps else math.nan
        row[f"speedup_over_{y}_t_lo"], row[f"speedup_over_{y}_t_hi"] = c.t_lo, c.t_hi
        row[f"speedup_over_{y}_bias"] = ev.bias.get(key, math.nan) if ok else math.nan
        ee = (e2e.get(f"{group}/{y}") if ok else None) or st.NAN_ESTIMATE
        row[f"speedup_e2e_over_{y}"] = ee.value
        row[f"speedup_e2e_over_{y}_lo"] = ee.lo
        row[f"speedup_e2e_over_{y}_hi"] = ee.hi
    is_group = group in mx.GROUPS and ok
    # The alone times are task durations (device boundary), so
    # these efficiencies compare them with the device time of the
    # group; against measured A both sides are host makespans.
    # Two references: T_ideal = max T_i (eta_vs_alone) and the
    # resource-aware bound max(T_ideal, T_serial / k) (eta_vs_bound).
    row["eta_vs_alone"] = (
        mx.overlap_efficiency(bounds["t_serial_ns"], bounds["t_ideal_ns"], row["device_ns"]) if is_group else math.nan
    )
    row["eta_vs_bound"] = (
        mx.overlap_efficiency_vs_bound(bounds["t_serial_ns"], bounds["t_bound_ns"], row["device_ns"])
        if is_group
        else math.nan
    )
    row["eta_vs_A"] = mx.overlap_efficiency(t_a, bounds["t_ideal_ns"], row["makespan_ns"]) if is_group else math.nan


@dataclass(frozen=True)
class _Judge:
    """Everything a verdict of one point x workload is computed from, so that
    it can be recomputed on a subset of the replicates."""

    speed: pd.DataFrame  # per-round paired speedups
    speed_reps: np.ndarray | None
    hits: pd.DataFrame  # per-round interference flags, aligned with speed
    d_trials: pd.DataFrame  # group D's measured trials (progress and wall overlap)
    groups: tuple[str, ...]
    boot: Mapping[str, Any]
    min_effect: float
    overlap_threshold: float
    min_time_ns: float  # the stated minimum time of progress overlap
    min_replicates: int
    n_total: int
    shown: tuple[Any, RelationEvidence]  # (keep, evidence) the summary prints: computed once

    def evidence(self, keep: Sequence[Any] | None = None) -> RelationEvidence:
        """The relations decided on the replicates ``keep`` (None: all)."""
        if self.shown[0] == (tuple(keep) if keep is not None else None):
            return self.shown[1]
        speed, reps, hits = self.speed, self.speed_reps, self.hits
        if keep is not None and reps is not None:
            mask = np.isin(reps, list(keep))
            speed, reps, hits = speed[mask], reps[mask], hits[mask]
        return relation_evidence(
            speed, reps, self.groups, self.boot, self.min_effect, hits, self.min_replicates, self.n_total
        )

    def __call__(self, keep: Sequence[Any] | None = None) -> vd.Verdict:
        ev = self.evidence(keep)
        d = self.d_trials
        if keep is not None and self.speed_reps is not None:
            d = d[d[mx.REPLICATE].isin(list(keep))]
        d_reps = _replicates(d)
        # progress evidence: the checkpoints' concurrent-progress time where
        # the runner records them; CPU-time parallelism (occupancy) only
        # where it does not (NaN estimates count as not measured)
        par = _estimate(d, "parallelism", d_reps, self.boot)
        conc = _estimate(d, "concurrent_progress_ns", d_reps, self.boot)
        wall = _median(d["overlap_max"]) if "overlap_max" in d else None
        return vd.classify(
            {k: c for k, c in ev.calls.items() if k in vd.RELATIONS},
            par,
            wall,
            min_effect=self.min_effect,
            overlap_threshold=self.overlap_threshold,
            concurrent_progress=conc,
            min_time_ns=self.min_time_ns,
        )


def _shortest_alone(alone: Mapping[str, float], tasks: Sequence[str]) -> float:
    """The shortest alone duration among the workload's tasks (NaN when none is known)."""
    vals = [float(alone.get(t, math.nan)) for t in tasks]
    vals = [v for v in vals if math.isfinite(v) and v > 0]
    return min(vals) if vals else math.nan


def _verdict_columns(point: _Point, judge: _Judge) -> dict[str, Any]:
    """The D row's verdict and what it rests on (the rule:
    :func:`hxfuse.analysis.verdicts.judge_point`)."""
    emulated = emulated_flag(point.env.get("emulated"))
    left = sens = ""
    if not point.ok:
        v = vd.Verdict.of(vd.EXCLUDED)
    elif emulated:
        v = vd.Verdict.of(vd.EMULATED)
    else:
        v, left, sens = vd.judge_point(judge, point.replicates, point.disturbed)
    return {
        "verdict": v.result,
        "verdict_key": v.key,
        "verdict_matches": ",".join(v.matches),
        "relations": vd.relations_text(v.relations),
        "progress_overlap": v.progress_overlap,
        "wall_overlap": v.wall_overlap,
        "d_equiv_b": v.d_equiv_b if point.ok and not emulated else None,
        "d_vs_b": v.d_vs_b if point.ok and not emulated else None,
        "replicates_left_out": left,
        "replicates_disturbed": len(point.disturbed) if point.ok and not emulated else 0,
        "sensitivity": sens,
        "inconclusive_reason": "; ".join(v.reasons),
        "conclusion": v.conclusion,
        "next_step": v.next_step,
    }


def _workload_rows(
    point: _Point,
    workload: str,
    wdf: pd.DataFrame,
    median_cols: Sequence[str],
    boot: Mapping[str, Any],
    cv_threshold: float,
    overlap_threshold: float,
    min_effect: float,
    overlap_min_fraction: float = vd.DEFAULT_OVERLAP_MIN_FRACTION,
    min_replicates: int = vd.DEFAULT_MIN_REPLICATES,
) -> list[dict[str, Any]]:
    """The summary rows (A-D and alone) of one workload of one point."""
    meas = mx.measured(wdf)
    tasks = mx.tasks_of(workload)
    k = int(wdf["k_engines"].iloc[0]) if "k_engines" in wdf else len(tasks)
    bounds = (
        mx.serial_bounds(point.alone, tasks, k)
        if len(tasks) > 1
        else {"t_serial_ns": math.nan, "t_ideal_ns": math.nan, "t_bound_ns": math.nan}
    )
    speed = mx.paired_speedups(wdf, workload)
    speed_reps = (
        speed.index.get_level_values(mx.REPLICATE).to_numpy() if mx.REPLICATE in (speed.index.names or []) else None
    )
    group_samples: dict[str, np.ndarray] = {}
    group_rows: dict[str, dict[str, Any]] = {}
    parallelism: dict[str, st.Estimate] = {}
    t_a = math.nan
    for group, gdf in meas.groupby("group", sort=False):
        row, parallelism[group] = _group_row(point, workload, group, gdf, wdf, median_cols, boot)
        row |= {"k_engines": k, **bounds}
        if group in mx.GROUPS:
            group_samples[str(group)] = gdf["makespan_ns"].to_numpy(float)
        if group == "A":
            t_a = row["makespan_ns"]
        group_rows[group] = row

    # reported: spread and outliers of each group's makespans (they
    # include drift that pairing cancels, so they do not gate)
    makespan_noise = st.noise_warnings(group_samples, cv_threshold, min_rel=min_effect)
    hits = pd.concat([mx.interfered_rounds(wdf, workload), mx.round_shifts(wdf, workload)], axis=1).reindex(speed.index)
    # the relations the summary prints are those the verdict decides: on the
    # clean replicates where some were disturbed and some are clean
    # (hxfuse.analysis.verdicts.judge_point), else on all of them
    clean = [r for r in point.replicates if r not in point.disturbed]
    keep = tuple(clean) if point.disturbed and clean and speed_reps is not None else None
    mask = np.isin(speed_reps, list(keep)) if keep is not None else slice(None)
    ev = relation_evidence(
        speed[mask],
        speed_reps[mask] if speed_reps is not None else None,
        group_samples,
        boot,
        min_effect,
        hits[mask],
        min(min_replicates, point.n_reps),
        point.n_reps,
    )
    # reported: relations whose interference bound widened the decision
    # interval by more than half the minimum effect (no veto: the widened
    # interval decides)
    noise = [
        f"{k}: interference "
        + (
            "seen by the runner"
            if ev.hit_source[k] == "measured"
            else f"(MAD outliers in {ev.hit_share[k]:.0%} of its rounds)"
        )
        + f" could shift its median by up to {b:.1%}; decided on "
        f"[{ev.calls[k].lo:.3f}, {ev.calls[k].hi:.3f}]"
        for k, b in ev.bias.items()
        if k in vd.RELATIONS and (math.isinf(b) or (math.isfinite(b) and b > min_effect / 2))
    ]
    judge = _Judge(
        speed,
        speed_reps,
        hits,
        meas[meas["group"] == "D"],
        tuple(group_samples),
        boot,
        min_effect,
        overlap_threshold,
        overlap_min_fraction * _shortest_alone(point.alone, tasks),
        min(min_replicates, point.n_reps),
        point.n_reps,
        (keep, ev),
    )
    e2e = _end_to_end_speedups(wdf, workload, group_samples, boot)
    rows = []
    for group, row in group_rows.items():
        _comparison_columns(row, group, point.ok, ev, bounds, t_a, e2e)
        row["noise_warning"] = "; ".join(noise) if group in mx.GROUPS else ""
        row["makespan_noise"] = "; ".join(makespan_noise) if group in mx.GROUPS else ""
        row["point_ok"] = point.ok
        row["excluded_reason"] = point.reason
        row |= {c: "" for c in VERDICT_TEXT_COLUMNS} | {"progress_overlap": None, "wall_overlap": None}
        row |= {"d_equiv_b": None, "d_vs_b": None}
        if group == "D":
            row |= _verdict_columns(point, judge)
        row |= point.env
        rows.append(row)
    return rows


# Text columns of the verdict, empty on the rows other than D.
VERDICT_TEXT_COLUMNS = (
    "verdict",
    "verdict_key",
    "verdict_matches",
    "relations",
    "replicates_left_out",
    "sensitivity",
    "inconclusive_reason",
    "conclusion",
    "next_step",
)
VERDICT_COLUMNS = [
    "verdict",
    "verdict_key",
    "verdict_matches",
    "relations",
    "progress_overlap",
    "wall_overlap",
    "d_equiv_b",
    "d_vs_b",
    "replicates_left_out",
    "replicates_disturbed",
    "reruns",
    "sensitivity",
    "inconclusive_reason",
    "conclusion",
    "next_step",
    "noise_warning",
    "makespan_noise",
    "point_ok",
    "excluded_reason",
]


def _run_environment(pdf: pd.DataFrame) -> dict[str, Any]:
    """ENV_SUMMARY_COLUMNS of one runner invocation (its first trial row:
    every row of one invocation carries the same environment)."""
    env: dict[str, Any] = {}
    for c in ENV_SUMMARY_COLUMNS:
        if c == "env_warning":
            continue
        v = pdf[c].iloc[0] if c in pdf and len(pdf) else None
        if isinstance(v, (np.generic,)):
            v = v.item()
        if c in ("emulated", "engines_exceed_cores"):
            v = bool(v) if v is not None and not (isinstance(v, float) and math.isnan(v)) else False
        if c == "device_serial" and not (isinstance(v, str) and v):
            v = None
        env[c] = v
    env["env_warning"] = "; ".join(environment_warnings(env))
    return env


def replicate_environments(pdf: pd.DataFrame) -> dict[Any, dict[str, Any]]:
    """Each replicate's environment (:func:`_run_environment`), keyed by its
    label in order; one entry keyed None when the table has no replicate column."""
    if mx.REPLICATE not in pdf.columns:
        return {None: _run_environment(pdf)}
    return {r: _run_environment(g) for r, g in pdf.groupby(mx.REPLICATE, sort=True)}


# A replicate with interference seen in at least this share of its measured
# trials is disturbed: with half the rounds hit the median's shift has no
# bound (hxfuse.analysis.stats.median_bias_bound_from_share).
INTERFERED_REPLICATE_SHARE = 0.5


def disturbed_replicates(pdf: pd.DataFrame, rep_envs: Mapping[Any, Mapping[str, Any]]) -> dict[Any, list[str]]:
    """Each replicate whose machine was disturbed, with its findings: the
    environment's disturbances (loaded before or after, fewer free cores
    than engines, a device fallback) and interference the runner saw in at
    least ``INTERFERED_REPLICATE_SHARE`` of its measured group trials."""
    out: dict[Any, list[str]] = {}
    meas = mx.measured(pdf)
    meas = meas[meas["group"].isin(mx.GROUPS)]
    for r, env in rep_envs.items():
        found = disturbance_warnings(env)
        rows = meas if r is None else meas[meas[mx.REPLICATE] == r]
        flags = pd.to_numeric(rows["interfered"], errors="coerce") if "interfered" in rows else pd.Series(dtype=float)
        share = float(flags.mean()) if len(flags) and flags.notna().all() else math.nan
        if math.isfinite(share) and share >= INTERFERED_REPLICATE_SHARE:
            found.append(
                f"interference seen by the runner in {share:.0%} of its trials (its median shift is unbounded)"
            )
        if found:
            out[r] = found
    return out


# Environment columns where the point reports the worst of its replicates.
_WORST_OF_REPLICATES = (
    "load_average_before",
    "load_average_after",
    "other_busy_cores_before",
    "other_busy_cores_after",
    "device_fallbacks",
    "runner_wall_s",
)


def _point_environment(rep_envs: Mapping[Any, Mapping[str, Any]]) -> dict[str, Any]:
    """ENV_SUMMARY_COLUMNS of one point from its replicates' environments:
    the first replicate's machine description, the worst (largest) load
    reading of any replicate, every phone the replicates ran on, and the
    findings of every replicate, each naming the replicates it holds for
    when not all of them."""
    envs = list(rep_envs.values())
    env = dict(envs[0])
    for c in _WORST_OF_REPLICATES:
        vals = [to_float(e.get(c)) for e in envs]
        vals = [v for v in vals if math.isfinite(v)]
        env[c] = max(vals) if vals else env.get(c)
    env["device_serial"] = ", ".join(sorted({str(e["device_serial"]) for e in envs if e.get("device_serial")})) or None
    env["emulated"] = any(bool(e.get("emulated")) for e in envs)
    seen: dict[str, list[Any]] = {}
    for r, e in rep_envs.items():
        for text in environment_warnings(e):
            seen.setdefault(text, []).append(r)
    env["env_warning"] = "; ".join(t if len(rs) == len(envs) else f"{t} ({vd._labels(rs)})" for t, rs in seen.items())
    return env


def verdict_table(summary: pd.DataFrame, point_cols: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per point x workload: the verdict and the speedups it rests on (from the D rows)."""
    if point_cols is None:
        # summarize() writes the point parameters first, then "workload".
        cols = list(summary.columns)
        point_cols = cols[: cols.index("workload")] if "workload" in cols else []
    d = summary[summary["group"] == "D"]
    cols = [
        *point_cols,
        "workload",
        "n",
        "speedup_over_A",
        "speedup_over_A_lo",
        "speedup_over_A_hi",
        "speedup_over_B",
        "speedup_over_B_lo",
        "speedup_over_B_hi",
        "speedup_over_C",
        "speedup_over_C_lo",
        "speedup_over_C_hi",
        *(f"speedup_over_{y}_{c}" for y in "ABC" for c in ("rel", "why", "boot_lo", "boot_hi", "t_lo", "t_hi", "bias")),
        "speedup_e2e_over_A",
        "speedup_e2e_over_A_lo",
        "speedup_e2e_over_A_hi",
        "speedup_e2e_over_B",
        "speedup_e2e_over_B_lo",
        "speedup_e2e_over_B_hi",
        "speedup_e2e_over_C",
        "speedup_e2e_over_C_lo",
        "speedup_e2e_over_C_hi",
        "parallelism",
        "parallelism_lo",
        "parallelism_hi",
        "concurrent_progress_share",
        "concurrent_progress_share_lo",
        "concurrent_progress_share_hi",
        "n_replicates",
        "overlap_max",
        "eta_vs_alone",
        "eta_vs_bound",
        "eta_vs_A",
        *VERDICT_COLUMNS,
        "env_warning",
    ]
    return d[[c for c in cols if c in d.columns]].reset_index(drop=True)
