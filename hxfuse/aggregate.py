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

from . import metrics as mx
from . import stats as st
from . import verdicts as vd
from .io import Run
from .targets import emulated_flag

DEFAULT_CHECK_COL = "check_ok"

# Meta fields copied onto every trial row (provenance and the k of the bound).
META_COLUMNS = ("target", "kernels", "online_cores", "engines_exceed_cores", "early_completion", "wait")
# The machine a point ran on (hxfuse.aggregate.environment), copied onto every
# trial row and onto every summary row of the point, with ``env_warning``.
ENV_COLUMNS = (
    "emulated",
    "cpu_model",
    "cpu_governor",
    "compiler",
    "sdk_version",
    "device_engines_used",
    "load_average_before",
    "load_average_after",
    "other_busy_cores_before",
    "other_busy_cores_after",
    "runner_wall_s",
    "clock_resolution_ns",
    "clock_read_overhead_ns",
    "runner_warnings",
    "runner_warning_codes",
    "device_fallbacks",
    "device_serial",
)
# Summary columns of the environment, in order (online_cores and
# engines_exceed_cores come from META_COLUMNS).
ENV_SUMMARY_COLUMNS = (
    "emulated",
    "cpu_model",
    "cpu_governor",
    "online_cores",
    "device_engines_used",
    "engines_exceed_cores",
    "load_average_before",
    "load_average_after",
    "other_busy_cores_before",
    "other_busy_cores_after",
    "runner_wall_s",
    "compiler",
    "sdk_version",
    "clock_resolution_ns",
    "clock_read_overhead_ns",
    "runner_warnings",
    "runner_warning_codes",
    "device_fallbacks",
    "device_serial",
    "env_warning",
)
# A machine counts as loaded when its 1-minute load average exceeds this many
# runnable processes per online core (docs/metrics.md, "Environment").
LOADED_PER_CORE = 0.5
# With the runner's own sample of other work (meta.other_busy_cores_before,
# end.other_busy_cores_after: cores kept busy by other processes in 200 ms
# while the engines idle), a machine counts as loaded above this many busy
# cores per online core.  Preferred over the load average, which still
# remembers the previous sweep point's run.
BUSY_PER_CORE = 0.25
# Time constant of the kernel's 1-minute load average, in seconds.
LOAD_WINDOW_S = 60.0

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
    "host_submit_max_ns",
    "host_cpu",
    "submit_outlier",
    "handover_ns",
    "late_handover",
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


def _float(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def environment(run: Run) -> dict[str, Any]:
    """The machine and toolchain of one runner output (columns ``ENV_COLUMNS``).

    From ``meta`` (docs/runner.md) and the ``end`` record.  Fields an older
    runner or another target does not write (``cpu_governor``,
    ``sdk_version``, ``emulated``, ``device_engines_used``) get a neutral
    value: unknown text is None, a missing ``emulated`` is False, and the
    engines used default to the device engines the runner lists.  A load
    average the runner could not read (-1) becomes NaN.
    """
    meta, end = run.meta, run.end or {}
    clock = meta.get("clock") if isinstance(meta.get("clock"), Mapping) else {}
    engines = [e for e in (meta.get("engines") or []) if e != "host"]
    used = meta.get("device_engines_used")
    if used is None:
        used = len(engines) or math.nan

    def load(v: Any) -> float:
        f = _float(v)
        return f if math.isfinite(f) and f >= 0 else math.nan

    sdk = meta.get("sdk_version")
    if sdk is None and isinstance(meta.get("sdk"), Mapping):
        sdk = meta["sdk"].get("version")
    wall = _float(end.get("wall_ns"))
    # end.resources (device targets): what the platform really used; a
    # fallback (e.g. DDR instead of VTCM, a CPU copy instead of user DMA,
    # allowed only by an explicit build option) is counted there.  Null on
    # the host, where nothing can fall back.
    res = end.get("resources") if isinstance(end.get("resources"), Mapping) else {}
    fallbacks = _float(res.get("fallbacks")) if res.get("fallbacks") is not None else math.nan
    warns = meta.get("warnings") or []
    if isinstance(warns, str):
        warns = [warns]
    # meta.warning_codes[i] is the stable code of meta.warnings[i]
    # (docs/runner.md); a file without a matching list has uncoded warnings.
    codes = meta.get("warning_codes")
    codes = [str(c) for c in codes] if isinstance(codes, list) and len(codes) == len(warns) else []
    labels = meta.get("labels")
    return {
        "emulated": emulated_flag(meta.get("emulated", False)),
        "cpu_model": meta.get("cpu_model"),
        "cpu_governor": meta.get("cpu_governor"),
        "compiler": meta.get("compiler"),
        "sdk_version": sdk,
        "device_engines_used": _float(used),
        "load_average_before": load(meta.get("load_average_before")),
        "load_average_after": load(end.get("load_average_after")),
        "other_busy_cores_before": load(meta.get("other_busy_cores_before")),
        "other_busy_cores_after": load(end.get("other_busy_cores_after")),
        "runner_wall_s": wall / 1e9 if math.isfinite(wall) else math.nan,
        "clock_resolution_ns": _float(clock.get("resolution_ns")),
        "clock_read_overhead_ns": _float(clock.get("read_overhead_ns")),
        "runner_warnings": "; ".join(str(w) for w in warns),
        "runner_warning_codes": "; ".join(codes),
        "device_fallbacks": fallbacks,
        # the phone of a device farm the run leased (kernels/hexagon/device.sh
        # labels every run); None elsewhere
        "device_serial": labels.get("device_serial") if isinstance(labels, Mapping) else None,
    }


# Codes of environment findings that mean other work may have disturbed the
# timings: a point with one of these gets no verdict.  The others describe
# the set-up (emulation, more engines than cores: the resource-aware bound
# already accounts for that) or what is unknown, and are reported only.
DISTURBANCE_CODES = frozenset({"loaded_before", "loaded_after", "few_free_cores", "device_fallback"})


def environment_warnings(env: Mapping[str, Any], loaded_per_core: float = LOADED_PER_CORE) -> list[str]:
    """Texts of :func:`environment_findings`."""
    return [text for _, text in environment_findings(env, loaded_per_core)]


def disturbance_warnings(env: Mapping[str, Any], loaded_per_core: float = LOADED_PER_CORE) -> list[str]:
    """The findings that withhold a verdict (codes in ``DISTURBANCE_CODES``)."""
    return [text for code, text in environment_findings(env, loaded_per_core) if code in DISTURBANCE_CODES]


def environment_findings(env: Mapping[str, Any], loaded_per_core: float = LOADED_PER_CORE) -> list[tuple[str, str]]:
    """Why the machine may have disturbed a point, as (code, text) pairs (empty list: nothing seen).

    ``env`` holds the ``ENV_COLUMNS`` plus ``online_cores`` and
    ``engines_exceed_cores``.  The rule (docs/metrics.md, "Environment"):

    * where the runner sampled other work (``other_busy_cores_before`` /
      ``_after``: cores busy with other processes in 200 ms while its engines
      idle), loaded before / after: that sample > ``BUSY_PER_CORE`` x online
      cores, and fewer free cores than engines: cores - busy sample < E - 0.5;
      the load-average rules below are then not used;
    * loaded before: 1-minute load average before the point > ``loaded_per_core``
      x online cores;
    * loaded after: the load average after the point, minus the runner's own
      expected share (its E device engines busy for the run's wall time w
      raise the 1-minute average by about E x (1 - exp(-w / 60 s))), is above
      the same limit;
    * fewer free cores than engines: the runner's own ``engines_exceed_cores``,
      or online cores - round(load before) < E (the engines the point keeps
      busy at once);
    * the load average could not be read; the target is emulated; the
      runner's own ``meta.warnings`` (prefixed ``runner:``); the runner's
      ``engines_exceed_cores`` warning (found by its code in
      ``runner_warning_codes``) replaces ours rather than repeating it.
    """
    out: list[tuple[str, str]] = []
    if emulated_flag(env.get("emulated")):
        out.append(("emulated", "emulated (timings are not performance)"))
    fb = _float(env.get("device_fallbacks"))
    if math.isfinite(fb) and fb > 0:
        # the point measured something other than the engines it names
        out.append(
            (
                "device_fallback",
                f"device fallbacks: {fb:g} (an engine or memory was replaced; end.resources of the runner says which)",
            )
        )
    cores = _float(env.get("online_cores"))
    have_cores = math.isfinite(cores) and cores >= 1
    rw = env.get("runner_warnings")
    runner = [w for w in rw.split("; ") if w] if isinstance(rw, str) else []
    if have_cores and math.isfinite(_float(env.get("other_busy_cores_before"))):
        out += _busy_sample_findings(env, cores)
    else:
        out += _load_average_findings(env, cores, have_cores, loaded_per_core)
    out += [("runner", f"runner: {w}") for w in runner]
    return out


def _runner_says_exceed(env: Mapping[str, Any]) -> bool:
    """The runner's own ``engines_exceed_cores`` warning is in ``runner_warning_codes``."""
    # keyed on the runner's stable codes, never on its wording
    rc = env.get("runner_warning_codes")
    return isinstance(rc, str) and "engines_exceed_cores" in rc.split("; ")


def _exceed_finding(used: float, cores: float) -> tuple[str, str]:
    n = f"{used:g} device engines" if math.isfinite(used) else "device engines"
    return ("engines_exceed_cores", f"engines exceed cores ({n} on {cores:g} online cores share them)")


def _busy_sample_findings(env: Mapping[str, Any], cores: float) -> list[tuple[str, str]]:
    """Findings from the runner's own sample of other work (``other_busy_cores_*``)."""
    out: list[tuple[str, str]] = []
    used = _float(env.get("device_engines_used"))
    busy_b = _float(env.get("other_busy_cores_before"))
    busy_a = _float(env.get("other_busy_cores_after"))
    busy_limit = BUSY_PER_CORE * cores
    if busy_b > busy_limit:
        out.append(
            (
                "loaded_before",
                f"loaded before (other processes kept {busy_b:.2f} cores busy > "
                f"{busy_limit:.2f} = {BUSY_PER_CORE:g} x {cores:g} cores)",
            )
        )
    if math.isfinite(busy_a) and busy_a > busy_limit:
        out.append(("loaded_after", f"loaded after (other processes kept {busy_a:.2f} cores busy > {busy_limit:.2f})"))
    if bool(env.get("engines_exceed_cores")):
        if not _runner_says_exceed(env):
            out.append(_exceed_finding(used, cores))
    elif math.isfinite(used) and cores - busy_b < used - 0.5:
        out.append(
            (
                "few_free_cores",
                f"fewer free cores than engines ({cores:g} cores - {busy_b:.2f} busy "
                f"with other work leaves ~{cores - busy_b:.1f} for {used:g} device engines)",
            )
        )
    return out


def _load_average_findings(
    env: Mapping[str, Any], cores: float, have_cores: bool, loaded_per_core: float
) -> list[tuple[str, str]]:
    """Findings from the 1-minute load average (no sample of other work)."""
    out: list[tuple[str, str]] = []
    used = _float(env.get("device_engines_used"))
    before = _float(env.get("load_average_before"))
    after = _float(env.get("load_average_after"))
    wall = _float(env.get("runner_wall_s"))
    limit = loaded_per_core * cores if have_cores else math.nan
    if not math.isfinite(before):
        out.append(("load_unknown", "load unknown (load average unreadable)"))
    elif have_cores and before > limit:
        out.append(
            (
                "loaded_before",
                f"loaded before (1-min load {before:.2f} > {limit:.2f} = {loaded_per_core:g} x {cores:g} cores)",
            )
        )
    if math.isfinite(after) and have_cores:
        own = (used if math.isfinite(used) else 0.0) * (
            1.0 - math.exp(-wall / LOAD_WINDOW_S) if math.isfinite(wall) else 1.0
        )
        if after - own > limit:
            out.append(
                ("loaded_after", f"loaded after (1-min load {after:.2f} - runner's own ~{own:.2f} > {limit:.2f})")
            )
    if bool(env.get("engines_exceed_cores")):
        if _runner_says_exceed(env):
            pass  # the runner says so itself (listed below)
        else:
            out.append(_exceed_finding(used, cores))
    elif have_cores and math.isfinite(used) and math.isfinite(before):
        free = max(0.0, cores - math.floor(before + 0.5))
        if free < used:
            out.append(
                (
                    "few_free_cores",
                    f"fewer free cores than engines ({cores:g} cores - load {before:.2f} "
                    f"leaves ~{free:g} for {used:g} device engines)",
                )
            )
    return out


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
        point = _Point(
            values=dict(zip(point_cols, pkey)),
            reason=_point_failed(pdf, check_col),
            env=_point_environment(pdf),
            n_reps=int(pdf[mx.REPLICATE].nunique()) if mx.REPLICATE in pdf else 1,
            alone=mx.alone_durations(pdf),
            overhead=pdf[(~pdf["warmup"].astype(bool)) & pdf["empty"].astype(bool)],
        )
        for workload, wdf in pdf.groupby("workload", sort=False):
            rows += _workload_rows(
                point, str(workload), wdf, median_cols, boot, cv_threshold, overlap_threshold, min_effect
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
    n_reps: int
    alone: Any  # mx.alone_durations of the point
    overhead: pd.DataFrame  # its measured empty trials (control overhead)

    @property
    def ok(self) -> bool:
        return not self.reason


def _median_columns(trials: pd.DataFrame) -> list[str]:
    """Columns summarised by their plain median (no interval)."""
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
        "cpu_ns",
        "host_submit_max_ns",
        "handover_ns",
    ]


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
    pe = (
        st.hierarchical_bootstrap_median(gdf["parallelism"].to_numpy(float), reps, **boot)
        if "parallelism" in gdf
        else st.NAN_ESTIMATE
    )
    row |= {"parallelism": pe.value, "parallelism_lo": pe.lo, "parallelism_hi": pe.hi}
    for flag in ("submit_outlier", "late_handover"):
        f = pd.to_numeric(gdf[flag], errors="coerce") if flag in gdf else None
        row[f"{flag}_share"] = float(f.mean()) if f is not None and f.notna().any() else math.nan
    emp = point.overhead[(point.overhead["workload"] == workload) & (point.overhead["group"] == group)]
    oe = st.hierarchical_bootstrap_median(emp["makespan_ns"].to_numpy(float), _replicates(emp), **boot)
    row |= {"control_overhead_ns": oe.value, "control_overhead_lo_ns": oe.lo, "control_overhead_hi_ns": oe.hi}
    return row, pe


def _speedup_estimates(
    speed: pd.DataFrame, speed_reps: np.ndarray | None, groups: Iterable[str], boot: Mapping[str, Any]
) -> tuple[dict[str, st.Estimate], dict[str, list[float]]]:
    """Each speedup pair's median with its two-level interval, and the
    replicates' own medians, for the pairs whose groups ran."""
    present = set(groups)
    spd: dict[str, st.Estimate] = {}
    spd_reps: dict[str, list[float]] = {}
    for x, y in mx.SPEEDUP_PAIRS:
        col = f"speedup_{x}_over_{y}"
        if x in present and y in present and col in speed and speed[col].notna().any():
            vals = speed[col].to_numpy(float)
            spd[f"{x}/{y}"] = st.hierarchical_bootstrap_median(vals, speed_reps, **boot)
            spd_reps[f"{x}/{y}"] = (
                list(st.cluster_medians(vals, speed_reps)) if speed_reps is not None else [spd[f"{x}/{y}"].value]
            )
    return spd, spd_reps


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
    return _speedup_estimates(speed, reps, groups, boot)[0]


def _comparison_columns(
    row: dict[str, Any],
    group: str,
    ok: bool,
    spd: Mapping[str, st.Estimate],
    spd_reps: Mapping[str, list[float]],
    bounds: Mapping[str, float],
    t_a: float,
    e2e: Mapping[str, st.Estimate],
) -> None:
    """Speedups over A, B and C (makespan and end to end) and the overlap
    efficiencies (NaN for an excluded point)."""
    row["t_serial_measured_ns"] = t_a
    for y in ("A", "B", "C"):
        e = spd.get(f"{group}/{y}") if ok else None
        e = e or st.NAN_ESTIMATE
        reps = spd_reps.get(f"{group}/{y}", []) if ok else []
        row[f"speedup_over_{y}"] = e.value
        row[f"speedup_over_{y}_lo"] = e.lo
        row[f"speedup_over_{y}_hi"] = e.hi
        # the replicates' own medians: how far independent runs agree
        row[f"speedup_over_{y}_rep_min"] = min(reps) if reps else math.nan
        row[f"speedup_over_{y}_rep_max"] = max(reps) if reps else math.nan
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


def _verdict_columns(
    point: _Point,
    spd: Mapping[str, st.Estimate],
    spd_reps: Mapping[str, list[float]],
    parallelism: st.Estimate | None,
    overlap_max: Any,
    noise: list[str],
    overlap_threshold: float,
    min_effect: float,
) -> dict[str, Any]:
    """The D row's verdict and what it rests on."""
    emulated = emulated_flag(point.env.get("emulated"))
    if not point.ok:
        v = vd.Verdict.of(vd.EXCLUDED)
    elif emulated:
        v = vd.Verdict.of(vd.EMULATED)
    else:
        v = vd.classify(
            spd,
            parallelism,
            overlap_max,
            noise=noise,
            min_effect=min_effect,
            overlap_threshold=overlap_threshold,
            replicate_speedups=spd_reps,
            disturbances=disturbance_warnings(point.env),
        )
    return {
        "verdict": v.result,
        "verdict_key": v.key,
        "verdict_matches": ",".join(v.matches),
        "relations": vd.relations_text(v.relations),
        "progress_overlap": v.progress_overlap,
        "wall_overlap": v.wall_overlap,
        "d_equiv_b": v.d_equiv_b if point.ok and not emulated else None,
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
    spd, spd_reps = _speedup_estimates(speed, speed_reps, group_samples, boot)
    e2e = _end_to_end_speedups(wdf, workload, group_samples, boot)
    # gating: interference that could bias the relations the verdict reads
    noise = st.ratio_noise(
        {k: speed[f"speedup_{k.replace('/', '_over_')}"].to_numpy(float) for k in spd if k in vd.RELATIONS}, min_effect
    )
    rows = []
    for group, row in group_rows.items():
        _comparison_columns(row, group, point.ok, spd, spd_reps, bounds, t_a, e2e)
        row["noise_warning"] = "; ".join(noise) if group in mx.GROUPS else ""
        row["makespan_noise"] = "; ".join(makespan_noise) if group in mx.GROUPS else ""
        row["point_ok"] = point.ok
        row["excluded_reason"] = point.reason
        row |= {
            "verdict": "",
            "verdict_key": "",
            "verdict_matches": "",
            "relations": "",
            "progress_overlap": None,
            "wall_overlap": None,
            "d_equiv_b": None,
            "inconclusive_reason": "",
            "conclusion": "",
            "next_step": "",
        }
        if group == "D":
            row |= _verdict_columns(
                point, spd, spd_reps, parallelism.get("D"), row.get("overlap_max"), noise, overlap_threshold, min_effect
            )
        row |= point.env
        rows.append(row)
    return rows


VERDICT_COLUMNS = [
    "verdict",
    "verdict_key",
    "verdict_matches",
    "relations",
    "progress_overlap",
    "wall_overlap",
    "d_equiv_b",
    "inconclusive_reason",
    "conclusion",
    "next_step",
    "noise_warning",
    "makespan_noise",
    "point_ok",
    "excluded_reason",
]


def _point_environment(pdf: pd.DataFrame) -> dict[str, Any]:
    """ENV_SUMMARY_COLUMNS of one point (first trial row; NaN/None where absent)."""
    env: dict[str, Any] = {}
    for c in ENV_SUMMARY_COLUMNS:
        if c == "env_warning":
            continue
        if c == "device_serial":
            # every phone the point's replicates ran on
            got = sorted({str(x) for x in pdf[c] if isinstance(x, str) and x}) if c in pdf else []
            env[c] = ", ".join(got) or None
            continue
        v = pdf[c].iloc[0] if c in pdf and len(pdf) else None
        if isinstance(v, (np.generic,)):
            v = v.item()
        if c in ("emulated", "engines_exceed_cores"):
            v = bool(v) if v is not None and not (isinstance(v, float) and math.isnan(v)) else False
        env[c] = v
    env["env_warning"] = "; ".join(environment_warnings(env))
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
        "n_replicates",
        "overlap_max",
        "eta_vs_alone",
        "eta_vs_bound",
        "eta_vs_A",
        *VERDICT_COLUMNS,
        "env_warning",
    ]
    return d[[c for c in cols if c in d.columns]].reset_index(drop=True)
