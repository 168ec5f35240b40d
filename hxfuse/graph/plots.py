"""Figures of the graph points (workload 4): the ready-task profile of a
graph and the speedups of D over A, B and C.  Drawing only: the numbers come
from hxfuse.graph.build (profile) and hxfuse.graph.stats (summary)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from hxfuse.render.style import plt, save

CLASS_COLOURS = {"M": "#1f77b4", "V": "#ff7f0e", "D": "#2ca02c"}
SPEEDUP_COLOURS = {"DA": "#1f77b4", "DB": "#d62728", "DC": "#9467bd"}


def profile_figure(profile: pd.DataFrame, title: str, out: Sequence[str]) -> None:
    """Stacked bars: ready nodes per topological (ASAP) step by engine class."""
    wide = profile.pivot(index="step", columns="class", values="ready").fillna(0)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.35 * len(wide) + 2), 2.8))
    bottom = np.zeros(len(wide))
    for c in ("M", "V", "D"):
        vals = wide[c].to_numpy() if c in wide else np.zeros(len(wide))
        ax.bar(wide.index, vals, bottom=bottom, color=CLASS_COLOURS[c], label=c, width=0.8)
        bottom += vals
    ax.set_xlabel("topological step (ASAP level)")
    ax.set_ylabel("ready nodes")
    ax.set_title(title, fontsize=9)
    ax.set_xticks(list(wide.index))
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(title="engine class", fontsize=8, title_fontsize=8, frameon=False)
    save(fig, out, dpi=150)


def speedup_figure(summary: pd.DataFrame, min_effect: float, out: Sequence[str]) -> None:
    """D/A, D/B, D/C per graph point with their intervals; device time
    (filled markers) beside end-to-end time (open markers); the band 1 +/-
    min_effect shaded.  Failed points are named below, with no marker."""
    ok = summary[~summary["failed"]].reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(max(4.5, 1.3 * max(len(ok), 1) + 2), 3.0))
    ax.axhspan(1 - min_effect, 1 + min_effect, color="0.9", zorder=0)
    ax.axhline(1.0, color="0.5", lw=0.8, zorder=1)
    for i, row in ok.iterrows():
        for j, key in enumerate(("DA", "DB", "DC")):
            for k, t in enumerate(("device", "e2e")):
                x = i + (j - 1) * 0.25 + (k - 0.5) * 0.1
                v, lo, hi = row[f"{key}_{t}"], row[f"{key}_{t}_lo"], row[f"{key}_{t}_hi"]
                ax.errorbar(
                    [x],
                    [v],
                    yerr=[[v - lo], [hi - v]],
                    fmt="o" if t == "device" else "s",
                    color=SPEEDUP_COLOURS[key],
                    mfc=SPEEDUP_COLOURS[key] if t == "device" else "white",
                    ms=4,
                    capsize=2,
                    lw=1,
                    label=f"{key[0]}/{key[1]} ({'device' if t == 'device' else 'end to end'})" if i == 0 else None,
                )
    ax.set_xticks(range(len(ok)))
    ax.set_xticklabels([f"{r['label']}" for _, r in ok.iterrows()], fontsize=7, rotation=15, ha="right")
    ax.set_ylabel("speedup of D (paired, 95% CI)")
    failed = summary[summary["failed"]]
    title = "graphs: D against A, B, C"
    if len(failed):
        title += "\nfailed (no speedup): " + ", ".join(failed["point"])
    if "loaded" in summary and summary["loaded"].any():
        title += "\nloaded machine (no verdict): " + ", ".join(summary.loc[summary["loaded"].astype(bool), "point"])
    ax.set_title(title, fontsize=9)
    if len(ok):
        ax.legend(fontsize=6, ncol=3, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3))
    save(fig, out, dpi=150)


def timeline_figure(nodes: pd.DataFrame, trials: pd.DataFrame, title: str, out: Sequence[str]) -> None:
    """Gantt chart of one graph point: per group the round with the median
    device time, one row per engine, each node a bar from begin to end
    coloured by class, its launch a tick (the gap is the time it waited in
    its queue or for a core).  *nodes*: hxfuse.graph.stats.node_table;
    *trials*: trial_table (the same replicate)."""
    groups = [g for g in ("A", "B", "C", "D") if g in set(trials["group"])]
    fig, axes = plt.subplots(len(groups), 1, figsize=(7.0, 1.1 * len(groups) + 0.8), sharex=False, squeeze=False)
    engines = ["mx", "vec", "dma"]
    for ax, g in zip(axes[:, 0], groups):
        sub = trials[trials["group"] == g].sort_values("device_ns")
        rnd = sub.iloc[(len(sub) - 1) // 2]["round"]
        t = nodes[(nodes["group"] == g) & (nodes["round"] == rnd)]
        t0 = t["host_begin"].iloc[0]
        for _, n in t.iterrows():
            y = engines.index(n["engine"])
            ax.barh(
                y,
                (n["end"] - n["begin"]) / 1e3,
                left=(n["begin"] - t0) / 1e3,
                height=0.6,
                color=CLASS_COLOURS[n["class"]],
                edgecolor="black",
                lw=0.3,
            )
            ax.plot([(n["launch"] - t0) / 1e3] * 2, [y - 0.35, y + 0.35], color="0.3", lw=0.5)
        end = (t["host_end"].iloc[0] - t0) / 1e3
        ax.axvline(end, color="red", lw=0.8)
        ax.set_yticks(range(len(engines)))
        ax.set_yticklabels(engines, fontsize=7)
        ax.set_ylim(-0.6, len(engines) - 0.4)
        ax.set_xlim(0, None)
        ax.set_ylabel(g, rotation=0, ha="right", va="center", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        ax.text(end, len(engines) - 0.45, f" {end:.0f} us", color="red", fontsize=6, va="top")
    axes[-1, 0].set_xlabel(
        "time since the host's first submit (us); ticks: launches; red: host sees the last completion", fontsize=7
    )
    axes[0, 0].set_title(title, fontsize=9)
    save(fig, out, dpi=150)
