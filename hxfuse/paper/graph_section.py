"""The paper's section on task graphs from model blocks (workload 4,
:mod:`hxfuse.graph.stats`), its answer and abstract sentences.

From ``results/<target>/graph/summary.csv`` (one row per graph point: ready
profile, medians, paired speedups of D over A, B and C with their intervals
and readings, D's parallelism, ``loaded``) and the graph files
(``graph/json/<point>.json``: the storage a reuse plan saves); how a
reading is worded: hxfuse.paper.prose.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from hxfuse.analysis.verdicts import side_word
from hxfuse.paper.prose import HEADER, as_float, interval_text, is_finite, ms_text, span_pct, tex_path, tex_tt, truthy
from hxfuse.render.latex import tex_escape
from hxfuse.runner.mechanism import ONE_CORE_MAX

# The published structure of each block (what the builders in
# hxfuse/graph/build.py follow; docs/graphs.md, "The blocks").  Description, not
# results: sizes and node counts come from the graph files.
MODEL_STRUCTURE = {
    "decoder": "a transformer decoder layer (Llama style, norms left out): per micro-batch and head the Q, K and V "
    "projections, scores, scaled softmax, the weighted sum and the head's slice of the output "
    "projection; a residual; a SwiGLU feed-forward block and its residual",
    "inception": "an Inception (GoogLeNet) block: a 1x1 branch, two 1x1-reduce-then-3x3 branches and a "
    "3x3 max-pool-then-1x1 branch, each convolution a GEMM (3x3 through im2col) with its "
    "activation, the branches concatenated by the copy engine",
    "mobilenetv2": "a MobileNetV2 inverted residual block: 1x1 expansion, depthwise 3x3, 1x1 projection and the "
    "residual add, one chain per image, with the copy engine prefetching the next block's weights",
}
# ready profiles longer than this many steps are laid out at full width
WIDE_PROFILE_STEPS = 12


def storage_bytes(graph: Mapping) -> int:
    """Bytes of distinct storage a graph's buffers take (an aliased buffer
    lives in another's storage and adds nothing)."""
    return int(sum(int(b["bytes"]) for b in graph.get("buffers", []) if not b.get("alias")))


def _graph_reading(r: Mapping, key: str, t: str) -> str:
    """The summary's reading of a speedup (faster, slower, no difference,
    undetermined; "loaded, no verdict" for a point on a loaded machine)."""
    v = str(r.get(f"{key}_{t}_verdict") or "none")
    return {"none": "not measured", "inconclusive (loaded)": "loaded, no verdict"}.get(v, v)


def interval_reading(lo: float, hi: float, m: float) -> str:
    """An interval against the band 1 +- m: the graph summary's rule
    (hxfuse.analysis.verdicts.side_word, as hxfuse.graph.stats.verdict),
    applied here to a loaded point, whose summary reading is withheld."""
    return side_word(lo, hi, m)


def _graph_relation(r: Mapping, key: str, t: str, m: float) -> str:
    """The interval's relation to the minimum-effect band, whatever the
    machine's load (the reading a loaded point would have had)."""
    v = interval_reading(as_float(r.get(f"{key}_{t}_lo")), as_float(r.get(f"{key}_{t}_hi")), m)
    return "not measured" if v == "none" else v


def graph_point_sentence(r: Mapping, m: float) -> str:
    """D against A, B and C on one graph point (device time), D's
    parallelism and the reading of D's gain over A; a loaded point says so
    and is read on its intervals only, labelled as such."""
    name = tex_tt(r["point"])
    if truthy(r.get("failed")):
        return (
            f"{name} failed its correctness check ({tex_escape(str(r.get('failed_reasons') or ''))}): it "
            f"keeps its medians but no speedup."
        )
    loaded = truthy(r.get("loaded"))
    spd = ", ".join(
        f"{x} {interval_text(r[f'{k}_device'], r[f'{k}_device_lo'], r[f'{k}_device_hi'])}"
        + ("" if loaded else f" ({_graph_reading(r, k, 'device')})")
        for k, x in (("DA", "D/A"), ("DB", "D/B"), ("DC", "D/C"))
    )
    par = as_float(r.get("D_parallelism"))
    s = (
        f"{name}"
        + (
            f" (loaded: other work kept up to {as_float(r.get('other_busy_cores_max')):.1f} cores busy, so no verdict)"
            if loaded
            else ""
        )
        + f": {spd}"
        + (f"; parallelism {par:.2f}" if math.isfinite(par) else "")
        + ". "
    )
    if loaded:
        return s + "On its intervals only: " + graph_gain_reading(r, m, intervals=True)
    return s + graph_gain_reading(r, m)


def graph_gain_reading(r: Mapping, m: float, intervals: bool = False) -> str:
    """Where D's gain over A comes from, judged from the readings (or, with
    ``intervals``, the intervals' relations to the band 1 +- m) and D's
    parallelism: overlap needs a parallelism above the one-core bound of the
    mechanism check (ONE_CORE_MAX); without it, a gain over A with none over
    C is the host's round trips that the fused entry removes."""
    read = (lambda k: _graph_relation(r, k, "device", m)) if intervals else (lambda k: _graph_reading(r, k, "device"))
    da, dc = read("DA"), read("DC")
    par = as_float(r.get("D_parallelism"))
    nodes = int(as_float(r.get("nodes"))) if is_finite(r.get("nodes")) else None
    one = math.isfinite(par) and par <= ONE_CORE_MAX
    if da != "faster":
        return f"D is not shown faster than A (D/A {da})."
    if one and dc != "faster":
        return (
            f"D gains over A without overlap (parallelism at most {ONE_CORE_MAX:g}: the nodes took turns; D/C "
            f"{dc}): the gain is the host's round trip per node that the fused entry removes"
            + (f" ({nodes} requests in A, one in D)" if nodes else "")
            + "."
        )
    if one:
        return (
            f"D gains over A and over C without overlap (parallelism at most {ONE_CORE_MAX:g}: the nodes took "
            f"turns): the gain is waiting removed, A's host round trip and C's barrier after each node."
        )
    if dc == "faster":
        return (
            f"D gains over A and over C with a parallelism above {ONE_CORE_MAX:g}: nodes of different engines "
            f"ran at once, on top of the removed round trips."
        )
    return (
        f"D's parallelism is above {ONE_CORE_MAX:g} but D/C is {dc}, so overlap is not shown to add to the "
        f"removed round trips."
    )


def e2e_text(g: pd.DataFrame) -> str:
    """End-to-end against device-only D/A per point, and the preparation
    share that separates them (from the summary)."""
    ok = g[~g["failed"].map(truthy)]
    if ok.empty:
        return "No graph point passed its check, so nothing is said about end-to-end time."
    items = []
    for r in ok.to_dict("records"):
        dev = interval_text(r["DA_device"], r["DA_device_lo"], r["DA_device_hi"])
        items.append(
            rf"\item {tex_tt(r['point'])}: D/A {interval_text(r['DA_e2e'], r['DA_e2e_lo'], r['DA_e2e_hi'])} end to end "
            f"({_graph_reading(r, 'DA', 'e2e')}) against {dev} device only; preparation is "
            f"{100 * as_float(r.get('D_prep_share')):.0f}\\% of D's end-to-end time."
        )
    shares = pd.to_numeric(ok["D_prep_share"], errors="coerce").dropna()
    e2e, dev = pd.to_numeric(ok["DA_e2e"], errors="coerce"), pd.to_numeric(ok["DA_device"], errors="coerce")
    both = e2e.notna() & dev.notna()
    lower = int((e2e[both] < dev[both]).sum())
    return (
        "End to end, every trial also allocates the arena and the nodes' workspaces, copies the inputs in and "
        "frees everything, outside the device time of every group"
        + (f"; that preparation is {span_pct(list(shares))} of D's end-to-end time" if len(shares) else "")
        + f", and the end-to-end D/A median lies below the device-only one on {lower} of {int(both.sum())} "
        f"point(s).\n\\begin{{itemize}}\n" + "\n".join(items) + "\n\\end{itemize}"
    )


def reuse_pairs(g: pd.DataFrame) -> list[tuple[dict, dict]]:
    """(without reuse, with reuse) rows of one model: the reuse point whose
    name extends the plain point's (decoder, decoder-reuse), else the only
    reuse point of that model."""
    out = []
    rows = g.to_dict("records")
    for r in (x for x in rows if not truthy(x.get("reuse"))):
        cands = [q for q in rows if truthy(q.get("reuse")) and q["model"] == r["model"]]
        named = [q for q in cands if str(q["point"]).startswith(str(r["point"]))]
        pick = named[:1] or (cands if len(cands) == 1 else [])
        if pick:
            out.append((r, pick[0]))
    return out


def reuse_text(g: pd.DataFrame, storage: Mapping[str, int]) -> str:
    pairs = reuse_pairs(g)
    if not pairs:
        return (
            "No graph point of this build ran with and without buffer reuse (the graph study "
            r"\texttt{graphs} does: \texttt{-{}-config graph\_study=graphs}), so what reuse costs is not measured "
            "here."
        )
    bits = []
    for a, b in pairs:
        s = rf"\item {tex_tt(a['point'])} against {tex_tt(b['point'])}: "
        if a["point"] in storage and b["point"] in storage and storage[a["point"]] > 0:
            sa, sb = storage[a["point"]], storage[b["point"]]
            s += (
                f"distinct storage {sa / 2**10:.0f}\\,KiB without reuse, "
                f"{sb / 2**10:.0f}\\,KiB with ({100 * sb / sa:.0f}\\%); "
            )
        s += (
            f"the planner's ordering edges take the steps from {int(a['steps'])} to {int(b['steps'])}, the widest "
            f"step from {int(a['max_ready'])} to {int(b['max_ready'])} ready nodes and the mixed steps from "
            f"{int(a['mixed_steps'])} to {int(b['mixed_steps'])}; D's device time "
            f"{ms_text(a['D_device_ns'])} [{ms_text(a['D_device_ns_lo'])}, {ms_text(a['D_device_ns_hi'])}] without, "
            f"{ms_text(b['D_device_ns'])} [{ms_text(b['D_device_ns_lo'])}, {ms_text(b['D_device_ns_hi'])}] with, "
            "and D/A "
            f"{interval_text(a['DA_device'], a['DA_device_lo'], a['DA_device_hi'])} without, "
            f"{interval_text(b['DA_device'], b['DA_device_lo'], b['DA_device_hi'])} with reuse"
        )
        known = all(is_finite(x[k]) for x in (a, b) for k in ("D_device_ns_lo", "D_device_ns_hi"))
        if known and as_float(b["D_device_ns_lo"]) > as_float(a["D_device_ns_hi"]):
            reading = "D took longer with reuse (the intervals of D's device time do not overlap)"
        elif known and as_float(b["D_device_ns_hi"]) < as_float(a["D_device_ns_lo"]):
            reading = "D was quicker with reuse (the intervals of D's device time do not overlap)"
        else:
            reading = "the intervals of D's device time overlap, so no cost of reuse in time is shown"
        if truthy(a.get("loaded")) or truthy(b.get("loaded")):
            reading += " (read on intervals measured on a loaded machine)"
        bits.append(s + "; " + reading)
    return (
        "What a serial memory plan's reuse saves and costs, per block:\n\\begin{itemize}\n"
        + "\n".join(b + "." for b in bits)
        + "\n\\end{itemize}"
    )


def ready_answer(g: pd.DataFrame | None, m: float = 0.03) -> str:
    """Do ready independent tasks exist in model graphs? From the ready
    profiles of the graph points."""
    if g is None or g.empty:
        return "No graph point ran in this build, so the ready-task question is not answered by data."
    parts = []
    for r in g.to_dict("records"):
        parts.append(
            f"{tex_tt(r['point'])} {int(r['max_ready'])} ready nodes at its widest step, {int(r['mixed_steps'])} "
            f"of {int(r['steps'])} steps with ready work on two or more engine classes"
        )
    mixed = g[pd.to_numeric(g["mixed_steps"], errors="coerce") > 0]
    return (
        f"The ready profiles of {len(g)} graph point(s) (Section~\\ref{{sec:graphs}}) say how much independent "
        f"work a perfect scheduler finds: " + "; ".join(parts) + f". {len(mixed)} of {len(g)} have steps "
        f"where fusion across engines can overlap anything at all. " + graph_summary_sentence(g, m)
    )


def _gain_counts(rows: pd.DataFrame, read) -> tuple[int, int, int]:
    """(D faster than A, of those with parallelism <= ONE_CORE_MAX, of those
    not faster than C either) under a reading function read(row, key)."""
    fast = [r for r in rows.to_dict("records") if read(r, "DA") == "faster"]
    turns = [r for r in fast if as_float(r.get("D_parallelism")) <= ONE_CORE_MAX]
    not_c = [r for r in turns if read(r, "DC") != "faster"]
    return len(fast), len(turns), len(not_c)


def graph_summary_sentence(g: pd.DataFrame | None, m: float = 0.03) -> str:
    """D against A over all graph points and what carries the gain: verdicts
    for the points off a loaded machine, interval relations (labelled as
    such) for the loaded ones."""
    if g is None or g.empty:
        return ""
    ok = g[~g["failed"].map(truthy)]
    loaded = ok[ok["loaded"].map(truthy)]
    clean = ok[~ok["loaded"].map(truthy)]

    def tail(n_fast, n_turns, n_not_c):
        if not n_fast:
            return ""
        if not n_turns:
            return f"; D's parallelism exceeds {ONE_CORE_MAX:g} on all of these"
        s = f"; on {n_turns} of these D's parallelism is at most {ONE_CORE_MAX:g} (its nodes took turns)"
        if not n_not_c:
            return s + ", but D is faster than C on all of those (the barriers D drops, not overlap)"
        s += (
            f", and on {n_not_c} of those D is not faster than C either, so there the gain is the removed round "
            f"trips, not overlap"
        )
        if n_turns > n_not_c:
            s += (
                f"; on the other {n_turns - n_not_c} D is faster than C as well, which with nodes taking turns is "
                f"the barriers D drops, not overlap"
            )
        return s

    parts = []
    if len(clean):
        f, tt, nc = _gain_counts(clean, lambda r, k: _graph_reading(r, k, "device"))
        parts.append(
            f"On the device time D is faster than A on {f} of the {len(clean)} graph point(s) that carry "
            f"a verdict" + tail(f, tt, nc) + "."
        )
    if len(loaded):
        f, tt, nc = _gain_counts(loaded, lambda r, k: _graph_relation(r, k, "device", m))
        parts.append(
            f"{len(loaded)} graph point(s) ran on a loaded machine and carry no verdict; on their "
            f"intervals alone D/A lies above 1 + {m:g} on {f}" + tail(f, tt, nc) + "."
        )
    if len(ok) < len(g):
        parts.append(f"{len(g) - len(ok)} graph point(s) failed their check and carry no speedup.")
    return " ".join(parts)


def profile_figure(g: pd.DataFrame, profile_figures: Mapping[str, str], target: str) -> list[str]:
    """The ready profiles, one subfigure per graph point (none: no lines)."""
    if not profile_figures:
        return []
    out = [r"\begin{figure}[tbp]", r"\centering"]
    steps = dict(zip(g["point"], pd.to_numeric(g["steps"], errors="coerce")))
    for p, f in profile_figures.items():
        # the figure widens with the steps: a long profile gets the full width
        wide = steps.get(p, 0) > WIDE_PROFILE_STEPS
        out += [
            rf"\begin{{subfigure}}{{{'' if wide else '0.48'}\linewidth}}\centering",
            rf"\includegraphics[width=\linewidth,height=0.15\textheight,keepaspectratio]{{{tex_path(f)}}}",
            rf"\caption{{{tex_escape(p)}}}",
            r"\end{subfigure}\hfill",
        ]
    return out + [
        rf"\caption{{Ready profiles of the graph points (target \texttt{{{tex_escape(target)}}}): per "
        r"topological step (ASAP level), the nodes of each engine class a perfect scheduler finds ready. "
        r"Only steps with two or more classes give horizontal fusion across engines anything to overlap.}",
        r"\label{fig:graph-profiles}",
        r"\end{figure}",
    ]


def graph_tex(
    g: pd.DataFrame | None,
    profile_figures: Mapping[str, str],
    speedup_figure: str | None,
    storage: Mapping[str, int],
    table: str | None,
    m: float = 0.03,
    target: str = "host",
) -> str:
    """The body of the section on task graphs (workload 4)."""
    out = [HEADER.rstrip()]
    if g is None:
        out.append(
            r"No graph point ran in this build (the graph study is \texttt{config.graph\_study}: the default "
            r"\texttt{graphs-default} runs one MobileNetV2 block in \texttt{all}, and"
            "\n\\begin{quote}\\texttt{snakemake -{}-cores 4 graphs -{}-config graph\\_study=graphs}"
            "\\end{quote}\n"
            r"the three blocks with and without reuse)."
        )
        return "\n".join(out) + "\n"
    recs = g.to_dict("records")
    out.append(r"\subsection{The graphs and their ready tasks}")
    models = list(dict.fromkeys(g["model"]))
    out.append(
        "Each block is built from its published structure with random weights (uniform, scaled by the "
        "fan-in; seeded per replicate), so the timings depend on the shapes, not on trained values. "
        + " ".join(f"{tex_tt(mo)} is {MODEL_STRUCTURE.get(mo, 'a model block')}." for mo in models)
        + " The graph points and their ready profiles"
        + (
            " (Figure~\\ref{fig:graph-profiles}: the nodes of each engine class ready at each topological step)"
            if profile_figures
            else ""
        )
        + ":"
    )
    out.append(r"\begin{itemize}")
    for r in recs:
        out.append(
            rf"\item {tex_tt(r['point'])} ({tex_escape(r['label'])}"
            + (", buffer reuse" if truthy(r.get("reuse")) and "reuse" not in str(r["label"]) else "")
            + f"): {int(r['nodes'])} nodes "
            f"({int(r['n_M'])} M, {int(r['n_V'])} V, {int(r['n_D'])} D)"
            + (f", {int(r['edges'])} edges" if is_finite(r.get("edges")) else "")
            + f"; {int(r['steps'])} steps, at most {int(r['max_ready'])} ready nodes in one step, "
            f"{int(r['mixed_steps'])} step(s) with ready work on two or more engine classes."
        )
    out.append(r"\end{itemize}")
    mixed = int((pd.to_numeric(g["mixed_steps"], errors="coerce") > 0).sum())
    out.append(
        f"{mixed} of {len(g)} graph point(s) have a step where fusion across engines has anything to "
        f"overlap"
        + (
            "; the others offer only ready nodes of one engine class, which that engine runs one after another."
            if mixed < len(g)
            else "."
        )
    )
    out += profile_figure(g, profile_figures, target)
    out.append(r"\subsection{D against A, B and C}")
    out.append(
        (
            "Table~\\ref{tab:graphs} lists every graph point"
            + (" and Figure~\\ref{fig:graph-speedup} draws its speedups" if speedup_figure else "")
            + ". "
            + graph_summary_sentence(g, m)
            + " C is the same fused entry as D with a barrier after "
            "each node, so D/C isolates what dropping the barriers (and any overlap) gives; D's parallelism is "
            f"its nodes' CPU time over its device time, at most {ONE_CORE_MAX:g} when they took turns (the "
            "mechanism check's one-core bound). Per point, device time:"
        )
    )
    out.append(r"\begin{itemize}")
    out += [rf"\item {graph_point_sentence(r, m)}" for r in recs]
    out.append(r"\end{itemize}")
    if table:
        # sideways (rotating): at the body font its twelve columns are wider than
        # the text (by about 140 pt); its own float page, so the text flows on
        out += [
            r"\begingroup\let\table\sidewaystable\let\endtable\endsidewaystable",
            rf"\input{{{tex_path(table)}}}",
            r"\endgroup",
        ]
    if speedup_figure:
        out += [
            r"\begin{figure}[tbp]",
            r"\centering",
            r"\includegraphics[width=\linewidth,height=0.38\textheight,keepaspectratio]"
            rf"{{{tex_path(speedup_figure)}}}",
            r"\caption{Task graphs: paired speedups of D over A, B and C per graph point, device time and end to "
            r"end, medians with bootstrap 95\% intervals and the minimum-effect band.}",
            r"\label{fig:graph-speedup}",
            r"\end{figure}",
        ]
    out.append(r"\subsection{End to end against device only}")
    out.append(e2e_text(g))
    out.append(r"\subsection{What reuse costs}")
    out.append(reuse_text(g, storage))
    return "\n".join(out) + "\n"


def limitation_item(g: pd.DataFrame | None) -> str | None:
    """The graphs' item of the paper's limitations (None without graph points)."""
    if g is None or not len(g):
        return None
    loaded = g[g["loaded"].map(truthy)]
    return (
        rf"\item \textbf{{Graphs.}} The {len(g)} graph point(s) are single blocks at small sizes with random "
        r"weights, run by the host's threads: their ready profiles are properties of the graphs, their timings "
        r"of this machine; "
        + (
            f"{len(loaded)} of them ran on a loaded machine and carry no verdict."
            if len(loaded)
            else "none of them ran on a loaded machine."
        )
    )


def load_graphs(summary: str | Path | None, graph_files: Sequence[str | Path] = ()) -> tuple[pd.DataFrame | None, dict]:
    if not summary:
        return None, {}
    g = pd.read_csv(summary)
    storage = {Path(f).stem: storage_bytes(json.loads(Path(f).read_text())) for f in graph_files}
    return g, storage
