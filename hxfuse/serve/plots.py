"""Figures of the service mode (rule serve_figures): drawing only; every
number comes from hxfuse.serve.stats's tables."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from hxfuse.render.style import plt, save

POLICY_STYLE = {
    "A": ("#7f7f7f", "A FIFO serial"),
    "B": ("#1f77b4", "B engine queues"),
    "D": ("#d62728", "D fused pairing"),
}


def _plain_log_ticks(axis) -> None:
    """A log axis labelled 1, 2, 5 x 10^k in plain numbers (2, 5, 10 ms), not 2 x 10^0."""
    import matplotlib.ticker as mticker

    axis.set_major_locator(mticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(mticker.NullFormatter())


def latency_cdf(requests: pd.DataFrame, out: Sequence[str | Path]) -> None:
    """One panel per point: the empirical CDF of request latency per policy
    (all replicates and repetitions pooled), log-scaled latency."""
    pts = requests[["point", "rate", "window_us"]].drop_duplicates().sort_values(["rate", "window_us"])
    n = len(pts)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    # constrained layout: titles and tick labels of stacked panels must not collide
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False, layout="constrained")
    for ax, (_, p) in zip(axes.ravel(), pts.iterrows()):
        g = requests[requests["point"] == p["point"]]
        for pol, (color, label) in POLICY_STYLE.items():
            lat = np.sort(g.loc[g["policy"] == pol, "latency_ns"].to_numpy(float)) / 1e6
            if len(lat):
                ax.step(lat, np.arange(1, len(lat) + 1) / len(lat), where="post", color=color, label=label)
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.set_xlabel("latency (ms)")
        ax.set_ylabel("fraction of requests")
        ax.set_title(f"{p['point']}: {p['rate']:g}/s, w = {p['window_us']} us", fontsize=9)
        ax.axhline(0.99, color="k", lw=0.5, ls=":")
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=8, loc="lower right")
    save(fig, out, dpi=150)


def versus(summary: pd.DataFrame, x: str, xlabel: str, out: Sequence[str | Path]) -> None:
    """p99 latency, short-task p99 and deadline miss rate per policy against x
    (rate or window_us): one line per policy (colour) and per value of the
    other variable (line style) that has at least two x values (all of them
    when none has: a study of one point); medians with their bootstrap
    intervals as error bars, latencies on a log scale."""
    from matplotlib.lines import Line2D

    other = "window_us" if x == "rate" else "rate"
    metrics = (
        ("p99_ms", "p99 latency (ms)"),
        ("short_p99_ms", "bandwidth-request p99 (ms)"),
        ("miss_rate", "deadline miss rate"),
    )
    # constrained layout: a log axis's tick labels must not run into the next panel's label
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained")
    s = summary[summary["policy"].isin(POLICY_STYLE)]
    counts = s.groupby(other)[x].nunique()
    series = sorted(counts[counts >= 2].index) or sorted(counts.index)
    styles = dict(zip(series, ["-", "--", ":", "-."] * 8))
    # policies drawn side by side (a small x offset each) so their intervals
    # do not hide one another
    xs = s[x].astype(float)
    span = float(xs.max() - xs.min()) or float(abs(xs.max())) or 1.0
    for ax, (m, label) in zip(axes, metrics):
        d = s[s["metric"] == m]
        for ov in series:
            for k, (pol, (color, _)) in enumerate(POLICY_STYLE.items()):
                g = d[(d[other] == ov) & (d["policy"] == pol)].sort_values(x)
                if g.empty:
                    continue
                err = np.vstack([g["median"] - g["lo"], g["hi"] - g["median"]])
                ax.errorbar(
                    g[x] + (k - 1) * 0.012 * span,
                    g["median"],
                    yerr=err,
                    color=color,
                    ls=styles[ov],
                    marker="o",
                    ms=3,
                    capsize=2,
                )
        if m.endswith("_ms"):
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    handles = [Line2D([], [], color=c, label=lab) for c, lab in POLICY_STYLE.values()]
    handles += [Line2D([], [], color="k", ls=styles[ov], label=f"{other} {ov:g}") for ov in series]
    axes[0].legend(handles=handles, fontsize=7)
    save(fig, out, dpi=150)
