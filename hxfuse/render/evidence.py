"""The evidence figures of a timed target (rule ``figure_evidence``), drawn to
be printed at the paper's text width at their natural size (no text below
:data:`hxfuse.render.style.MIN_TEXT_PT`; legends outside the data):

- :func:`completion_figure` (``evidence.pdf``): (a) group D, when the host
  learns of each task's end with the early-completion interface against the
  entry's single return; (b) the scratch peak of A, C and D against their
  speedup over A, the points that do not use the scratch arena in a column
  of their own marked "not used" (a peak of 0 MiB would read as measured).
- :func:`points_figure` (``evidence_points.pdf``): one row per point, panels
  sharing it: (c) preparation share of end to end (A, C, D), (d) D's
  parallelism with its interval, (e) D's largest wall-clock overlap (its own
  x range, so that 0.90 and 0.99 differ visibly), (f) the fused entry's
  share of D's makespan, (g) each task's running share of its span in D.

The numbers come from :func:`evidence_frame` and :func:`latency_pairs`
(here, which hxfuse.paper.sections's sentences read too).  On the host,
task D is a memcpy thread that occupies a core, not a DMA engine, and the
engines are threads.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

# matplotlib only inside the drawing functions: hxfuse.paper.sections
# imports the data helpers below for its sentences without a plot backend

TASK_COLORS = {"M": "#4C72B0", "V": "#DD8452", "D": "#55A868"}
GROUP_STYLE = {"A": ("#8c8c8c", "o"), "C": ("#CCB974", "s"), "D": ("#C44E52", "^")}
FONT = 7.0  # tick labels, legends
SMALL = 6.5  # point names


def evidence_frame(s: pd.DataFrame) -> pd.DataFrame:
    """Per point x workload x group (A, C, D) of a timed target: the columns
    the evidence figure and its sentences read (correct points only)."""
    if s.empty:
        return pd.DataFrame()
    ok = s["point_ok"].astype(str).str.lower().isin(["true", "1"]) if "point_ok" in s else True
    d = s[ok & s["group"].isin(["A", "C", "D"])].copy()
    num = lambda c: pd.to_numeric(d[c], errors="coerce") if c in d else pd.Series(math.nan, index=d.index)
    d["prep_share"] = (num("end_to_end_ns") - num("makespan_ns")) / num("end_to_end_ns")
    d["scratch_mib"] = num("scratch_peak_bytes") / 2**20
    d["speedup_A"] = num("speedup_over_A").where(d["group"] != "A", 1.0)
    return d


def latency_pairs(s: pd.DataFrame) -> pd.DataFrame:
    """Group D, per point and task: the latency from the task's end to the
    host seeing it with early completion and without (the entry's return)."""
    rows = []
    if s.empty:
        return pd.DataFrame(columns=["point_id", "task", "early_ns", "no_early_ns"])
    for r in s[s["group"] == "D"].to_dict(orient="records"):
        for t in "MVD":
            e, n = r.get(f"{t}_host_seen_latency_ns"), r.get(f"{t}_latency_no_early_ns")
            if _fin(e) and _fin(n) and float(e) > 0 and float(n) > 0:
                rows.append({"point_id": r["point_id"], "task": t, "early_ns": float(e), "no_early_ns": float(n)})
    return pd.DataFrame(rows, columns=["point_id", "task", "early_ns", "no_early_ns"])


def _fin(v) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _num(d: pd.DataFrame, c: str) -> pd.Series:
    return pd.to_numeric(d[c], errors="coerce") if c in d else pd.Series(math.nan, index=d.index)


def _legend_below(ax, ncol: int = 3, below: float = 0.2) -> None:
    """The panel's legend under its axes (*below*: axes fractions under its
    bottom edge, past the tick labels and x label), never over its data."""
    h, l = ax.get_legend_handles_labels()
    if h:
        ax.legend(
            h, l, loc="upper center", bbox_to_anchor=(0.5, -below), ncol=ncol, fontsize=FONT, frameon=False,
            handletextpad=0.3, columnspacing=0.8,
        )  # fmt: skip


def draw_completion(s: pd.DataFrame, target: str):
    """(a) early completion and (b) scratch peak against speedup: the figure."""
    from hxfuse.render import style
    from hxfuse.render.style import plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(style.FIG_WIDTH_IN, 2.7))
    lp = latency_pairs(s)
    for t, g in lp.groupby("task"):
        a.scatter(g["no_early_ns"] / 1e3, g["early_ns"] / 1e3, s=14, label=f"task {t}", color=TASK_COLORS.get(t))
    if len(lp):
        lo = min(lp["early_ns"].min(), lp["no_early_ns"].min()) / 1e3 / 2
        hi = max(lp["early_ns"].max(), lp["no_early_ns"].max()) / 1e3 * 2
        a.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="no gain")
        a.set_xscale("log")
        a.set_yscale("log")
    else:
        a.text(0.5, 0.5, "no early-completion records", ha="center", va="center", transform=a.transAxes, fontsize=FONT)
    a.set_xlabel("without early completion [µs]", fontsize=FONT)
    a.set_ylabel("with early completion [µs]", fontsize=FONT)
    a.set_title("(a) task end to host seeing it, group D", fontsize=7.5)
    _legend_below(a, 4, 0.3)

    ev = evidence_frame(s)
    if len(ev):
        used = ev["scratch_mib"] > 0
        peak = ev.loc[used, "scratch_mib"]
        # points without the arena sit in a column of their own, left of the
        # axis break: their "peak" is no measurement
        gap = (peak.max() - peak.min()) if len(peak) else 1.0
        x0 = (peak.min() if len(peak) else 0.0) - max(gap * 0.25, 0.5)
        x = ev["scratch_mib"].where(used, x0)
        for _, g in ev.assign(_x=x).groupby("point_id"):
            g = g.set_index("group").reindex([k for k in "ACD" if k in set(g["group"])])
            b.plot(g["_x"], g["speedup_A"], "-", color="0.82", lw=0.6, zorder=1)
        for grp, (color, mk) in GROUP_STYLE.items():
            gg = ev[ev["group"] == grp]
            b.scatter(x[gg.index], gg["speedup_A"], marker=mk, s=16, color=color, label=f"group {grp}", zorder=2)
        b.axhline(1.0, color="k", ls="--", lw=0.7)
        if (~used).any():
            b.axvline(x0 + max(gap * 0.125, 0.25), color="0.5", lw=0.6, ls=":")
            # round ticks over the measured range (not the peaks themselves:
            # close peaks would print over each other, and a cap on their
            # number left the largest unlabelled)
            from matplotlib.ticker import MaxNLocator

            pmin, pmax = float(peak.min()), float(peak.max())
            nice = MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]).tick_values(pmin, pmax)
            eps = 1e-9 * max(1.0, pmax)
            inner = [float(t) for t in nice if pmin - eps <= t <= pmax + eps] or [round(pmin, 1)]
            ticks = [x0] + inner
            b.set_xticks(ticks)
            b.set_xticklabels(["not\nused"] + [f"{v:g}" for v in ticks[1:]], fontsize=FONT)
    b.set_xlabel("scratch peak [MiB]", fontsize=FONT)
    b.set_ylabel("speedup over A (median)", fontsize=FONT)
    b.set_title("(b) scratch peak against speedup", fontsize=7.5)
    _legend_below(b, 3, 0.36)
    for ax in (a, b):
        ax.tick_params(labelsize=FONT)
    fig.tight_layout(w_pad=1.5)
    return fig


def draw_points(s: pd.DataFrame, target: str, min_effect: float = 0.03):
    """(c)-(g), one row per point of group D (and A, C for (c)): the figure."""
    from hxfuse.render import style
    from hxfuse.render.style import plt

    d = s[s["group"] == "D"] if len(s) else s
    if "point_ok" in d:
        d = d[d["point_ok"].astype(str).str.lower().isin(["true", "1"])]
    d = d.sort_values("point_id")
    names = list(d["point_id"])
    y = np.arange(len(names))
    height = max(2.0, 0.13 * len(names) + 1.3)
    fig, axes = plt.subplots(
        1, 5, figsize=(style.FIG_WIDTH_IN, height), sharey=True, gridspec_kw={"width_ratios": [1, 1, 0.8, 0.8, 1]}
    )
    c, p, w, f, r = axes
    ev = evidence_frame(s)
    if len(ev):
        piv = ev.pivot_table(index="point_id", columns="group", values="prep_share", aggfunc="first").reindex(names)
        for grp, (color, mk) in GROUP_STYLE.items():
            if grp in piv:
                c.scatter(100 * piv[grp], y, marker=mk, s=12, color=color, label=grp, zorder=2)
    c.set_title("(c) preparation\nshare [%]", fontsize=7)
    _legend_below(c, 3)

    par, lo, hi = _num(d, "parallelism"), _num(d, "parallelism_lo"), _num(d, "parallelism_hi")
    p.axvspan(min(0.9, np.nanmin(lo.to_numpy(float), initial=1.0)), 1 + min_effect, color="0.9", lw=0, zorder=0)
    p.hlines(y, lo, hi, color="#4C72B0", lw=1.0, zorder=2)
    p.scatter(par, y, s=10, color="#4C72B0", zorder=3, label="D")
    p.set_title("(d) parallelism of D\n(CPU time / makespan)", fontsize=7)

    wall = _num(d, "overlap_max")
    w.scatter(wall, y, s=10, color="0.3", zorder=3)
    w.set_title("(e) wall-clock\noverlap of D", fontsize=7)

    mk, dev = _num(d, "makespan_ns"), _num(d, "device_ns")
    f.barh(y, 100 * dev / mk, color="#55A868", height=0.6, label="entry")
    f.barh(y, 100 * (mk - dev) / mk, left=100 * dev / mk, color="0.75", height=0.6, label="host")
    f.set_xlim(0, 100)
    f.set_title("(f) D's makespan\n[%]", fontsize=7)
    _legend_below(f, 2)

    for i, t in enumerate("MVD"):
        col = f"{t}_run_share"
        if col in d:
            r.scatter(_num(d, col), y + (i - 1) * 0.22, s=9, color=TASK_COLORS[t], label=t, zorder=2)
    r.axvline(1.0, color="k", ls="--", lw=0.6)
    r.set_title("(g) run share\nof each task in D", fontsize=7)
    _legend_below(r, 3)

    c.set_yticks(y, names, fontsize=SMALL)
    c.set_ylim(len(names) - 0.5, -0.5)
    for ax in axes:
        ax.tick_params(axis="x", labelsize=FONT)
        ax.grid(axis="y", lw=0.3, alpha=0.6)
        ax.locator_params(axis="x", nbins=3)
    fig.tight_layout(w_pad=0.6)
    return fig


def evidence_figures(
    s: pd.DataFrame, out_completion: Sequence[str], out_points: Sequence[str], target: str, min_effect: float = 0.03
) -> None:
    """Both evidence figures of *target*'s summary *s*, written to their paths."""
    from hxfuse.render import style
    from hxfuse.render.style import save

    style.apply()
    save(draw_completion(s, target), out_completion)
    save(draw_points(s, target, min_effect), out_points)
