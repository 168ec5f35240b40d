"""Generated sections of the paper: platform and scope, limitations.

Every number and every platform fact here is read from the pipeline's
outputs (``summary.json``: provenance, group mapping, target status;
``summary.csv``: the environment columns each runner recorded), never typed
in: the paper must describe the machine the data came from, whichever it was.
Targets that have no summary in this build are listed from
:data:`hxfuse.config.targets.TARGETS` as *not run*, with what running them would give.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from hxfuse.paper import answers as ans
from hxfuse.runner import mechanism as mech
from hxfuse.paper import graph_section as pg
from hxfuse.paper import search_section as pq
from hxfuse.paper import serve_section as ps
from hxfuse.paper import workloads as pw
from hxfuse.config.targets import TARGETS, emulated_results, is_emulated
from hxfuse.render.evidence import evidence_frame, latency_pairs
from hxfuse.render.latex import tex_escape


def load(summaries: Sequence[str | Path], summaries_json: Sequence[str | Path]) -> tuple[dict, dict]:
    """(target -> summary DataFrame, target -> summary.json dict), keyed by
    the target each summary.json names."""
    tabs, docs = {}, {}
    if len(summaries) != len(summaries_json):
        raise ValueError(f"{len(summaries)} summary.csv files but {len(summaries_json)} summary.json files")
    for csv, js in zip(summaries, summaries_json):
        doc = json.loads(Path(js).read_text())
        if "target" not in doc:
            raise ValueError(f"{js}: no 'target' key: not a summary.json written by the aggregate rule")
        try:
            tabs[doc["target"]] = pd.read_csv(csv)
        except pd.errors.EmptyDataError:
            tabs[doc["target"]] = pd.DataFrame()
        docs[doc["target"]] = doc
    return tabs, docs


def _distinct(s: pd.DataFrame, col: str) -> list[str]:
    """The distinct recorded values of an environment column, as text."""
    if s.empty or col not in s:
        return []
    out = []
    for v in s[col].dropna():
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        t = str(v).strip()
        if t and t.lower() != "nan" and t not in out:
            out.append(t)
    return out


def _joined(s: pd.DataFrame, col: str, default: str = "not recorded") -> str:
    vals = _distinct(s, col)
    return "; ".join(vals) if vals else default


def _span(s: pd.DataFrame, col: str, unit: str = "") -> str:
    """A numeric environment column as its value or its recorded range."""
    v = pd.to_numeric(s[col], errors="coerce").dropna() if (not s.empty and col in s) else pd.Series(dtype=float)
    if not len(v):
        return "not recorded"
    lo, hi = v.min(), v.max()
    txt = f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"
    return txt + unit


# Written judgement where the recorded mapping cannot say it: on the host, B
# is this project's own executor, so D ~ B holds almost by construction.
B_LIMITATION = {
    "host": "B is this project's own executor with one queue per engine thread: it differs from D only in "
    "who pushes the jobs, so D ~ B is expected by construction. A real backend's concurrency is the "
    "separate external target (ONNX Runtime, CPU provider).",
}


def _units_text(cores: list[str], hw_threads: list[str]) -> str:
    """The platform's parallel units in words: the cDSP counts hardware
    threads, never cores (hxfuse.analysis.environment.parallel_units)."""
    if cores:
        return "; ".join(cores)
    return f"{'; '.join(hw_threads)} hardware threads (not cores)" if hw_threads else "not recorded"


def platform(target: str, s: pd.DataFrame, doc: dict) -> dict:
    """The recorded platform of one target that ran, as plain values."""
    prov = doc.get("provenance", {}) or {}
    rounds = pd.to_numeric(s["n"], errors="coerce") if "n" in s else pd.Series(dtype=float)
    reps = sorted({int(v) for v in (doc.get("replicates") or {}).values()})
    cores = _distinct(s, "online_cores")
    hw = [] if cores else _distinct(s, "hw_threads")
    return {
        "target": target,
        "status": doc.get("target_status") or (TARGETS[target].status if target in TARGETS else "unknown"),
        "emulated": emulated_results(target, table=s, doc=doc),
        "cpu": _joined(s, "cpu_model"),
        "cores": _units_text(cores, hw),
        "cores_n": int(cores[0]) if len(cores) == 1 else None,
        "governor": _joined(s, "cpu_governor"),
        "platform": prov.get("platform") or "not recorded",
        "compiler": "; ".join(prov.get("compilers") or []) or _joined(s, "compiler"),
        "python": prov.get("python") or "not recorded",
        "sdk": _joined(s, "sdk_version", "none"),
        "clock": (
            f"{_span(s, 'clock_resolution_ns', ' ns')} resolution, {_span(s, 'clock_read_overhead_ns', ' ns')} per read"
        ),
        "engines": _span(s, "device_engines_used"),
        "n_points": int(doc.get("n_points", 0)),
        "n_failed": len(doc.get("failed_points", []) or []),
        "replicates": ", ".join(str(r) for r in reps) or "not recorded",
        "rounds": int(rounds.max()) if len(rounds.dropna()) else None,
        "group_mapping": dict(doc.get("group_mapping") or {}),
        # how the host reached the engines: {mode: {text, replicates}} (hxfuse.sweep.pipeline)
        "transport": dict(doc.get("transport_modes") or {}),
        "group_b": B_LIMITATION.get(target)
        or doc.get("group_b_backend")
        or (TARGETS[target].group_b if target in TARGETS else ""),
        "commit": (prov.get("git_commit") or "unknown")[:10],
    }


def _row(key: str, value: str) -> str:
    return rf"{key} & {value} \\"


def setup_tex(tabs: Mapping[str, pd.DataFrame], docs: Mapping[str, dict]) -> str:
    """Table ``tab:setup``: one block per target that ran."""
    out = [
        "% Generated by hxfuse.paper.sections (rule `paper_sections`); do not edit.",
        r"\begin{table}[tbp]",
        r"\centering",
        r"\caption{Platform of every target that ran in this build, as the runner and the "
        r"pipeline recorded it (summary provenance and environment columns), and what each "
        r"group is on that target.}",
        r"\label{tab:setup}",
        r"\begin{tabular}{@{}p{0.2\linewidth}>{\raggedright\arraybackslash}p{0.76\linewidth}@{}}",
        r"\toprule",
    ]
    first = True
    for target, doc in docs.items():
        p = platform(target, tabs.get(target, pd.DataFrame()), doc)
        if not first:
            out.append(r"\midrule")
        first = False
        out.append(
            rf"\multicolumn{{2}}{{@{{}}l}}{{\textbf{{target \texttt{{{tex_escape(target)}}}}}: "
            rf"{tex_escape(p['status'])}}} \\"
        )
        out.append(r"\midrule")
        out += [
            _row("CPU", tex_escape(p["cpu"])),
            _row("online cores", tex_escape(p["cores"])),
            _row("frequency governor", tex_escape(p["governor"])),
            _row("operating system", tex_escape(p["platform"])),
            _row("compiler", tex_escape(p["compiler"])),
            _row("Python (analysis)", tex_escape(p["python"])),
            _row("SDK", tex_escape(p["sdk"])),
            _row("clock", tex_escape(p["clock"])),
            _row("emulated", "yes: timings are not performance" if p["emulated"] else "no"),
            _row("engines busy at once", tex_escape(p["engines"]) + " (by workload)"),
            _row(
                "points",
                f"{p['n_points']} ({p['n_failed']} failed), "
                f"{tex_escape(p['replicates'])} replicate(s) per point, "
                f"{p['rounds'] if p['rounds'] is not None else '--'} measured rounds per point "
                f"and group in all",
            ),
        ]
        for mode, t in p["transport"].items():
            n = t.get("replicates", 0) if isinstance(t, dict) else 0
            text = t.get("text", "") if isinstance(t, dict) else str(t)
            out.append(_row("host--engine boundary", tex_escape(f"{mode} ({n} runs): {text}")))
        for g in "ABCD":
            if g in p["group_mapping"]:
                out.append(_row(f"group {g}", tex_escape(p["group_mapping"][g])))
        if p["group_b"]:
            out.append(_row("B's limitation", tex_escape(p["group_b"])))
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(out) + "\n"


def scope_tex(tabs: Mapping[str, pd.DataFrame], docs: Mapping[str, dict], external: pd.DataFrame | None = None) -> str:
    """A plain statement of what was and was not measured, on which target."""
    items = []
    for target in TARGETS:
        if target in docs:
            p = platform(target, tabs.get(target, pd.DataFrame()), docs[target])
            cpu = f"{p['cores']} online core(s) of {p['cpu']}, {p['platform']}"
            if p["emulated"]:
                what = (
                    rf"ran under emulation ({tex_escape(cpu)}): {p['n_points']} points were checked "
                    r"for correctness only; no timing from it is reported as performance."
                )
            else:
                what = (
                    rf"ran ({tex_escape(p['status'])}) on {tex_escape(cpu)}: {p['n_points']} points, "
                    rf"{p['n_failed']} failed the correctness check. Every timing in this paper comes "
                    r"from this target."
                )
        else:
            what = (
                rf"not run in this build. {tex_escape(TARGETS[target].status)}."
                if not is_emulated(target)
                else rf"not run in this build ({tex_escape(TARGETS[target].status)})."
            )
        items.append(rf"\item \texttt{{{tex_escape(target)}}}: {what}")
    if external is not None and len(external):
        loaded = sum(str(v).lower() == "true" for v in external.get("loaded", []))
        items.append(
            rf"\item External B (ONNX Runtime on the host, {tex_escape(str(external['backend'].iloc[0]))}): "
            rf"ran at {len(external)} point(s) x workload(s), {loaded} of them on a loaded machine; "
            r"timings are real but compare ONNX Runtime's kernels and scheduling with the runner's."
        )
    else:
        items.append(
            r"\item External B (ONNX Runtime on the host, \texttt{snakemake external}): "
            r"not run in this build, so group B below is the project's own executor only."
        )
    return (
        "% Generated by hxfuse.paper.sections (rule `paper_sections`); do not edit.\n"
        r"\begin{itemize}" + "\n" + "\n".join(items) + "\n" + r"\end{itemize}" + "\n"
    )


def platform_macros(tabs: Mapping[str, pd.DataFrame], docs: Mapping[str, dict]) -> str:
    """``\\hxCores`` and friends for the text: the first timed target's values."""
    lines = ["% Generated by hxfuse.paper.sections (rule `paper_sections`); do not edit."]
    timed = [t for t in docs if not platform(t, tabs.get(t, pd.DataFrame()), docs[t])["emulated"]]
    p = platform(timed[0], tabs.get(timed[0], pd.DataFrame()), docs[timed[0]]) if timed else None
    vals = {
        "hxTimedTarget": timed[0] if timed else "none",
        "hxCores": p["cores"] if p else "--",
        "hxCpu": p["cpu"] if p else "--",
        "hxPlatform": p["platform"] if p else "--",
        "hxRounds": str(p["rounds"]) if p and p["rounds"] is not None else "--",
        "hxReplicates": p["replicates"] if p else "--",
    }
    an = (docs[timed[0]] if timed else next(iter(docs.values()), {})).get("analysis") or {}
    vals["hxMinEffectPct"] = f"{100 * float(an.get('min_effect', math.nan)):g}" if "min_effect" in an else "--"
    vals["hxCiPct"] = f"{100 * float(an['ci']):g}" if "ci" in an else "--"
    vals["hxBootstrap"] = str(an.get("bootstrap", "--"))
    for k, v in vals.items():
        lines.append(rf"\newcommand{{\{k}}}{{{tex_escape(v)}}}")
    return "\n".join(lines) + "\n"


# What each mechanism check needs to pass, in words: the rule of
# hxfuse/runner/mechanism.py (its thresholds are known answers, not tuned).
MECHANISM_PASSES_WHEN = {
    "async_launch": "V ends and reaches the host before M ends, in every trial",
    "wait_not_blocking": "the copy ends while the control thread waits on M (D); in C it starts after M",
    "publication": "no checksum mismatch in any round",
    "c_equals_d": "every checksum equal to the verified one",
    "rejections": "exit status 3 before any trial, no output",
    "calibration": (
        "C's busy union at least 0.95 x the sum (no upper limit: preemption stretches C and D alike); "
        "D's at most C's x (bound + half the overlap opportunity) / sum, i.e. D measured against C of the "
        "same run, not against the bound itself; D's entry shorter than C's"
    ),
    "one_core": "parallelism at most {limit}",
    "two_cores": "parallelism at least {limit}; skipped when other load held the cores",
}


def _passes_when(c: dict) -> str:
    """The stated tolerance of check *c*, with the measured ratios where the
    check's numbers give them (the calibration: C over the sum, D over the
    bound and D's allowance)."""
    n = c.get("numbers") or {}
    text = MECHANISM_PASSES_WHEN.get(c.get("key", ""), "")
    if "{limit}" in text:
        text = text.format(limit=n.get("limit", "the stated limit"))
    if c.get("key") == "calibration" and all(k in n for k in ("sum_us", "bound_us", "C_busy_us", "D_busy_us")):
        total, bound, cb, db = (float(n[k]) for k in ("sum_us", "bound_us", "C_busy_us", "D_busy_us"))
        allowed = cb * (bound + 0.5 * (total - bound)) / total
        text += (
            f". Measured: C = {cb / total:.2f} x the sum, D = {db / bound:.2f} x the bound; "
            f"D {db:.0f} us against the {allowed:.0f} us allowed"
        )
    return text


def mechanism_tex(doc: dict, target: str = "host") -> str:
    """Table ``tab:mechanism``: claim, how it was shown, what it needs to
    pass (the stated tolerance), result with its numbers."""
    n = len(doc["checks"])
    passed = sum(c["result"] == "pass" for c in doc["checks"])
    failed = [c["key"] for c in doc["checks"] if c["result"] == "fail"]
    out = [
        "% Generated by hxfuse.paper.sections (rule `paper_sections`); do not edit.",
        r"\begin{table}[tbp]",
        r"\centering",
        rf"\caption{{Mechanism validation on target \texttt{{{tex_escape(target)}}}: each claim about the "
        rf"fused executor, the run that shows it, what it needs to pass and what the run gave ({passed} of "
        rf"{n} passed"
        + (rf"; failed: {tex_escape(', '.join(failed))}" if failed else "")
        + r"). Calibration tasks busy-wait on thread CPU time, so the timestamps hold on a loaded machine. "
        r"On the host the engines are threads and task D is a memcpy thread that occupies a core, not a DMA "
        r"engine.}",
        r"\label{tab:mechanism}",
        r"\begin{tabular}{@{}>{\raggedright\arraybackslash}p{0.16\linewidth}"
        r">{\raggedright\arraybackslash}p{0.22\linewidth}>{\raggedright\arraybackslash}p{0.26\linewidth}"
        r">{\raggedright\arraybackslash}p{0.26\linewidth}@{}}",
        r"\toprule",
        r"claim & how it was shown & passes when & result \\",
        r"\midrule",
    ]
    for c in doc["checks"]:
        res = {"pass": r"\textbf{pass}", "fail": r"\textbf{FAIL}", "skipped": r"\emph{skipped}"}[c["result"]]
        why = f" ({c['reason']})" if c["result"] == "skipped" and c.get("reason") else ""
        out.append(
            rf"{tex_escape(c['claim'])} & {tex_escape(c['how'])} & {tex_escape(_passes_when(c))} & "
            rf"{res}: {tex_escape(c['shown'])}{tex_escape(why)} \\"
        )
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(out) + "\n"


def _mechanism_tex(path: str | Path | None) -> str:
    if path is None:
        raise ValueError("the mechanism section needs mechanism.json (rule mechanism)")
    return mechanism_tex(mech.load(path))


def _answers_tex(docs: Mapping[str, dict], external: pd.DataFrame | None = None) -> str:
    """The answers of the first timed target (emulated ones answer nothing)."""
    timed = [t for t in docs if not emulated_results(t, doc=docs[t])]
    doc = docs[timed[0]] if timed else next(iter(docs.values()))
    target = doc.get("target", "")
    note = ("B's limitation: " + B_LIMITATION[target]) if target in B_LIMITATION else ""
    text = ans.answers_tex(doc, b_note=note)
    ext = (
        ans.external_sentence(external.to_dict(orient="records"))
        if external is not None
        else "The external comparison against ONNX Runtime did not run in this build."
    )
    return text + "\\newcommand{\\hxAnswerExternal}{%\n" + ext + "}\n"


def write_sections(
    summaries: Sequence[str | Path],
    summaries_json: Sequence[str | Path],
    out: Mapping[str, str | Path],
    mechanism: str | Path | None = None,
    sweeps: Mapping[str, dict] | None = None,
    timelines: Sequence[str] = (),
    evidence_figures: Mapping[str, str] | None = None,
    external_csv: str | Path | None = None,
    workloads: Mapping | None = None,
) -> None:
    """Write every generated section named in ``out``: setup, scope,
    platform_macros, mechanism (needs ``mechanism``, the path of
    mechanism.json), answers, evidence (sentences on the evidence figure),
    limitations, figures (needs ``sweeps``; ``timelines`` and
    ``evidence_figures`` (target -> path) are the figures to lay out), and
    the sections of the further workloads (hxfuse.paper.graph_section, serve_section, search_section): graph,
    serve, search and workload_answers (their macros for the abstract and
    the answers).  ``workloads`` names their inputs, each optional (absent:
    the section says it did not run): graph_summary, graph_files,
    graph_profiles (point -> figure), graph_speedup, graph_table; serve_summary,
    serve_figures (name -> figure), serve_table; search_results,
    search_figures (name -> figure), search_table.  Paths of figures and
    tables are as the paper's directory includes them (figures relative to
    the working directory, ``../`` is prefixed)."""
    tabs, docs = load(summaries, summaries_json)
    if not docs:
        raise ValueError("no summary.json given: the paper needs at least one target's results")
    external = None
    if external_csv:
        try:
            external = pd.read_csv(external_csv)
        except pd.errors.EmptyDataError:
            external = pd.DataFrame()
    timed = [t for t in docs if not platform(t, tabs.get(t, pd.DataFrame()), docs[t])["emulated"]]
    emulated = [t for t in docs if t not in timed]
    m = float((next(iter(docs.values())).get("analysis") or {}).get("min_effect", 0.03))

    def figures() -> str:
        if sweeps is None:
            raise ValueError("the figures section needs the sweeps (config)")
        return figures_tex(list(docs), sweeps, timelines, evidence_figures or {}, m, emulated)

    def evidence() -> str:
        body = evidence_text(tabs[timed[0]]) if timed else "No timed target ran: no evidence to show."
        return (
            "% Generated by hxfuse.paper.sections (rule `paper_sections`); do not edit.\n"
            "\\newcommand{\\hxEvidenceText}{%\n" + body + "}\n"
        )

    w = dict(workloads or {})
    graphs, storage = pg.load_graphs(w.get("graph_summary"), w.get("graph_files") or ())
    serve = ps.load_serve(w.get("serve_summary"))
    searches = pq.load_searches(w.get("search_results") or ())

    text = {
        "setup": lambda: setup_tex(tabs, docs),
        "scope": lambda: scope_tex(tabs, docs, external),
        "platform_macros": lambda: platform_macros(tabs, docs),
        "mechanism": lambda: _mechanism_tex(mechanism),
        "answers": lambda: _answers_tex(docs, external),
        "evidence": evidence,
        "limitations": lambda: limitations_tex(tabs, docs, pw.limitation_items(graphs, serve)),
        "figures": figures,
        "graph": lambda: pg.graph_tex(
            graphs, w.get("graph_profiles") or {}, w.get("graph_speedup"), storage, w.get("graph_table"), m
        ),
        "serve": lambda: ps.serve_tex(serve, w.get("serve_figures") or {}, w.get("serve_table")),
        "search": lambda: pq.search_tex(searches, w.get("search_figures") or {}, w.get("search_table")),
        "workload_answers": lambda: pw.answers_macros(graphs, serve, searches, m),
    }
    unknown = set(out) - set(text)
    if unknown:
        raise ValueError(f"unknown generated section(s): {sorted(unknown)}")
    for key, path in out.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text[key]())


# ---------------------------------------------------------------------------
# Evidence already measured, shown: early completion, preparation, scratch


def evidence_figure(
    s: pd.DataFrame, out: Sequence[str | Path], target: str, out_points: Sequence[str | Path] = ()
) -> None:
    """The evidence figures (hxfuse.render.evidence): early completion and
    scratch against speedup to *out*, the per-point panels (preparation,
    parallelism, wall overlap, host/device split, run share) to *out_points*
    (next to *out* as ``evidence_points.*`` where not given)."""
    # the figure modules import matplotlib; the rest of this module does not
    from hxfuse.render import evidence

    pts = list(out_points) or [Path(p).with_name("evidence_points" + Path(p).suffix) for p in out]
    evidence.evidence_figures(s, out, pts, target)


def _scratch_range(pk: pd.DataFrame) -> str:
    """The range of the scratch peak over the points that use the arena, and
    how many do not (a peak of 0 MiB is no measurement)."""
    used = pk.where(pk > 0)
    unused = int((pk.fillna(0) <= 0).all(axis=1).sum())
    out = (
        f"; where the arena is used, the scratch peak ranges over {used.min().min():.0f}--{used.max().max():.0f}\\,MiB"
        if used.notna().any().any()
        else "; no point uses the scratch arena"
    )
    return out + (f" ({unused} of {len(pk)} points do not use it)." if unused and used.notna().any().any() else ".")


def evidence_text(s: pd.DataFrame) -> str:
    """Generated sentences on the evidence figure (every number from ``s``)."""
    lp = latency_pairs(s)
    ev = evidence_frame(s)
    parts = []
    if len(lp):
        gain = lp[lp["no_early_ns"] > 2 * lp["early_ns"]]
        best = lp.loc[(lp["no_early_ns"] - lp["early_ns"]).idxmax()]
        parts.append(
            f"In group D, early completion let the host see a task's result sooner by more than a factor of two "
            f"for {len(gain)} of {len(lp)} task completions; the largest gain is task {best['task']} of "
            rf"\texttt{{{tex_escape(best['point_id'])}}}: {best['early_ns'] / 1e3:.0f}\,us after its end "
            f"instead of {best['no_early_ns'] / 1e6:.1f}\\,ms at the entry's return. The early-completion "
            f"latency itself is {lp['early_ns'].min() / 1e3:.0f}--{lp['early_ns'].max() / 1e3:.0f}\\,us "
            f"(median {lp['early_ns'].median() / 1e3:.0f}\\,us)."
        )
    if len(ev) and ev["prep_share"].notna().any():
        d = ev[ev["group"] == "D"]["prep_share"].dropna()
        if len(d):
            parts.append(
                f"Preparation done before timing (M's packing) is {100 * d.min():.0f}--{100 * d.max():.0f}\\% "
                f"of D's end-to-end time (median {100 * d.median():.0f}\\%); only the end-to-end speedups "
                r"(D/A\textsubscript{e2e} in Table~\ref{tab:overlap} and in the answers) include it, "
                "counted once per trial on both sides of each ratio."
            )
    if len(ev) and ev["scratch_mib"].notna().any():
        pk = ev.pivot_table(index="point_id", columns="group", values="scratch_mib", aggfunc="first")
        if {"A", "D"} <= set(pk.columns):
            more = pk[pk["D"] > pk["A"]]
            parts.append(
                f"D needs more scratch than A on {len(more)} of {len(pk)} points"
                + (
                    f" (e.g. \\texttt{{{tex_escape(more.index[0])}}}: {more['A'].iloc[0]:.0f}\\,MiB serial, "
                    f"{more['D'].iloc[0]:.0f}\\,MiB fused)"
                    if len(more)
                    else ""
                )
                + _scratch_range(pk)
            )
    return " ".join(parts) if parts else "No evidence columns were recorded."


# ---------------------------------------------------------------------------
# Figure layout: pairs and subfigures with captions that stand alone


def representative_timelines(targets: Sequence[str], sweeps: Mapping[str, dict]) -> list[str]:
    """One timeline per workload: the middle point of the first sweep that
    has the workload (paths as the timeline rule writes them)."""
    out = []
    for t in targets:
        seen = set()
        for s, sw in sweeps.items():
            pts = sw["points"]
            mid = pts[len(pts) // 2]["name"]
            for w in sw["workloads"]:
                if w not in seen:
                    seen.add(w)
                    out.append(f"results/{t}/figures/timeline/{s}/{w}/{mid}.pdf")
    return out


def _subfig(path: str, caption: str, size: str = "") -> list[str]:
    """A subfigure including *path*; at its natural size unless *size* says
    otherwise: the pipeline draws the paper's figures at most the text wide
    with no text under 6 pt (hxfuse.render.style), so scaling them would only
    shrink the text."""
    opts = f"[{size}]" if size else ""
    return [
        r"\begin{subfigure}{\linewidth}\centering",
        rf"\includegraphics{opts}{{../{path}}}",
        rf"\caption{{{caption}}}",
        r"\end{subfigure}",
    ]


# What the host's engines are, said in every caption that plots their times.
HOST_ENGINES = (
    r"On the host the engines are threads on CPU cores, and task D is a memcpy thread that occupies a "
    r"core, not a DMA engine."
)


def figures_tex(
    targets: Sequence[str],
    sweeps: Mapping[str, dict],
    timelines: Sequence[str],
    evidence: Mapping[str, str],
    min_effect: float,
    emulated: Sequence[str] = (),
) -> str:
    """The paper's figures: per sweep its speedups and per-task slowdowns as
    two subfigures of one figure; the two evidence figures per timed target;
    one timeline per figure.  Emulated targets get timelines only, marked.
    Every figure is included at its natural size (timelines: scaled to fit a
    page, never below 0.9)."""
    out = ["% Generated by hxfuse.paper.sections (rule `paper_sections`); do not edit."]
    band = f"{min_effect:g}"
    emulated = set(emulated)
    for t in targets:
        if t in emulated or is_emulated(t):
            continue
        for s, sw in sweeps.items():
            title = tex_escape(sw.get("title", s))
            xl = tex_escape(sw.get("variable", ""))
            out += [r"\begin{figure}[p]", r"\centering"]
            out += _subfig(
                f"results/{t}/figures/speedup_{s}.pdf",
                rf"Paired speedups $T_Y/T_X$ per workload at each point of the sweep"
                rf"{(' (' + xl + ')') if xl else ''}, the points in sweep order and not joined: median over "
                rf"all rounds of all replicates with the \emph{{decision interval}}, the interval the verdict "
                rf"reads and Table~\ref{{tab:results}} prints. Grey band: 1 $\pm$ {band}, where a difference "
                r"does not count; dashed bars: the limit of perfect overlap (sum of alone times over the "
                r"resource-aware bound); y logarithmic.",
            )
            out.append(r"\vspace{1ex}")
            out += _subfig(
                f"results/{t}/figures/slowdown_{s}.pdf",
                r"Per-task slowdown $T_i^X/T_i$ (median, two-level bootstrap 95\% interval). Top, B and D: "
                r"the tasks run at once, so a slowdown above 1 is the cost of sharing cores, memory or the "
                r"entry. Bottom, A and C (log scale): the tasks run in turn, so a task's completion includes "
                r"the time it queued behind the tasks before it; that is the serial order, not interference.",
            )
            out += [
                rf"\caption{{Sweep ``{title}'' on target \texttt{{{tex_escape(t)}}}: (a) what each group "
                rf"gains, (b) what it costs each task. {HOST_ENGINES}}}",
                rf"\label{{fig:sweep-{tex_escape(t)}-{s}}}",
                r"\end{figure}",
                "",
            ]
        if t in evidence:
            points = evidence[t].replace("evidence.pdf", "evidence_points.pdf")
            out += [
                r"\begin{figure}[tbp]",
                r"\centering",
                rf"\includegraphics{{../{evidence[t]}}}",
                rf"\caption{{Evidence already measured, target \texttt{{{tex_escape(t)}}}. (a) Group D: time "
                r"from a task's end to the host seeing it, with the early-completion interface against the "
                r"entry's single return (below the dashed line: the host saw the result earlier). (b) Scratch "
                r"peak of A, C and D against their speedup over A (grey lines join the groups of one point); "
                r"points that do not use the scratch arena stand in the ``not used'' column. "
                rf"{HOST_ENGINES}}}",
                rf"\label{{fig:evidence-{tex_escape(t)}}}",
                r"\end{figure}",
                "",
                r"\begin{figure}[tbp]",
                r"\centering",
                rf"\includegraphics{{../{points}}}",
                rf"\caption{{Evidence per point, target \texttt{{{tex_escape(t)}}}. (c) Preparation done before "
                r"timing (M's packing) as a share of end-to-end time. (d) Group D's parallelism (task CPU time "
                rf"over makespan, two-level bootstrap 95\% interval; grey: up to 1 + {band}, no progress "
                r"overlap). (e) Its largest wall-clock overlap of two engines, which time sharing one core also "
                r"produces. (f) D's makespan split into the fused entry's span and host time outside it. "
                r"(g) The share of its own span each task of D was running (1: it never waited for a core).}",
                rf"\label{{fig:evidence-points-{tex_escape(t)}}}",
                r"\end{figure}",
                "",
            ]
    for i, tl in enumerate(timelines):
        parts = Path(tl).with_suffix("").parts
        t, s, w, p = parts[1], parts[-3], parts[-2], parts[-1]
        emu = (
            r" \textbf{EMULATED} (QEMU): functional only, not performance." if (t in emulated or is_emulated(t)) else ""
        )
        out += [
            r"\begin{figure}[p]",
            r"\centering",
            rf"\includegraphics[width=\linewidth,height=0.9\textheight,keepaspectratio]{{../{tl}}}",
            rf"\caption{{Timeline of target \texttt{{{tex_escape(t)}}}, sweep {tex_escape(s)}, workload "
            rf"\texttt{{{tex_escape(w)}}}, point {tex_escape(p)}: per group the round with the median "
            r"makespan, one lane per engine and one for the host; a bar's solid part is the share of its span "
            r"the task was running and its label the core. The spread over every round is drawn with it "
            r"(shaded: the makespan's 25--75\% range; black bars: each task's end, 25--75\% and 5--95\%). "
            r"Host submit is the time from the host entering its submit call to the call's return; its "
            r"cross-hatched part is time a task ran on the host thread's own core, so the host could not "
            r"return until that task released it (on a 2-core host, host and vector thread share a core). "
            rf"{HOST_ENGINES}{emu}}}",
            rf"\label{{fig:timelines-{i}}}",
            r"\end{figure}",
            "",
        ]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------
# Limitations: generated where they are data


def _column_values(df: pd.DataFrame, col: str) -> pd.Series:
    """The finite values of a column (empty where the table or column is missing)."""
    if not len(df) or col not in df:
        return pd.Series(dtype=float)
    return pd.to_numeric(df[col], errors="coerce").dropna()


def limitations_tex(tabs: Mapping[str, pd.DataFrame], docs: Mapping[str, dict], extra: Sequence[str] = ()) -> str:
    """Itemised threats to validity; every number from the summaries
    (``extra``: items of the further workloads, hxfuse.paper.workloads)."""
    items = []
    for target, doc in docs.items():
        s = tabs.get(target, pd.DataFrame())
        p = platform(target, s, doc)
        tt = rf"\texttt{{{tex_escape(target)}}}"
        if p["emulated"]:
            items.append(
                rf"\item \textbf{{Emulation.}} Target {tt} ran under an emulator: its "
                rf"{p['n_points']} points are checked for correctness only and none of its timings is read."
            )
            continue
        if s.empty:
            continue
        d = s[s["group"] == "D"]
        eng = pd.to_numeric(d.get("device_engines_used"), errors="coerce")
        cores = pd.to_numeric(d.get("online_cores"), errors="coerce")
        over = int((eng > cores).sum()) if len(d) else 0
        items.append(
            rf"\item \textbf{{Cores, not engines.}} On {tt} the engines are threads on {tex_escape(p['cores'])} "
            rf"online core(s) of {tex_escape(p['cpu'])}; {over} of {len(d)} points keep more engines busy at once "
            r"than there are cores, so their tasks must share cores and $T_\mathrm{ideal}=\max_i T_i$ is out of "
            r"reach (the resource-aware bound and D's parallelism are reported beside it). An NPU's matrix, "
            r"vector and DMA engines do not take cores from each other; threads do, and they share caches and "
            r"memory bandwidth differently from HMX, HVX and user DMA."
        )
        verd = doc.get("verdicts") or []
        why = [str(v.get("inconclusive_reason") or "") for v in verd if v.get("verdict_key") == "inconclusive"]
        busy = sum(v.get("verdict_key") == "machine-busy" for v in verd)
        rep = sum("replicates disagree" in r for r in why)
        left = sum(bool(v.get("replicates_left_out")) and v.get("verdict_key") != "machine-busy" for v in verd)
        items.append(
            rf"\item \textbf{{Noise on a shared machine.}} Disturbed replicates are measured again, not "
            rf"vetoed: the run job waits (bounded) for a quiet machine and reruns a replicate whose runner saw "
            rf"other work; the points are decided on their clean replicates. On {tt}, {busy} of {len(verd)} "
            rf"points had no clean replicate (machine too busy); {left} were decided without a disturbed "
            rf"replicate, whose verdict with it is reported as a sensitivity check; {rep} are inconclusive "
            rf"because two replicates' own intervals lie on opposite sides of the margin. Each relation is "
            rf"decided on log(ratio), its interval joined with a $t$ interval on the replicates' medians and "
            rf"widened by the largest shift that the rounds hit by interference could cause; a relation left "
            rf"open names why (too few replicates, machine busy, or an interval spanning the margin). The "
            rf"machine was shared with other work while measuring (recorded load and busy cores are in the "
            rf"summary), which the replicates ({tex_escape(p['replicates'])} per point) expose rather than remove."
        )
        b = s[s["group"] == "B"]

        late, slow = _column_values(b, "late_handover_share"), _column_values(b, "submit_outlier_share")
        if len(late) and len(slow):
            items.append(
                rf"\item \textbf{{Host preemption.}} B's host thread submits one request per task. It handed "
                rf"B's tasks over late (last launch over 200\,us after the first, so B's tasks started apart) "
                rf"in {100 * late.min():.0f}--{100 * late.max():.0f}\% of B's rounds per point on {tt}; a "
                rf"slow last submit (the host preempted after every task was handed over, which delays no "
                rf"task) in {100 * slow.min():.0f}--{100 * slow.max():.0f}\%. The host is pinned beside the "
                rf"engine it submits to last; every round stays in every median."
            )
        if target in B_LIMITATION:
            items.append(rf"\item \textbf{{Which B.}} On {tt}, {tex_escape(B_LIMITATION[target])}")
    for target, info in TARGETS.items():
        if target not in docs and not is_emulated(target):
            items.append(
                rf"\item \textbf{{Untested device path.}} Target \texttt{{{tex_escape(target)}}} did not "
                rf"run: {tex_escape(info.status)}."
            )
    if not any(is_emulated(t) for t in docs):
        items.append(
            r"\item \textbf{Emulation.} No emulated target ran in this build, so not even the functional "
            r"Hexagon path is covered by these results."
        )
    items += list(extra)
    return (
        "% Generated by hxfuse.paper.sections (rule `paper_sections`); do not edit.\n\\begin{itemize}\n"
        + "\n".join(items)
        + "\n\\end{itemize}\n"
    )
