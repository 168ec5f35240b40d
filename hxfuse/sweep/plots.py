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
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

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
    spread = round_spread(run)
    spread = spread[spread["group"].isin(groups)] if len(spread) else spread
    # the axis holds the drawn round and the upper quartile of every group's
    # makespan; a 95th percentile beyond it (a loaded machine's outliers) is
    # cut at the edge rather than squeezing every bar to a sliver
    mk = spread.loc[spread["what"] == "makespan", "q75"] if len(spread) else pd.Series(dtype=float)
    span = max(float(gi["end_rel_ns"].max()), float(mk.max()) if len(mk) else 0.0)
    scale, unit = _time_unit(span)
    pc = progress_curves(run)
    pc = pc[pc["trial_id"].isin(set(gi["trial_id"]))]
    axes = _timeline_axes(len(groups), len(lanes), not pc.empty)
    fig = axes[0][0].figure
    spans = concurrent_progress_spans(run, sorted(set(pc["trial_id"])))
    host_cpu = _host_cpus(run)
    for row, g in zip(axes, groups):
        _timeline_panel(row[0], gi[gi["group"] == g], g, lanes, span, scale, unit, spread, host_cpu)
        if len(row) > 1:
            sub = pc[pc["group"] == g]
            tid = int(sub["trial_id"].iloc[0]) if len(sub) else -1
            _progress_panel(row[1], sub, spans.get(tid, (math.nan, [])), scale, unit)
    axes[-1][-1].set_xlabel(f"time since the host's first submit [{unit}]")
    nodes = (gi["kind"] == "node").any()
    fig.legend(
        handles=_timeline_handles(gi, nodes, not pc.empty, _any_displaced(gi, host_cpu), not spread.empty),
        loc="lower center",
        ncol=3,
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
    h = 0.28 * lanes + 0.55
    per = 2 if progress else 1
    ratios = [h, 0.62][:per] * groups
    _, axes = plt.subplots(
        per * groups,
        1,
        figsize=(style.FIG_WIDTH_IN, sum(ratios) + 0.6),
        sharex=True,
        squeeze=False,
        height_ratios=ratios,
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


def round_spread(run) -> pd.DataFrame:
    """Across every measured round of the file (warm-up and empty trials
    left out), per workload x group: the makespan's and each task's end
    quantiles (5, 25, 50, 75, 95%) relative to the trial's first submit, and
    the number of rounds; what one representative round cannot show."""
    t = run.trials[(~run.trials["warmup"].astype(bool)) & (~run.trials["empty"].astype(bool))]
    if t.empty:
        return pd.DataFrame(columns=["workload", "group", "what", "n", "q05", "q25", "q50", "q75", "q95"])
    t0 = t.set_index("trial_id")["host_submit_begin"].astype(float)
    rows = []
    qs = (0.05, 0.25, 0.5, 0.75, 0.95)
    for (w, g), tg in t.groupby(["workload", "group"], sort=False):
        mk = tg["makespan_ns"].to_numpy(float)
        rows.append({"workload": w, "group": g, "what": "makespan", "n": len(mk), **_quantiles(mk, qs)})
        tk = run.tasks[run.tasks["trial_id"].isin(set(tg["trial_id"]))]
        for task, tt in tk.groupby("task", sort=False):
            end = tt["end"].to_numpy(float) - t0.reindex(tt["trial_id"]).to_numpy(float)
            rows.append({"workload": w, "group": g, "what": str(task), "n": len(end), **_quantiles(end, qs)})
    return pd.DataFrame(rows)


def _quantiles(x: np.ndarray, qs) -> dict:
    x = x[np.isfinite(x)]
    vals = np.quantile(x, qs) if len(x) else [math.nan] * len(qs)
    return {f"q{int(round(q * 100)):02d}": float(v) for q, v in zip(qs, vals)}


def _host_cpus(run) -> dict:
    """trial id -> the core the host thread ran on (where recorded)."""
    if "host_cpu" not in run.trials:
        return {}
    c = pd.to_numeric(run.trials["host_cpu"], errors="coerce")
    return {int(k): float(v) for k, v in zip(run.trials["trial_id"], c) if math.isfinite(v) and v >= 0}


def displaced_parts(sub: pd.DataFrame, host_cpu: dict) -> list[tuple[float, float]]:
    """The parts of the host's ``submit`` slices of one trial's intervals
    *sub* during which a task ran on the host thread's own core: the host's
    call had not returned because the engine thread it had just woken held
    its core (on the 2-core host, host and vec are pinned to one core).  Times
    as in *sub* (ns since the first submit)."""
    out: list[tuple[float, float]] = []
    if sub.empty:
        return out
    cpu = host_cpu.get(int(sub["trial_id"].iloc[0]))
    if cpu is None:
        return out
    tasks = sub[(sub["kind"] == "task") & (pd.to_numeric(sub["core"], errors="coerce") == cpu)]
    for s in sub[(sub["kind"] == "submit") & (sub["lane"] == "host")].itertuples(index=False):
        for t in tasks.itertuples(index=False):
            b, e = max(s.start_rel_ns, t.start_rel_ns), min(s.end_rel_ns, t.end_rel_ns)
            if e > b:
                out.append((float(b), float(e)))
    return out


def _any_displaced(gi: pd.DataFrame, host_cpu: dict) -> bool:
    return any(displaced_parts(g, host_cpu) for _, g in gi.groupby("trial_id"))


def _timeline_panel(
    ax,
    sub: pd.DataFrame,
    g: str,
    lanes: list[str],
    span: float,
    scale: float,
    unit: str,
    spread: pd.DataFrame | None = None,
    host_cpu: dict | None = None,
) -> None:
    """One group's panel: its intervals, one row per lane, its makespan, the
    part of the host's submit spent displaced from its core, and the spread
    of the makespan and of each task's end over every round."""
    ypos = {lane: i for i, lane in enumerate(lanes)}
    for r in sub.itertuples(index=False):
        _draw_interval(ax, r, ypos[r.lane], span, scale)
    if "host" in ypos:
        for b, e in displaced_parts(sub, host_cpu or {}):
            ax.add_patch(
                Rectangle(
                    (b / scale, ypos["host"] - 0.34),
                    (e - b) / scale,
                    0.68,
                    fc="#999999",
                    ec="#333333",
                    hatch="xxxx",
                    lw=0.4,
                    zorder=3.3,
                )
            )
    mk = float(sub["makespan_ns"].iloc[0])
    ax.axvline(mk / scale, color="black", lw=0.6, ls=":")
    rnd = int(sub["round"].iloc[0])
    title = f"{GROUP_TITLES.get(g, g)}   makespan {mk / scale:.4g} {unit} (round {rnd})"
    sp = (
        spread[(spread["group"] == g) & (spread["workload"] == sub["workload"].iloc[0])] if spread is not None else None
    )
    if sp is not None and len(sp):
        m = sp[sp["what"] == "makespan"].iloc[0]
        ax.axvspan(m["q25"] / scale, m["q75"] / scale, color="0.55", alpha=0.16, lw=0, zorder=0.5)
        q = [f"{m[c] / scale:.4g}" for c in ("q50", "q05", "q95")]
        title += f"; {int(m['n'])} rounds: median {q[0]}, 5-95% {q[1]}-{q[2]}"
        for task in sp.itertuples(index=False):
            lane = sub.loc[(sub["kind"] == "task") & (sub["name"] == task.what), "lane"]
            if task.what == "makespan" or lane.empty or lane.iloc[0] not in ypos:
                continue
            y = ypos[lane.iloc[0]] + 0.43
            ax.plot([task.q05 / scale, task.q95 / scale], [y, y], color="black", lw=0.8, zorder=5)
            ax.plot([task.q25 / scale, task.q75 / scale], [y, y], color="black", lw=2.4, zorder=5)
            ax.plot([task.q50 / scale], [y], marker="|", ms=5, color="white", mew=1.0, zorder=6)
    ax.set_title(title, loc="left", fontsize=7.5)
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
                fontsize=6.5,
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


def _timeline_handles(
    gi: pd.DataFrame, nodes: bool, progress: bool = False, displaced: bool = False, spread: bool = False
) -> list:
    """Legend entries for what the timeline shows."""
    handles = [
        Patch(color=c, label=f"task {t}" + (" (profiled nodes)" if nodes else ""))
        for t, c in TASK_COLORS.items()
        if t in set(gi.loc[gi["kind"].isin(["task", "node"]), "task"])
    ]
    handles += [
        Patch(color="#333333", label="host submit (call to return)"),
        Patch(color="#bbbbbb", label="host wait"),
    ]
    if displaced:
        handles.append(
            Patch(fc="#999999", ec="#333333", hatch="xxxx", label="submit not returned: a task held the host's core")
        )
    if spread:
        handles.append(Line2D([], [], color="black", lw=2.4, label="task end over rounds: 25-75% (thin: 5-95%)"))
        handles.append(Patch(color="0.55", alpha=0.16, label="makespan over rounds: 25-75%"))
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
            + "\ndrawn: the median-makespan round of each group; bars and band: every round"
            + ("; ONNX Runtime's profiled nodes, one lane per thread" if nodes else ""),
            fontsize=9,
        )


# --------------------------------------------------------------------------
# speedup

# What the figures call the interval they draw around a speedup: the one the
# verdict reads (hxfuse.analysis.verdicts), named as the tables name it.
DECISION_INTERVAL = "decision interval"
BOOTSTRAP_INTERVAL = "bootstrap 95% interval"

# The legend says what each ratio asks, not only its letters.
COMPARISON_WORDS = {
    "D/A": "D/A  fused concurrent vs serial",
    "D/B": "D/B  fused vs the backend's concurrency",
    "D/C": "D/C  internal overlap (barrier off vs on)",
    "C/A": "C/A  one merged entry vs one call per task",
    "B/A": "B/A  the backend's concurrency vs serial",
}
COMPARISON_MARKERS = {"D/A": "o", "D/B": "s", "D/C": "^", "C/A": "D", "B/A": "v"}
CEILING_WORDS = "perfect-overlap limit: sum of alone times / bound"


def decision_interval(df: pd.DataFrame, col: str) -> tuple[pd.Series, pd.Series, str]:
    """The interval a figure draws around ratio column *col* of a summary:
    ``(lo, hi, name)``.  The one accessor of the decision interval in the
    figure code (speedup and family figures).  For a ratio a relation is
    decided on (the summary carries ``{col}_rel``), ``{col}_lo`` / ``_hi``
    are the interval that decision read (docs/columns.md), named
    :data:`DECISION_INTERVAL`; any other ratio (an end-to-end ratio no
    verdict reads) has only its bootstrap interval there, named so.  Never
    two intervals under one name."""
    nan = pd.Series(math.nan, index=df.index)
    lo = pd.to_numeric(df[f"{col}_lo"], errors="coerce") if f"{col}_lo" in df.columns else nan
    hi = pd.to_numeric(df[f"{col}_hi"], errors="coerce") if f"{col}_hi" in df.columns else nan
    return lo, hi, DECISION_INTERVAL if f"{col}_rel" in df.columns else BOOTSTRAP_INTERVAL


def speedup_long(summary: pd.DataFrame, sweep: str) -> pd.DataFrame:
    """One row per comparison x point x workload: the median speedup and the
    interval :func:`decision_interval` gives (``interval`` names it)."""
    s = summary[summary["sweep"] == sweep]
    frames = []
    for label, group, col in COMPARISONS:
        sub = s[s["group"] == group]
        if sub.empty or col not in sub:
            continue
        lo, hi, name = decision_interval(sub, col)
        frames.append(
            pd.DataFrame(
                {
                    "comparison": label,
                    "workload": sub["workload"].to_numpy(),
                    "x": sub["x"].to_numpy(float),
                    "point": sub["point"].to_numpy(),
                    "label": (sub["label"] if "label" in sub else sub["point"]).to_numpy(),
                    "value": pd.to_numeric(sub[col], errors="coerce").to_numpy(),
                    "lo": lo.to_numpy(),
                    "hi": hi.to_numpy(),
                    "interval": name,
                    "point_ok": (sub["point_ok"] if "point_ok" in sub else pd.Series(True, index=sub.index))
                    .astype(bool)
                    .to_numpy(),
                }
            )
        )
    cols = ["comparison", "workload", "x", "point", "label", "value", "lo", "hi", "interval", "point_ok"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)


def speedup_pair_legend(fig, ax) -> None:
    """One row of speedup pairs (X/Y) above the panels, from *ax*'s lines:
    the family figures use it."""
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


def _ratio_ylim(values: np.ndarray) -> tuple[float, float]:
    """A log-scale y range that holds every median (and 1 +/- the band) with a
    margin; intervals reaching beyond it are clipped and marked."""
    v = values[np.isfinite(values) & (values > 0)]
    lo = min(float(v.min()) if len(v) else 1.0, 0.9)
    hi = max(float(v.max()) if len(v) else 1.0, 1.1)
    return lo / 1.25, hi * 1.25


def _draw_ratio_series(ax, xs, value, lo, hi, ylim, color, marker, label) -> None:
    """Markers with interval bars, never joined (the x are categories or
    separate measurements); a bar that leaves the y range is cut at its edge
    and ends in an arrow head, so a clipped interval never reads as a bound."""
    ok = np.isfinite(value)
    xs, value, lo, hi = xs[ok], value[ok], lo[ok], hi[ok]
    ylo, yhi = ylim
    lo_c = np.where(np.isfinite(lo), np.clip(lo, ylo, yhi), value)
    hi_c = np.where(np.isfinite(hi), np.clip(hi, ylo, yhi), value)
    ax.vlines(xs, lo_c, hi_c, color=color, lw=1.1, zorder=3)
    ax.plot(xs, value, ls="none", marker=marker, ms=4.5, color=color, mec="white", mew=0.5, zorder=4, label=label)
    cut_lo = np.isfinite(lo) & (lo < ylo)
    cut_hi = np.isfinite(hi) & (hi > yhi)
    # (only where there is one: an empty unclipped line has a bounding box at
    # the figure's origin, which breaks the tight layout)
    for cut, y, mk in ((cut_lo, ylo, "v"), (cut_hi, yhi, "^")):
        if cut.any():
            ax.plot(xs[cut], np.full(cut.sum(), y), ls="none", marker=mk, ms=3.5, color=color, zorder=4, clip_on=False)


def _ratio_yaxis(ax, ylim) -> None:
    """Log y with plain tick labels (0.8, 1, 1.25, 2 ...)."""
    from matplotlib.ticker import FixedLocator

    ax.set_yscale("log")
    ax.set_ylim(*ylim)
    ticks = [t for t in (0.25, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2, 3, 4, 6, 8) if ylim[0] <= t <= ylim[1]]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def draw_speedup(summary: pd.DataFrame, sweep: str, sweep_cfg: dict, min_effect: float):
    """The speedup figure of one sweep as a matplotlib figure (not saved):
    ``(fig, long)``; ``fig`` is None when there is nothing to draw.

    One panel per workload, the points in sweep order at equal spacing (the
    sweep's x names categories: "M short", "similar"; the family figure puts
    points at their measured x), each comparison a marker with its decision
    interval, dodged within the point and never joined by a line; the band
    1 +/- *min_effect* (where a difference does not count) on every panel;
    the limit of perfect overlap as a short bar per point; y on a log scale
    (a ratio and its inverse equally far from 1)."""
    long = speedup_long(summary, sweep) if len(summary) else speedup_long(pd.DataFrame(columns=["sweep"]), sweep)
    workloads = [w for w in sweep_cfg.get("workloads", []) if len(long) and w in set(long["workload"])]
    if not workloads:
        return None, long
    present = [c for c, _, _ in COMPARISONS if long.loc[long["comparison"] == c, "value"].notna().any()]
    interval = long["interval"].iloc[0] if len(long) else DECISION_INTERVAL
    shown = long[long["workload"].isin(workloads)]
    ylim = _ratio_ylim(np.concatenate([shown["value"].to_numpy(float), [1 - min_effect, 1 + min_effect]]))
    width = min(style.FIG_WIDTH_IN, 2.3 * len(workloads) + 0.9)
    fig, axes = plt.subplots(1, len(workloads), figsize=(width, 2.9), sharey=True, squeeze=False)
    n = len(present)
    for ax, w in zip(axes[0], workloads):
        sub = long[long["workload"] == w]
        pts = sub.drop_duplicates("point").sort_values("x", kind="stable").reset_index(drop=True)
        pos = {p: i for i, p in enumerate(pts["point"])}
        ax.axhspan(1 - min_effect, 1 + min_effect, color="0.86", lw=0, zorder=0)
        ax.axhline(1.0, color="black", lw=0.7, zorder=1)
        for k, comp in enumerate(present):
            c = sub[sub["comparison"] == comp]
            xs = c["point"].map(pos).to_numpy(float) + (k - (n - 1) / 2) * (0.62 / max(n, 1))
            _draw_ratio_series(
                ax,
                xs,
                c["value"].to_numpy(float),
                c["lo"].to_numpy(float),
                c["hi"].to_numpy(float),
                ylim,
                COMPARISON_COLORS[comp],
                COMPARISON_MARKERS[comp],
                COMPARISON_WORDS[comp],
            )
        # The limit the tasks allow: sum of alone times over the resource-aware
        # bound max(max T_i, sum T_i / k), k the engines that can run at once.
        # A speedup over A (which also pays a round trip per task) can pass it.
        d = summary[(summary["sweep"] == sweep) & (summary["group"] == "D") & (summary["workload"] == w)]
        if {"t_serial_ns", "t_bound_ns"} <= set(d.columns) and len(d):
            lim = (d["t_serial_ns"] / d["t_bound_ns"]).to_numpy(float)
            xs = d["point"].map(pos).to_numpy(float)
            ax.hlines(lim, xs - 0.4, xs + 0.4, color="0.3", lw=1.0, ls=(0, (2, 1.5)), zorder=2, label=CEILING_WORDS)
        ax.set_xlim(-0.6, len(pts) - 0.4)
        ax.set_xticks(range(len(pts)))
        ax.set_xticklabels([f"{l}\n({x:g})" for l, x in zip(pts["label"], pts["x"])], fontsize=7)
        ax.grid(axis="x", visible=False)
        ax.set_title(WORKLOAD_TITLES.get(w, w), fontsize=8)
        ax.set_xlabel(sweep_cfg.get("variable", "point"), fontsize=7.5)
        _ratio_yaxis(ax, ylim)
    axes[0, 0].set_ylabel(f"speedup $T_Y/T_X$\n(median, {interval})", fontsize=8)
    handles, labels = axes[0, -1].get_legend_handles_labels()
    handles.append(Patch(color="0.86", label=f"no difference: 1 ± {min_effect:g}"))
    labels.append(f"no difference: 1 ± {min_effect:g}")
    failed = long[~long["point_ok"].astype(bool)].drop_duplicates(["workload", "point"])
    if len(failed):
        fig.text(
            0.5,
            1.0,
            "failed correctness check, no speedup: "
            + ", ".join(f"{r.workload}/{r.point}" for r in failed.itertuples()),
            ha="center",
            va="bottom",
            fontsize=7,
            color="#C44E52",
        )
    # laid out first, then the legend under the figure (the tight bounding box
    # of save takes it in): laid out with it, it would sit on the x labels
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=7, frameon=False)
    return fig, long


def speedup_figure(
    summary_csv: str | Path, sweep: str, sweep_cfg: dict, out: Sequence[str | Path], min_effect: float = 0.03
) -> pd.DataFrame:
    """The speedup figure of *sweep* (:func:`draw_speedup`), written to *out*."""
    summary = pd.read_csv(summary_csv)
    style.apply()
    if is_emulated_table(summary):
        emulated_notice(out, f"speedups of sweep {sweep}")
        return pd.DataFrame()
    fig, long = draw_speedup(summary, sweep, sweep_cfg, min_effect)
    if fig is None:
        style.notice(out, f"sweep {sweep}: no summarised points")
        return long
    save(fig, out)
    return long


# --------------------------------------------------------------------------
# slowdown

# Slowdown means different things in the two kinds of group: in B and D the
# tasks run at the same time and a slowdown is what sharing cores, memory and
# the entry cost them; in A and C they run one after another by design, so a
# task's completion includes the time it waited for the tasks before it
# (queueing behind the serial order, several times its own duration).  They
# are drawn apart, each on its own scale.
SLOWDOWN_KINDS = (
    ("sharing", ("B", "D"), "B, D: tasks run at once\nslowdown = cost of sharing"),
    ("queueing", ("A", "C"), "A, C: tasks run in turn\nslowdown includes queueing"),
)
SLOWDOWN_INTERVAL = "two-level bootstrap 95% interval"
GROUP_MARKERS = {"A": "s", "B": "o", "C": "D", "D": "^"}


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
    ids = ["workload", "group", "point", "label", "x", "round"] + (["replicate"] if "replicate" in t else [])
    long = t.melt(id_vars=ids, value_vars=cols, var_name="task", value_name="slowdown")
    long["task"] = long["task"].str[0]
    return long.dropna(subset=["slowdown"])


def slowdown_summary(long: pd.DataFrame, n_resamples: int = 1000) -> pd.DataFrame:
    """Per workload x point x group x task: the median slowdown over every
    measured round and its two-level bootstrap 95% interval (replicates, then
    rounds within them: the bootstrap the speedups' intervals start from)."""
    from hxfuse.analysis.stats import hierarchical_bootstrap_median

    rows = []
    keys = ["workload", "point", "label", "x", "group", "task"]
    for k, g in long.groupby(keys, sort=False):
        clusters = g["replicate"].to_numpy() if "replicate" in g else None
        est = hierarchical_bootstrap_median(g["slowdown"].to_numpy(float), clusters, n_resamples=n_resamples)
        rows.append(dict(zip(keys, k), value=est.value, lo=est.lo, hi=est.hi, n=est.n))
    return pd.DataFrame(rows, columns=keys + ["value", "lo", "hi", "n"])


def draw_slowdown(trials: pd.DataFrame, sweep: str, sweep_cfg: dict, n_resamples: int = 1000):
    """The slowdown figure of one sweep (not saved): ``(fig, long)``, fig None
    when there is nothing to draw.  Rows: sharing (B, D; linear y) and
    queueing (A, C; log y), each row on one y scale across its workloads;
    columns: workloads; in a panel the points in sweep order, one colour per
    task and one marker per group, never joined."""
    long = slowdown_long(trials, sweep) if len(trials) else pd.DataFrame()
    if long.empty:
        return None, long
    sm = slowdown_summary(long, n_resamples)
    workloads = [w for w in sweep_cfg.get("workloads", []) if w in set(sm["workload"])]
    kinds = [k for k in SLOWDOWN_KINDS if sm["group"].isin(k[1]).any()]
    width = min(style.FIG_WIDTH_IN, 2.2 * len(workloads) + 1.2)
    fig, axes = plt.subplots(len(kinds), len(workloads), figsize=(width, 1.75 * len(kinds) + 0.4), squeeze=False)
    order = sm.drop_duplicates("point").sort_values("x", kind="stable")
    pos = {p: i for i, p in enumerate(order["point"])}
    tasks = [t for t in ("M", "V", "D") if t in set(sm["task"])]
    for i, (kind, groups, title) in enumerate(kinds):
        rows = sm[sm["group"].isin(groups)]
        vals = np.concatenate([rows["lo"].to_numpy(float), rows["hi"].to_numpy(float), [1.0]])
        vals = vals[np.isfinite(vals) & (vals > 0)]
        for j, w in enumerate(workloads):
            ax = axes[i, j]
            ax.axhline(1.0, color="black", lw=0.7, zorder=1)
            series = [(g, t) for g in groups for t in tasks]
            for k, (g, t) in enumerate(series):
                c = rows[(rows["workload"] == w) & (rows["group"] == g) & (rows["task"] == t)]
                if c.empty:
                    continue
                xs = c["point"].map(pos).to_numpy(float) + (k - (len(series) - 1) / 2) * (0.7 / len(series))
                ax.vlines(xs, c["lo"], c["hi"], color=TASK_COLORS[t], lw=1.0, zorder=3)
                ax.plot(
                    xs,
                    c["value"],
                    ls="none",
                    marker=GROUP_MARKERS[g],
                    ms=4,
                    color=TASK_COLORS[t],
                    mfc=TASK_COLORS[t] if g in ("D", "C") else "white",
                    zorder=4,
                )
            if kind == "queueing":
                ax.set_yscale("log")
                ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                ax.yaxis.set_minor_locator(NullLocator())
                ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            if len(vals):
                lo, hi = float(vals.min()), float(vals.max())
                pad = (hi / lo) ** 0.08 if kind == "queueing" else None
                ax.set_ylim(*((lo / pad, hi * pad) if pad else (lo - 0.06 * (hi - lo), hi + 0.06 * (hi - lo))))
            ax.set_xlim(-0.6, len(pos) - 0.4)
            ax.set_xticks(range(len(pos)))
            ax.set_xticklabels(
                [f"{l}\n({x:g})" for l, x in zip(order["label"], order["x"])] if i == len(kinds) - 1 else [],
                fontsize=7,
            )
            ax.grid(axis="x", visible=False)
            ax.tick_params(axis="y", labelsize=7)
            if i == 0:
                ax.set_title(WORKLOAD_TITLES.get(w, w), fontsize=8)
            if j == 0:
                ax.set_ylabel(title, fontsize=7.5)
            else:
                ax.tick_params(axis="y", labelleft=False)
        for j in range(len(workloads)):
            axes[-1, j].set_xlabel(sweep_cfg.get("variable", "point"), fontsize=7.5)
    handles = [Line2D([], [], ls="none", marker="s", ms=6, color=TASK_COLORS[t], label=f"task {t}") for t in tasks]
    for g in (g for g in GROUPS if g in set(sm["group"])):
        h = Line2D([], [], ls="none", marker=GROUP_MARKERS[g], ms=5, color="0.3", mfc="0.3" if g in "CD" else "white")
        h.set_label(f"group {g}")
        handles.append(h)
    fig.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(handles), fontsize=7, frameon=False
    )
    fig.text(
        0.0,
        1.0,
        f"slowdown $T_i^X/T_i$: median over rounds, {SLOWDOWN_INTERVAL}; 1 = as fast as alone",
        fontsize=7.5,
        ha="left",
        va="bottom",
    )
    fig.tight_layout(h_pad=0.6, w_pad=0.4)
    return fig, long


def slowdown_figure(trials_csv: str | Path, sweep: str, sweep_cfg: dict, out: Sequence[str | Path]) -> pd.DataFrame:
    """The slowdown figure of *sweep* (:func:`draw_slowdown`), written to *out*."""
    trials = pd.read_csv(trials_csv, low_memory=False)
    style.apply()
    if is_emulated_table(trials):
        emulated_notice(out, f"slowdowns of sweep {sweep}")
        return pd.DataFrame()
    fig, long = draw_slowdown(trials, sweep, sweep_cfg)
    if fig is None:
        style.notice(out, f"sweep {sweep}: no checked trials with slowdowns")
        return long
    save(fig, out)
    return long
