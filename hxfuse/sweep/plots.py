"""Figures of the pipeline (rule family ``figures``), seaborn/matplotlib.

Every figure is written as PDF (for the paper) and PNG (for viewing):

- :func:`timeline_figure`: Gantt chart of one point.  One panel per group
  A-D, each showing that group's representative round (median makespan, see
  hxfuse.analysis.timeline), one row for the host and one per engine.  Task busy
  intervals are coloured by task, waits are hatched, the fused entry (C/D) is
  an outline on the engine that ran it.
- :func:`speedup_figure`: paired speedups D/A, D/B, D/C, C/A, B/A with their
  bootstrap intervals against the swept variable, one panel per workload.
- :func:`slowdown_figure`: per-task slowdown T_i^X / T_i per group against
  the swept variable (median, bootstrap 95% interval over measured rounds),
  one panel per task x workload.

Failed points (correctness check) never get a speedup: they are listed under
the speedup figure.

Emulated targets (the runner's meta says ``emulated``, e.g. ``hexagon-qemu``):
their timelines are drawn with an "EMULATED" title and watermark (the
durations show the schedule under QEMU, not performance); speedup and
slowdown figures are not drawn for them (the pipeline does not request them,
and asked directly these functions draw only a notice).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.patches import Patch, Rectangle

from hxfuse.model import GROUPS
from hxfuse.render import style
from hxfuse.render.style import plt, save
from hxfuse.config.targets import emulated_flag, emulated_results

GROUP_TITLES = {
    "A": "A  existing serial",
    "B": "B  existing concurrency",
    "C": "C  fused, internally serial",
    "D": "D  fused, internally concurrent",
    # the external groups (ONNX Runtime on the host, docs/ort.md)
    "A_ort": "A_ort  ONNX Runtime, one session per task, back to back",
    "B_ort": "B_ort  ONNX Runtime, the sessions run concurrently",
    "B_ort_graph": "B_ort_graph  ONNX Runtime, one graph, ORT_PARALLEL",
}
TASK_COLORS = {"M": "#4C72B0", "V": "#DD8452", "D": "#55A868"}
GROUP_COLORS = {"A": "#8c8c8c", "B": "#8172B3", "C": "#CCB974", "D": "#C44E52"}
COMPARISONS = [  # (label, summary row group, summary column)
    ("D/A", "D", "speedup_over_A"),
    ("D/B", "D", "speedup_over_B"),
    ("D/C", "D", "speedup_over_C"),
    ("C/A", "C", "speedup_over_A"),
    ("B/A", "B", "speedup_over_A"),
]
COMPARISON_COLORS = {"D/A": "#C44E52", "D/B": "#8172B3", "D/C": "#DD8452", "C/A": "#CCB974", "B/A": "#64B5CD"}
WORKLOAD_TITLES = {"mv": "mv: GEMM + vector", "md": "md: GEMM + copy", "mvd": "mvd: GEMM + vector + copy"}


def _time_unit(span_ns: float) -> tuple[float, str]:
    if span_ns >= 5e6:
        return 1e6, "ms"
    if span_ns >= 5e3:
        return 1e3, "µs"
    return 1.0, "ns"


# --------------------------------------------------------------------------
# timeline


def lane_order(lanes) -> list[str]:
    from hxfuse.analysis.metrics import engine_sort_key

    lanes = set(lanes)
    rest = sorted((l for l in lanes if l != "host"), key=engine_sort_key)
    return (["host"] if "host" in lanes else []) + rest


EMULATED_MARK = "EMULATED \u2014 not performance"


def emulated_notice(out: Sequence[str | Path], what: str) -> None:
    """The figure an emulated target gets instead of timings."""
    style.notice(
        out,
        f"{EMULATED_MARK}\n{what}: not drawn for an emulated target\n"
        "(QEMU is a functional model; see the correctness checks)",
        color="#C44E52",
        fontsize=10,
    )


def is_emulated_table(df: pd.DataFrame) -> bool:
    """A summary or trial table of an emulated target (hxfuse.config.targets decides)."""
    return emulated_results(table=df)


def timeline_figure(jsonl: str | Path, check: str | Path | None, title: str, out: Sequence[str | Path]) -> pd.DataFrame:
    """Gantt chart of the representative round of each group.  Returns the intervals.
    For an emulated run the title and a watermark say EMULATED."""
    from hxfuse.runner.records import read_run
    from hxfuse.analysis.timeline import concurrent_progress_spans, gantt_intervals, progress_curves

    run = read_run(jsonl)
    emulated = emulated_flag(run.meta.get("emulated"))
    if emulated:
        title = f"{EMULATED_MARK}   {title}"
    gi = gantt_intervals(run)
    groups = _timeline_groups(run.meta, gi)
    gi = gi[gi["group"].isin(groups)]
    status = None
    if check:
        status = json.loads(Path(check).read_text()).get("status")
    style.apply()
    if gi.empty or not groups:
        fig, ax = plt.subplots(figsize=(7, 2))
        ax.text(0.5, 0.5, "no measured A-D trials", ha="center", va="center")
        ax.set_axis_off()
        save(fig, out)
        return gi
    lanes = lane_order(gi["lane"])
    span = float(gi["end_rel_ns"].max())
    scale, unit = _time_unit(span)
    pc = progress_curves(run)
    pc = pc[pc["trial_id"].isin(set(gi["trial_id"]))]
    axes = _timeline_axes(len(groups), len(lanes), not pc.empty)
    fig = axes[0][0].figure
    spans = concurrent_progress_spans(run, sorted(set(pc["trial_id"])))
    for row, g in zip(axes, groups):
        _timeline_panel(row[0], gi[gi["group"] == g], g, lanes, span, scale, unit)
        if len(row) > 1:
            sub = pc[pc["group"] == g]
            tid = int(sub["trial_id"].iloc[0]) if len(sub) else -1
            _progress_panel(row[1], sub, spans.get(tid, (math.nan, [])), scale, unit)
    axes[-1][-1].set_xlabel(f"time since the host's first submit [{unit}]")
    nodes = (gi["kind"] == "node").any()
    fig.legend(
        handles=_timeline_handles(gi, nodes, not pc.empty),
        loc="lower center",
        ncol=4,
        fontsize=7.5,
        frameon=False,
        bbox_to_anchor=(0.5, 0.0),
    )
    _timeline_title(fig, run.meta, title, status, emulated, nodes)
    fig.tight_layout(rect=(0, 0.07 if len(groups) > 2 else 0.14, 1, 1))
    save(fig, out)
    return gi


def _timeline_axes(groups: int, lanes: int, progress: bool) -> list[list]:
    """Per group: its Gantt axes and, where the run has checkpoints, a
    progress panel under it; every panel shares the time axis."""
    h = 0.32 * lanes + 0.55
    per = 2 if progress else 1
    ratios = [h, 0.95][:per] * groups
    _, axes = plt.subplots(
        per * groups, 1, figsize=(7.2, sum(ratios) + 0.6), sharex=True, squeeze=False, height_ratios=ratios
    )
    flat = list(axes[:, 0])
    return [flat[per * i : per * i + per] for i in range(groups)]


def _progress_panel(ax, sub: pd.DataFrame, spans: tuple[float, list[tuple[float, float]]], scale: float, unit: str):
    """Each task's work done against time (checkpoints joined: constant rate
    between them), the time with >= 2 tasks at >= 50% of their alone rate
    shaded, and its total."""
    total, segs = spans
    for b, e in segs:
        ax.axvspan(b / scale, e / scale, color="#c9b3e6", alpha=0.55, lw=0, zorder=1)
    for task, g in sub.groupby("task", sort=False):
        ax.plot(g["t_rel_ns"] / scale, g["work"], color=TASK_COLORS.get(task, "#999"), lw=1.3, zorder=3, label=task)
    ax.set_ylim(-0.04, 1.08)
    ax.set_yticks([0, 0.5, 1])
    ax.set_yticklabels(["0", "½", "1"], fontsize=7)
    ax.set_ylabel("work\ndone", fontsize=7, rotation=0, ha="right", va="center")
    ax.grid(axis="y", lw=0.4, alpha=0.5)
    txt = "n/a" if not math.isfinite(total) else f"{total / scale:.4g} {unit}"
    ax.set_title(f"progress; concurrent progress {txt} (shaded)", loc="left", fontsize=7.5, pad=2)


def _timeline_groups(meta: dict, gi: pd.DataFrame) -> list[str]:
    """The groups drawn: A-D; a file without them (the ONNX Runtime harness)
    shows its own groups but alone, in the order of its meta.group_mapping."""
    mapping = meta.get("group_mapping") if isinstance(meta.get("group_mapping"), dict) else {}
    present = set(gi["group"])
    return [g for g in GROUPS if g in present] or [g for g in mapping if g in present and g != "alone"]


def _timeline_panel(ax, sub: pd.DataFrame, g: str, lanes: list[str], span: float, scale: float, unit: str) -> None:
    """One group's panel: its intervals, one row per lane, and its makespan."""
    ypos = {lane: i for i, lane in enumerate(lanes)}
    for r in sub.itertuples(index=False):
        _draw_interval(ax, r, ypos[r.lane], span, scale)
    mk = float(sub["makespan_ns"].iloc[0])
    ax.axvline(mk / scale, color="black", lw=0.6, ls=":")
    rnd = int(sub["round"].iloc[0])
    ax.set_title(f"{GROUP_TITLES.get(g, g)}   makespan {mk / scale:.4g} {unit} (round {rnd})", loc="left", fontsize=8.5)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels(lanes, fontsize=8)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlim(0, span / scale * 1.02)
    ax.grid(axis="y", visible=False)


def _draw_interval(ax, r, y: int, span: float, scale: float) -> None:
    """One interval *r* (a row of hxfuse.analysis.timeline.gantt_intervals) on row *y*."""
    b, e = r.start_rel_ns / scale, r.end_rel_ns / scale
    w = max(e - b, span / scale * 0.002)
    if r.kind == "task":
        color = TASK_COLORS.get(r.name, "#999")
        share = r.run_share if math.isfinite(r.run_share) else 1.0
        # full span pale, the running share solid: a task that shared
        # its core shows a half-filled bar however long its span
        ax.add_patch(Rectangle((b, y - 0.34), w, 0.68, color=color, alpha=0.3, lw=0, zorder=3))
        ax.add_patch(Rectangle((b, y - 0.34), w, 0.68 * min(max(share, 0.0), 1.0), color=color, lw=0, zorder=3.2))
        if math.isfinite(r.run_share) and e - b > span / scale * 0.06:
            core = f" c{int(r.core)}" if math.isfinite(r.core) else ""
            ax.text(
                b + (e - b) / 2,
                y + 0.05,
                f"{r.run_share:.0%}{core}",
                ha="center",
                va="center",
                fontsize=6,
                color="black",
                zorder=5,
            )
    elif r.kind == "node":
        # a profiled node (ONNX Runtime): the task's colour, edged so
        # that back-to-back nodes and a Loop's body nodes stay apart
        ax.add_patch(
            Rectangle(
                (b, y - 0.34), w, 0.68, fc=TASK_COLORS.get(r.task, "#999"), ec="white", lw=0.3, alpha=0.9, zorder=3
            )
        )
    elif r.kind == "queue":
        ax.add_patch(
            Rectangle(
                (b, y - 0.2),
                w,
                0.4,
                fill=False,
                ec=TASK_COLORS.get(r.name.split()[-1], "#999"),
                hatch="....",
                lw=0.6,
                zorder=3,
            )
        )
    elif r.kind == "entry":
        ax.add_patch(Rectangle((b, y - 0.44), w, 0.88, fill=False, ec="black", lw=0.8, ls="--", zorder=4))
    elif r.kind == "wait" and r.lane == "host":
        ax.add_patch(Rectangle((b, y - 0.22), w, 0.44, color="#bbbbbb", lw=0, zorder=2))
    elif r.kind == "wait":
        ax.add_patch(
            Rectangle((b, y - 0.2), w, 0.4, fill=True, fc="white", ec="#555", hatch="////", lw=0.5, zorder=3.5)
        )
    elif r.kind == "submit":
        ax.add_patch(Rectangle((b, y - 0.34), w, 0.68, color="#333333", lw=0, zorder=3))
    elif r.kind == "host_wait":
        ax.add_patch(Rectangle((b, y - 0.22), w, 0.44, color="#bbbbbb", lw=0, zorder=2))


def _timeline_handles(gi: pd.DataFrame, nodes: bool, progress: bool = False) -> list[Patch]:
    """Legend entries for what the timeline shows."""
    handles = [
        Patch(color=c, label=f"task {t}" + (" (profiled nodes)" if nodes else ""))
        for t, c in TASK_COLORS.items()
        if t in set(gi.loc[gi["kind"].isin(["task", "node"]), "task"])
    ]
    handles += [Patch(color="#333333", label="host submit"), Patch(color="#bbbbbb", label="host wait")]
    if not nodes or (gi["kind"] == "wait").any():
        handles.append(Patch(fc="white", ec="#555", hatch="////", label="engine waits"))
    if not nodes or (gi["kind"] == "entry").any():
        handles.append(Patch(fill=False, ec="black", ls="--", label="fused entry"))
    if (gi["kind"] == "queue").any():
        handles.append(Patch(fill=False, ec="#555", hatch="....", label="launched, queued"))
    if gi.loc[gi["kind"] == "task", "run_share"].notna().any():
        handles.append(Patch(color="#777", alpha=0.3, label="task span (solid height: share running, cN: core)"))
    if progress:
        handles.append(Patch(color="#c9b3e6", alpha=0.55, label=">= 2 tasks at >= 50% of their alone rate"))
    return handles


def _timeline_title(fig, meta: dict, title: str, status, emulated: bool, nodes: bool) -> None:
    """The figure's title (and, for an emulated run, the watermark)."""
    sup = title + ("" if status in (None, "ok") else f"   [CHECK {str(status).upper()}]")
    if emulated:
        fig.suptitle(
            sup + f"\n{meta.get('cpu_model') or 'emulator'}: the schedule under "
            "emulation, durations are NOT Hexagon performance",
            fontsize=9,
            color="#C44E52",
        )
        fig.text(
            0.5,
            0.5,
            EMULATED_MARK,
            ha="center",
            va="center",
            rotation=25,
            fontsize=34,
            color="#C44E52",
            alpha=0.18,
            zorder=10,
            fontweight="bold",
        )
    else:
        fig.suptitle(
            sup
            + "\nrepresentative round = median makespan of each group"
            + ("; ONNX Runtime's profiled nodes, one lane per thread" if nodes else ""),
            fontsize=9,
        )


# --------------------------------------------------------------------------
# speedup


def _x_positions(xs: pd.Series, log_x: bool, k: int, n: int) -> np.ndarray:
    """Dodge comparison k of n around each x (multiplicative on a log axis)."""
    off = (k - (n - 1) / 2) * 0.035
    x = xs.to_numpy(float)
    if log_x:
        return x * (10**off)
    span = (np.nanmax(x) - np.nanmin(x)) or 1.0
    return x + off * span


def speedup_long(summary: pd.DataFrame, sweep: str) -> pd.DataFrame:
    s = summary[summary["sweep"] == sweep]
    rows = []
    for label, group, col in COMPARISONS:
        sub = s[s["group"] == group]
        for r in sub.itertuples(index=False):
            r = r._asdict()
            rows.append(
                {
                    "comparison": label,
                    "workload": r["workload"],
                    "x": r["x"],
                    "point": r["point"],
                    "label": r.get("label", r["point"]),
                    "value": r[col],
                    "lo": r[f"{col}_lo"],
                    "hi": r[f"{col}_hi"],
                    "point_ok": r.get("point_ok", True),
                }
            )
    return pd.DataFrame(rows)


def speedup_pair_legend(fig, ax) -> None:
    """One row of speedup pairs (X/Y) above the panels, from *ax*'s lines:
    the speedup and the family figures share it."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="upper center",
        ncol=len(labels),
        frameon=False,
        bbox_to_anchor=(0.5, 1.0),
        fontsize=8,
        title="X/Y",
        title_fontsize=8,
    )


def speedup_figure(summary_csv: str | Path, sweep: str, sweep_cfg: dict, out: Sequence[str | Path]) -> pd.DataFrame:
    summary = pd.read_csv(summary_csv)
    style.apply()
    if is_emulated_table(summary):
        emulated_notice(out, f"speedups of sweep {sweep}")
        return pd.DataFrame()
    long = speedup_long(summary, sweep) if len(summary) else pd.DataFrame()
    workloads = [w for w in sweep_cfg.get("workloads", []) if len(long) and w in set(long["workload"])]
    log_x = bool(sweep_cfg.get("log_x"))
    if not workloads:
        style.notice(out, f"sweep {sweep}: no summarised points")
        return long
    fig, axes = plt.subplots(1, len(workloads), figsize=(3.3 * len(workloads) + 0.6, 3.3), sharey=True, squeeze=False)
    present = [c for c, _, _ in COMPARISONS if long["value"].notna().groupby(long["comparison"]).any().get(c, False)]
    for ax, w in zip(axes[0], workloads):
        sub = long[long["workload"] == w]
        for k, comp in enumerate(present):
            c = sub[sub["comparison"] == comp].sort_values("x")
            ok = c["value"].notna()
            xs = _x_positions(c["x"], log_x, k, len(present))
            yerr = np.vstack([(c["value"] - c["lo"]).clip(lower=0), (c["hi"] - c["value"]).clip(lower=0)])
            ax.errorbar(
                xs[ok.to_numpy()],
                c["value"][ok],
                yerr=yerr[:, ok.to_numpy()],
                fmt="-o",
                ms=4,
                lw=1.2,
                capsize=2.5,
                color=COMPARISON_COLORS[comp],
                label=comp,
            )
        # The ceiling the tasks allow: sum of alone times over the resource-aware
        # bound max(max T_i, sum T_i / k) with k engines that can really run at
        # once.  Speedups over A (which also pays round trips) can exceed it a little.
        d = summary[(summary["sweep"] == sweep) & (summary["group"] == "D") & (summary["workload"] == w)]
        if {"t_serial_ns", "t_bound_ns"} <= set(d.columns) and len(d):
            d = d.sort_values("x")
            ax.plot(
                d["x"].to_numpy(float),
                (d["t_serial_ns"] / d["t_bound_ns"]).to_numpy(float),
                ls=":",
                lw=1.0,
                color="0.35",
                marker="_",
                ms=12,
                mew=1.5,
                label="ceiling: sum T_i / bound",
            )
        ax.axhline(1.0, color="black", lw=0.8, ls="--")
        if log_x:
            ax.set_xscale("log")
        pts = sub.drop_duplicates("point").sort_values("x")
        ax.set_xticks(pts["x"].to_numpy(float))
        ax.set_xticklabels([f"{l}\n({x:g})" for l, x in zip(pts["label"], pts["x"])], fontsize=7.5)
        ax.minorticks_off()
        ax.set_title(WORKLOAD_TITLES.get(w, w), fontsize=9)
        ax.set_xlabel(sweep_cfg.get("variable", "point"))
    axes[0, 0].set_ylabel("speedup  T_Y / T_X  (median, decision interval)")
    speedup_pair_legend(fig, axes[0, 0])
    note = ""
    failed = long[~long["point_ok"].astype(bool)].drop_duplicates(["workload", "point"]) if len(long) else long
    if len(failed):
        note = "failed correctness check, no speedup: " + ", ".join(
            f"{r.workload}/{r.point}" for r in failed.itertuples()
        )
    fig.suptitle(sweep_cfg.get("title", sweep), y=1.08, fontsize=10)
    if note:
        fig.text(0.5, -0.04, note, ha="center", fontsize=7.5, color="#C44E52")
    fig.tight_layout()
    save(fig, out)
    return long


# --------------------------------------------------------------------------
# slowdown


def slowdown_long(trials: pd.DataFrame, sweep: str) -> pd.DataFrame:
    t = trials[
        (trials["sweep"] == sweep)
        & (~trials["warmup"].astype(bool))
        & (~trials["empty"].astype(bool))
        & trials["group"].isin(GROUPS)
    ]
    if "check_ok" in t:
        t = t[t["check_ok"].astype(bool)]
    cols = [c for c in ("M_slowdown", "V_slowdown", "D_slowdown") if c in t]
    long = t.melt(
        id_vars=["workload", "group", "point", "label", "x", "round"],
        value_vars=cols,
        var_name="task",
        value_name="slowdown",
    )
    long["task"] = long["task"].str[0]
    return long.dropna(subset=["slowdown"])


def slowdown_figure(trials_csv: str | Path, sweep: str, sweep_cfg: dict, out: Sequence[str | Path]) -> pd.DataFrame:
    trials = pd.read_csv(trials_csv, low_memory=False)
    style.apply()
    if is_emulated_table(trials):
        emulated_notice(out, f"slowdowns of sweep {sweep}")
        return pd.DataFrame()
    long = slowdown_long(trials, sweep) if len(trials) else pd.DataFrame()
    if long.empty:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.text(0.5, 0.5, f"sweep {sweep}: no checked trials with slowdowns", ha="center", va="center")
        ax.set_axis_off()
        save(fig, out)
        return long
    order = long.drop_duplicates("point").sort_values("x")
    xlabels = {r.point: f"{r.label}\n({r.x:g})" for r in order.itertuples()}
    long["xl"] = long["point"].map(xlabels)
    workloads = [w for w in sweep_cfg.get("workloads", []) if w in set(long["workload"])]
    tasks = [t for t in ("M", "V", "D") if t in set(long["task"])]
    g = sns.catplot(
        data=long,
        kind="point",
        x="xl",
        y="slowdown",
        hue="group",
        hue_order=[x for x in GROUPS if x in set(long["group"])],
        row="task",
        row_order=tasks,
        col="workload",
        col_order=workloads,
        order=[xlabels[p] for p in order["point"]],
        estimator=np.median,
        errorbar=("ci", 95),
        n_boot=1000,
        seed=0,
        dodge=0.35,
        markersize=4,
        linewidth=1.2,
        capsize=0.08,
        palette=GROUP_COLORS,
        height=2.1,
        aspect=1.35,
        sharey="row",
        legend_out=True,
    )
    present = set(zip(long["task"], long["workload"]))
    for (task, w), ax in g.axes_dict.items():
        ax.axhline(1.0, color="black", lw=0.8, ls="--")
        ax.tick_params(axis="x", labelsize=7)
        if (task, w) not in present:
            ax.text(
                0.5,
                0.5,
                f"no task {task} in {w}",
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=8,
                color="#777",
            )
    g.set_titles(row_template="task {row_name}", col_template="{col_name}")
    g.set_axis_labels(sweep_cfg.get("variable", "point"), "slowdown T_i^X / T_i")
    g.figure.suptitle(
        f"{sweep_cfg.get('title', sweep)}: per-task slowdown (median, 95% CI over rounds; 1 = as fast as alone)",
        y=1.02,
        fontsize=9.5,
    )
    if g.legend is not None:
        g.legend.set_title("group")
    save(g.figure, out)
    return long
