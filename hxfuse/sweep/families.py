"""The sweep families: what each family adds to the summary and its figure.

A sweep may say which *family* it belongs to (``family`` in the study file:
``granularity``, ``ratio``, ``share``, ``bandwidth``, ``wait``) and how its
x is *measured* (``x_measured``).  Both are read here, never by the
analysis (hxfuse.analysis.aggregate), which stays family-agnostic:

- :func:`add_control_share` (called by the pipeline's aggregation glue)
  adds ``control_overhead_share``: the control overhead of a group (the
  median makespan of the same group run with empty tasks) as a share of its
  median makespan.  It is what makes granularity visible: about 0 where
  tasks last milliseconds, a large part of the makespan where they last
  tens of microseconds.
- :func:`measured_x` replaces a sweep's nominal x by a quantity measured at
  the point, from the alone medians of its own runs: ``M/V``, ``M/D``
  (T_M / T_V or T_M / T_D), ``M/partners`` (T_M over the longest other task
  of the workload) or ``longest`` (the longest alone median, in ms).  The
  nominal x stays the point's label.
- :func:`family_long` is the data of a family figure (drawn by
  hxfuse.sweep.family_plots.family_figure): the paired speedups D/A, D/B, D/C, C/A
  with their intervals over the measured (or nominal) x, and the quantity the
  family is about (control-overhead share, D's parallelism, scratch peak,
  achieved bandwidth per task, the host-visible completion latency);
- :func:`families_tex` the paper's family figures with their captions.

Only numpy and pandas are imported here: the aggregate job imports this
module, and editing the plotting or LaTeX code must not rerun it.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from hxfuse.model import TASKS, WORKLOAD_TASKS

# the aggregate job imports this module: the escaper comes from hxfuse.render.tex,
# not hxfuse.render.latex, so editing the table code does not rerun aggregation
from hxfuse.render.tex import tex_escape

FAMILIES = ("granularity", "ratio", "share", "bandwidth", "wait")
X_MEASURED = ("M/V", "M/D", "M/partners", "longest")


# --------------------------------------------------------------------------
# summary column


def add_control_share(summary: pd.DataFrame) -> pd.DataFrame:
    """Add ``control_overhead_share`` (= control_overhead_ns / makespan_ns) and
    its ``_lo``/``_hi`` (the control overhead's interval over the same median
    makespan: the makespan's own interval is much narrower relative to it)
    to every row that has both; NaN elsewhere (alone rows, empty tables).
    Returns a new frame; the input is not changed."""
    out = summary.copy()
    cols = ("control_overhead_share", "control_overhead_share_lo", "control_overhead_share_hi")
    if not {"control_overhead_ns", "makespan_ns"} <= set(out.columns):
        for c in cols:
            out[c] = np.nan
        return out
    mk = pd.to_numeric(out["makespan_ns"], errors="coerce")
    mk = mk.where(mk > 0)
    for c, src in zip(cols, ("control_overhead_ns", "control_overhead_lo_ns", "control_overhead_hi_ns")):
        num = pd.to_numeric(out[src], errors="coerce") if src in out else np.nan
        out[c] = num / mk
    return out


# --------------------------------------------------------------------------
# measured x


def _alone(summary: pd.DataFrame) -> dict[str, dict[str, float]]:
    """point_id -> {task: median alone duration in ns}."""
    a = summary[summary["group"] == "alone"]
    out: dict[str, dict[str, float]] = {}
    for r in a.itertuples(index=False):
        r = r._asdict()
        task = r["workload"]
        v = r.get(f"{task}_duration_ns")
        if task in TASKS and v is not None and math.isfinite(float(v)):
            out.setdefault(r["point_id"], {})[task] = float(v)
    return out


def measured_value(alone: dict[str, float], workload: str, how: str) -> float:
    """The measured x of one point from its alone medians (NaN when a task
    it needs is missing).  ``longest`` is in milliseconds."""
    tasks = WORKLOAD_TASKS.get(workload, ())
    t = {k: v for k, v in alone.items() if k in tasks}
    if how == "longest":
        return max(t.values()) / 1e6 if t else math.nan
    if "M" not in t:
        return math.nan
    if how == "M/partners":
        partners = [v for k, v in t.items() if k != "M"]
        return t["M"] / max(partners) if partners else math.nan
    if how in ("M/V", "M/D"):
        other = how[-1]
        return t["M"] / t[other] if other in t else math.nan
    raise ValueError(f"x_measured: {how!r} is not one of {X_MEASURED}")


def measured_x(summary: pd.DataFrame, sweep: str, how: str | None) -> pd.DataFrame:
    """One row per (workload, point) of *sweep*: ``x_nominal``, ``x`` (the
    measured value, or the nominal where *how* is None) and ``label`` (the
    point's label, with the nominal x)."""
    s = summary[(summary["sweep"] == sweep) & summary["group"].isin(("A", "B", "C", "D"))]
    alone = _alone(summary[summary["sweep"] == sweep])
    rows = []
    for (pid, w), g in s.groupby(["point_id", "workload"], sort=False):
        r = g.iloc[0]
        xn = float(r["x"])
        x = measured_value(alone.get(pid, {}), w, how) if how else xn
        rows.append(
            {
                "point_id": pid,
                "workload": w,
                "point": r["point"],
                "x_nominal": xn,
                "x": x,
                "label": str(r.get("label", r["point"])),
            }
        )
    return pd.DataFrame(rows, columns=["point_id", "workload", "point", "x_nominal", "x", "label"])


def x_axis_label(sweep_cfg: dict) -> str:
    how = sweep_cfg.get("x_measured")
    if how == "longest":
        return "measured longest alone time T_ideal [ms]"
    if how == "M/partners":
        return "measured T_M / max(T_partner)  (alone medians)"
    if how in ("M/V", "M/D"):
        return f"measured T_M / T_{how[-1]}  (alone medians)"
    return sweep_cfg.get("variable", "point")


# --------------------------------------------------------------------------
# the figure

SPEEDUPS = [
    ("D/A", "D", "speedup_over_A"),
    ("D/B", "D", "speedup_over_B"),
    ("D/C", "D", "speedup_over_C"),
    ("C/A", "C", "speedup_over_A"),
]

# the quantity each family is about: (title, [(label, group, column, lo, hi, scale)])
_SCRATCH = (
    "scratch peak each variant needs",
    "scratch peak [MiB]",
    False,
    [
        ("D", "D", "scratch_peak_bytes", None, None, 2.0**-20),
        ("C", "C", "scratch_peak_bytes", None, None, 2.0**-20),
    ],
)
# the quantities each family is about, one panel each below the speedups:
# (title, y label, log y, [(series, group, column, lo, hi, scale)])
SECONDARY = {
    "granularity": [
        (
            "control overhead / makespan",
            "share of the makespan",
            False,
            [
                ("A", "A", "control_overhead_share", "control_overhead_share_lo", "control_overhead_share_hi", 1.0),
                ("C", "C", "control_overhead_share", "control_overhead_share_lo", "control_overhead_share_hi", 1.0),
                ("D", "D", "control_overhead_share", "control_overhead_share_lo", "control_overhead_share_hi", 1.0),
            ],
        )
    ],
    "ratio": [
        (
            "parallelism (engines making progress at once)",
            "parallelism",
            False,
            [
                ("D", "D", "parallelism", "parallelism_lo", "parallelism_hi", 1.0),
                ("B", "B", "parallelism", "parallelism_lo", "parallelism_hi", 1.0),
            ],
        )
    ],
    "share": [
        (
            "D's parallelism",
            "parallelism",
            False,
            [
                ("D", "D", "parallelism", "parallelism_lo", "parallelism_hi", 1.0),
            ],
        ),
        _SCRATCH,
    ],
    "bandwidth": [
        (
            "achieved bandwidth per task in D (alone: open marker)",
            "GB/s",
            False,
            [
                ("V in D", "D", "V_bandwidth_GBps", None, None, 1.0),
                ("D in D", "D", "D_bandwidth_GBps", None, None, 1.0),
                ("V alone", "alone:V", "V_bandwidth_GBps", None, None, 1.0),
                ("D alone", "alone:D", "D_bandwidth_GBps", None, None, 1.0),
            ],
        )
    ],
    "wait": [
        (
            "host-visible latency of V's completion in D",
            "latency [µs]",
            True,
            [
                ("early completion (host_seen - end)", "D", "V_host_seen_latency_ns", None, None, 1e-3),
                ("at the entry's return (wait_end - end)", "D", "V_latency_no_early_ns", None, None, 1e-3),
            ],
        ),
        _SCRATCH,
    ],
}
SPEEDUP_COLORS = {"D/A": "#C44E52", "D/B": "#8172B3", "D/C": "#DD8452", "C/A": "#CCB974"}
SECONDARY_COLORS = ["#1b4f72", "#7d6608", "#117a65", "#6c3483"]


def _rows(summary: pd.DataFrame, sweep: str, group: str) -> pd.DataFrame:
    s = summary[summary["sweep"] == sweep]
    if group.startswith("alone:"):
        task = group.split(":")[1]
        a = s[(s["group"] == "alone") & (s["workload"] == task)].copy()
        # alone rows carry the task letter as workload; key them by the point's
        a["workload"] = a["point_id"].str.split("/").str[1]
        return a
    return s[s["group"] == group]


def family_long(summary: pd.DataFrame, sweep: str, sweep_cfg: dict) -> pd.DataFrame:
    """The figure's data: one row per (panel, series, workload, point) with
    x (measured or nominal), value, lo, hi."""
    xs = measured_x(summary, sweep, sweep_cfg.get("x_measured"))
    key = xs.set_index(["point_id", "workload"])
    rows = []

    def add(panel, series, df, col, lo, hi, scale):
        for r in df.itertuples(index=False):
            r = r._asdict()
            k = (r["point_id"], r["workload"])
            if k not in key.index or col not in r:
                continue
            v = r[col]
            if v is None or not np.isfinite(float(v)):
                continue
            x = key.loc[k]
            ok = r.get("point_ok", True)
            if panel == "speedup" and not (ok is True or str(ok).lower() in ("true", "1")):
                continue
            rows.append(
                {
                    "panel": panel,
                    "series": series,
                    "workload": r["workload"],
                    "point": x["point"],
                    "label": x["label"],
                    "x": float(x["x"]),
                    "x_nominal": float(x["x_nominal"]),
                    "value": float(v) * scale,
                    "lo": float(r[lo]) * scale if lo and lo in r and r[lo] == r[lo] else math.nan,
                    "hi": float(r[hi]) * scale if hi and hi in r and r[hi] == r[hi] else math.nan,
                }
            )

    for label, group, col in SPEEDUPS:
        add("speedup", label, _rows(summary, sweep, group), col, f"{col}_lo", f"{col}_hi", 1.0)
    fam = sweep_cfg.get("family")
    for i, (_, _, _, series) in enumerate(SECONDARY.get(fam, [])):
        for label, group, col, lo, hi, scale in series:
            add(f"secondary{i}", label, _rows(summary, sweep, group), col, lo, hi, scale)
    return pd.DataFrame(
        rows, columns=["panel", "series", "workload", "point", "label", "x", "x_nominal", "value", "lo", "hi"]
    )


# --------------------------------------------------------------------------
# the paper

FAMILY_CAPTIONS = {
    "granularity": "The three workloads at similar duration ratios with task sizes from tens of "
    "microseconds to milliseconds; below, the control overhead (the same group with "
    "empty tasks) as a share of the makespan: where it is large, merging the entry "
    "(C/A) and the host round trips decide the result.",
    "ratio": "The duration ratio of M to its partners on the measured axis (each point at "
    "T\\textsubscript{M}/T\\textsubscript{V} or T\\textsubscript{M}/T\\textsubscript{D} of "
    "its own alone medians, labelled with its nominal name); below, D's and B's parallelism "
    "(task CPU time over makespan; the band is no progress overlap).",
    "share": "One resource-share variable at a time against the base point (V workers, M's tile, "
    "D's descriptor rows, the fused entry's concurrency window); below, the scratch peak "
    "each variant needs.",
    "bandwidth": "V's memory-bound stream variant next to M (and D), without and with a bandwidth "
    "antagonist thread, and the compute-bound DDR variant as a control; below, each "
    "task's achieved bandwidth inside group D and alone.",
    "wait": "One wait or buffer-plan variable at a time against the base point (spin vs spin-then-"
    "block, early completion, window 1 vs all, D double-buffered, V's scratch released at "
    "the entry's end); below, how late the host learns of V's completion.",
}


def families_tex(targets: Sequence[str], sweeps: dict, min_effect: float) -> str:
    """Figure environments (paths relative to paper/) of every family sweep
    of every non-emulated target, each with its family's caption."""
    out = ["% Generated by hxfuse.sweep.families (rule `families_tex`); do not edit."]
    n = 0
    for t in targets:
        for s, sw in sweeps.items():
            fam = sw.get("family")
            if not fam:
                continue
            n += 1
            title = tex_escape(sw.get("title", s))
            band = (
                f"Top: paired speedups (median, bootstrap 95\\% interval); grey band: "
                f"1 $\\pm$ {min_effect:g}, no difference."
            )
            out += [
                r"\begin{figure}[tbp]",
                r"\centering",
                rf"\includegraphics[width=\linewidth]{{../results/{t}/figures/family_{s}.pdf}}",
                (
                    rf"\caption{{{title} ({fam} family), target \texttt{{{tex_escape(t)}}}. "
                    rf"{FAMILY_CAPTIONS[fam]} {band} Its points are the rows of sweep "
                    rf"\texttt{{{tex_escape(s)}}} in the results table.}}"
                ),
                rf"\label{{fig:family-{t}-{s}}}",
                r"\end{figure}",
                "",
            ]
    if not n:
        out.append("% no family sweep in this study (config/studies/full.yaml has them)")
    return "\n".join(out) + "\n"
