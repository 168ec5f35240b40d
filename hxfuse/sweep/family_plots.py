"""The family figure: one figure per family sweep (hxfuse.sweep.families).

Top row: the paired speedups D/A, D/B, D/C, C/A with their 95% intervals and
the band 1 +/- min_effect inside which a difference does not count; bottom
row: the quantity the family is about (hxfuse.sweep.families.SECONDARY).  x is the
measured quantity where the sweep says ``x_measured`` (each point labelled
with its nominal name), the sweep's log axis where it has one, and the
points in order (categorical) otherwise.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

import numpy as np
import pandas as pd

from hxfuse.render import style
from hxfuse.render.style import plt, save
from hxfuse.sweep import plots
from hxfuse.sweep.families import (
    SECONDARY,
    SECONDARY_COLORS,
    SPEEDUP_COLORS,
    add_control_share,
    family_long,
    x_axis_label,
)


def family_figure(summary_csv: str, sweep: str, sweep_cfg: dict, min_effect: float, out: Sequence[str]) -> pd.DataFrame:
    """One figure per family sweep (PDF and PNG): top row the paired speedups
    with 95% intervals and the band 1 ± min_effect where a difference does not
    count; bottom row the family's own quantity.  One column per workload;
    x is the measured quantity where the sweep says ``x_measured`` (each
    point labelled with its nominal name), else the sweep's own x."""
    summary = pd.read_csv(summary_csv, low_memory=False)
    style.apply()
    if plots.is_emulated_table(summary):
        plots.emulated_notice(out, f"family figure of sweep {sweep}")
        return pd.DataFrame()
    summary = add_control_share(summary) if "control_overhead_share" not in summary else summary
    long = family_long(summary, sweep, sweep_cfg) if len(summary) else pd.DataFrame()
    long, interval = _decision_intervals(long, summary, sweep)
    workloads = [w for w in sweep_cfg.get("workloads", []) if len(long) and w in set(long["workload"])]
    if not workloads:
        style.notice(out, f"sweep {sweep}: no summarised points")
        return long
    fam = sweep_cfg.get("family")
    panels = ["speedup"] + [f"secondary{i}" for i in range(len(SECONDARY.get(fam, [])))]
    nrows = len(panels)
    measured = bool(sweep_cfg.get("x_measured"))
    log_x = bool(sweep_cfg.get("log_x")) or sweep_cfg.get("x_measured") in ("longest",)
    categorical = not measured and not log_x
    fig, axes = plt.subplots(
        nrows,
        len(workloads),
        figsize=(style.FIG_WIDTH_IN, 2.4 * nrows + 0.6),
        squeeze=False,
        sharex="col",
    )
    for j, w in enumerate(workloads):
        sub = long[long["workload"] == w]
        pts = sub.drop_duplicates("point").sort_values("x")
        xpos = _xpos_of(pts, categorical, log_x)
        for i, panel in enumerate(panels):
            ax = axes[i, j]
            _draw_panel_series(ax, sub[sub["panel"] == panel], panel, fam, xpos, categorical)
            if panel == "speedup":
                _speedup_panel_frame(ax, w, j, min_effect, interval)
            else:
                _secondary_panel_frame(ax, fam, i, j, min_effect, len(workloads))
            _family_xaxis(ax, pts, log_x, categorical)
    # one x label for the figure: at the text width, one per column collide
    fig.supxlabel("point" if categorical else x_axis_label(sweep_cfg), fontsize=8)
    plots.speedup_pair_legend(fig, axes[0, 0])
    note = sweep_cfg.get("note")
    fig.suptitle(sweep_cfg.get("title", sweep), y=1.06, fontsize=10)
    if note:
        fig.text(0.5, -0.02, note, ha="center", fontsize=7.5, wrap=True)
    fig.tight_layout()
    save(fig, out)
    return long


def _xpos_of(pts: pd.DataFrame, categorical: bool, log_x: bool):
    """``xpos(df, k, n)``: the x of each row of *df* for series k of n (dodged
    around a categorical or log x; *pts* gives the order of the points)."""
    order = {p: i for i, p in enumerate(pts["point"])}

    def xpos(df, k=0, n=1):
        if categorical:
            return df["point"].map(order).to_numpy(float) + (k - (n - 1) / 2) * 0.08
        x = df["x"].to_numpy(float)
        return x * (10 ** ((k - (n - 1) / 2) * 0.02)) if log_x else x

    return xpos


def _decision_intervals(long: pd.DataFrame, summary: pd.DataFrame, sweep: str) -> tuple[pd.DataFrame, str]:
    """The speedup rows of *long* with the interval the verdict reads
    (hxfuse.sweep.plots.decision_interval, the one accessor), and its name."""
    from hxfuse.sweep.families import SPEEDUPS

    name = plots.DECISION_INTERVAL
    if long.empty:
        return long, name
    out = long.copy()
    s = summary[summary["sweep"] == sweep]
    for label, group, col in SPEEDUPS:
        g = s[s["group"] == group]
        if col not in g:
            continue
        lo, hi, name = plots.decision_interval(g, col)
        bounds = {(p, w): (a, b) for p, w, a, b in zip(g["point"], g["workload"], lo, hi)}
        sel = (out["panel"] == "speedup") & (out["series"] == label)
        keys = list(zip(out.loc[sel, "point"], out.loc[sel, "workload"]))
        out.loc[sel, "lo"] = [bounds.get(k, (np.nan, np.nan))[0] for k in keys]
        out.loc[sel, "hi"] = [bounds.get(k, (np.nan, np.nan))[1] for k in keys]
    return out, name


def _draw_panel_series(ax, p: pd.DataFrame, panel: str, fam, xpos, categorical: bool = False) -> None:
    """Every series of one panel, with its interval where it has one.  A
    line joins points only in a secondary panel over a measured or numeric
    x: categories, and the speedups (separate measurements), stay apart."""
    series = list(dict.fromkeys(p["series"]))
    for k, sname in enumerate(series):
        c = p[p["series"] == sname].sort_values("x")
        if panel == "speedup":
            color = SPEEDUP_COLORS.get(sname)
        elif fam == "bandwidth":  # one colour per task, in D and alone
            color = plots.TASK_COLORS.get(sname.split()[0])
        else:
            color = SECONDARY_COLORS[k % len(SECONDARY_COLORS)]
        fmt = "o" if panel == "speedup" or categorical else ("--o" if "alone" in sname else "-o")
        mfc = "white" if "alone" in sname else None
        yerr = None
        if c["lo"].notna().any():
            yerr = np.vstack(
                [(c["value"] - c["lo"]).clip(lower=0).fillna(0), (c["hi"] - c["value"]).clip(lower=0).fillna(0)]
            )
        ax.errorbar(
            xpos(c, k, len(series)),
            c["value"],
            yerr=yerr,
            fmt=fmt,
            ms=4,
            lw=1.2,
            capsize=2.5,
            color=color,
            mfc=mfc,
            label=sname,
        )


def _speedup_panel_frame(ax, w: str, j: int, min_effect: float, interval: str = plots.DECISION_INTERVAL) -> None:
    """The no-difference band, the line at 1, the workload's title."""
    ax.axhspan(1 - min_effect, 1 + min_effect, color="0.85", zorder=0, label=f"no difference (1 ± {min_effect:g})")
    ax.axhline(1.0, color="black", lw=0.7, ls="--")
    ax.set_title(plots.WORKLOAD_TITLES.get(w, w), fontsize=9)
    if j == 0:
        ax.set_ylabel(f"speedup T_Y / T_X\n(median, {interval})")


def _secondary_panel_frame(ax, fam, i: int, j: int, min_effect: float, ncols: int = 2) -> None:
    """Title, y axis and (ratio, share) the no-overlap band of secondary panel i."""
    title, ylabel, log_y, _ = SECONDARY[fam][i - 1]
    # wrapped to the column: at the text width neighbouring titles would run
    # into each other (44 characters of 7.5 pt fill a third of it twice over)
    ax.set_title(textwrap.fill(title, 44 if ncols <= 2 else 26), fontsize=7.5)
    if log_y:
        ax.set_yscale("log")
    if j == 0:
        ax.set_ylabel(ylabel)
    if fam == "ratio" or (fam == "share" and i == 1):
        bottom = min(ax.get_ylim()[0], 0.95)
        # short: the legend must fit inside one of three panels at the text width
        ax.axhspan(bottom, 1 + min_effect, color="0.9", zorder=0, label=f"no overlap (≤ {1 + min_effect:g})")
        ax.set_ylim(bottom=bottom)
    # a panel without the band (share's second) has nothing to name: no legend box
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6.5, loc="best", frameon=False, handlelength=1.2, borderaxespad=0.3)


def _family_xaxis(ax, pts: pd.DataFrame, log_x: bool, categorical: bool) -> None:
    """x scale and ticks: the points in order, or their x labelled with their names."""
    if log_x:
        ax.set_xscale("log")
    ax.minorticks_off()
    if categorical:
        ax.set_xticks(range(len(pts)))
        ax.set_xticklabels(pts["label"], fontsize=7, rotation=30, ha="right")
    else:
        ax.set_xticks(pts["x"].to_numpy(float))
        ax.set_xticklabels([f"{x:.3g}\n{l}" for x, l in zip(pts["x"], pts["label"])], fontsize=7)
