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

import numpy as np
import pandas as pd

from hxfuse.paper import answers as ans
from hxfuse.runner import mechanism as mech
from hxfuse.paper import graph_section as pg
from hxfuse.paper import search_section as pq
from hxfuse.paper import serve_section as ps
from hxfuse.paper import workloads as pw
from hxfuse.config.targets import TARGETS, emulated_results, is_emulated
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
        r"\centering\small",
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


def mechanism_tex(doc: dict, target: str = "host") -> str:
    """Table ``tab:mechanism``: claim, how it was shown, result with its numbers."""
    n = len(doc["checks"])
    passed = sum(c["result"] == "pass" for c in doc["checks"])
    failed = [c["key"] for c in doc["checks"] if c["result"] == "fail"]
    out = [
        "% Generated by hxfuse.paper.sections (rule `paper_sections`); do not edit.",
        r"\begin{table}[tbp]",
        r"\centering\footnotesize",
        rf"\caption{{Mechanism validation on target \texttt{{{tex_escape(target)}}}: each claim about the "
        rf"fused executor, the run that shows it and what the run gave ({passed} of {n} passed"
        + (rf"; failed: {tex_escape(', '.join(failed))}" if failed else "")
        + r"). Calibration tasks busy-wait on thread CPU time, so the timestamps hold on a loaded machine.}",
        r"\label{tab:mechanism}",
        r"\begin{tabular}{@{}>{\raggedright\arraybackslash}p{0.22\linewidth}"
        r">{\raggedright\arraybackslash}p{0.33\linewidth}>{\raggedright\arraybackslash}p{0.39\linewidth}@{}}",
        r"\toprule",
        r"claim & how it was shown & result \\",
        r"\midrule",
    ]
    for c in doc["checks"]:
        res = {"pass": r"\textbf{pass}", "fail": r"\textbf{FAIL}", "skipped": r"\emph{skipped}"}[c["result"]]
        why = f" ({c['reason']})" if c["result"] == "skipped" and c.get("reason") else ""
        out.append(
            rf"{tex_escape(c['claim'])} & {tex_escape(c['how'])} & {res}: {tex_escape(c['shown'])}"
            rf"{tex_escape(why)} \\"
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


def evidence_figure(s: pd.DataFrame, out: Sequence[str | Path], target: str) -> None:
    """Six panels: early-completion latency (D), preparation share of end to
    end, scratch peak against speedup over A; then D's progress parallelism
    against its wall-clock overlap, D's host/device time split, and each
    task's running share in D."""
    # the figure modules import matplotlib; the rest of this module does not
    from hxfuse.render import style
    from hxfuse.render.style import plt, save

    style.apply()
    fig, axes = plt.subplots(2, 3, figsize=(12, 7.4))
    ax = axes[0]
    lp = latency_pairs(s)
    colors = {"M": "#4C72B0", "V": "#55A868", "D": "#C44E52"}
    for t, g in lp.groupby("task"):
        ax[0].scatter(g["no_early_ns"] / 1e3, g["early_ns"] / 1e3, s=18, label=f"task {t}", color=colors.get(t))
    if len(lp):
        lo = min(lp["early_ns"].min(), lp["no_early_ns"].min()) / 1e3 / 2
        hi = max(lp["early_ns"].max(), lp["no_early_ns"].max()) / 1e3 * 2
        ax[0].plot([lo, hi], [lo, hi], "k--", lw=0.8, label="no gain")
        ax[0].set_xscale("log")
        ax[0].set_yscale("log")
        ax[0].legend(fontsize=7)
    ax[0].set_xlabel("without early completion [us]")
    ax[0].set_ylabel("with early completion [us]")
    ax[0].set_title("(a) end to host seen, group D", fontsize=9)
    ev = evidence_frame(s)
    if len(ev):
        piv = ev.pivot_table(index="point_id", columns="group", values="prep_share", aggfunc="first")
        piv = piv.reindex(columns=[g for g in "ACD" if g in piv.columns])
        y = np.arange(len(piv))
        for i, g in enumerate(piv.columns):
            ax[1].barh(y + (i - 1) * 0.27, 100 * piv[g], height=0.27, label=g)
        ax[1].set_yticks(y, piv.index, fontsize=6)
        ax[1].invert_yaxis()
        ax[1].legend(fontsize=7, title="group", title_fontsize=7)
        for _, g in ev.groupby("point_id"):
            g = g.set_index("group").reindex([x for x in "ACD" if x in set(g["group"])])
            ax[2].plot(g["scratch_mib"], g["speedup_A"], "-", color="0.8", lw=0.7, zorder=1)
        for grp, mk in (("A", "o"), ("C", "s"), ("D", "^")):
            gg = ev[ev["group"] == grp]
            ax[2].scatter(gg["scratch_mib"], gg["speedup_A"], marker=mk, s=22, label=grp, zorder=2)
        ax[2].axhline(1.0, color="k", ls="--", lw=0.8)
        ax[2].legend(fontsize=7, title="group", title_fontsize=7)
    ax[1].set_xlabel("preparation / end to end [%]")
    ax[1].set_title("(b) preparation share", fontsize=9)
    ax[2].set_xlabel("scratch peak [MiB]")
    ax[2].set_ylabel("speedup over A (median)")
    ax[2].set_title("(c) scratch peak vs speedup", fontsize=9)
    _progress_panels(s, axes[1])
    fig.suptitle(f"target {target}", fontsize=9)
    fig.tight_layout()
    save(fig, out)


def _progress_panels(s: pd.DataFrame, ax) -> None:
    """(d) D's parallelism (interval) against its wall-clock overlap: spans
    that overlap without progress sit at the right, near 1; (e) D's makespan
    split into device time and host time outside it; (f) each task's share of
    its span it was running in D."""
    d = s[s["group"] == "D"] if len(s) else s
    num = lambda c: pd.to_numeric(d[c], errors="coerce") if c in d else pd.Series(math.nan, index=d.index)
    if len(d):
        par, lo, hi, wall = num("parallelism"), num("parallelism_lo"), num("parallelism_hi"), num("overlap_max")
        ok = par.notna() & wall.notna()
        ax[0].errorbar(
            wall[ok],
            par[ok],
            yerr=[(par - lo)[ok], (hi - par)[ok]],
            fmt="o",
            ms=3,
            lw=0.8,
            color="#4C72B0",
            ecolor="0.6",
        )
        ax[0].axhline(1.0, color="k", ls="--", lw=0.8)
        order = d.assign(_m=num("makespan_ns")).sort_values("point_id")
        y = np.arange(len(order))
        mk = pd.to_numeric(order["makespan_ns"], errors="coerce")
        dev = pd.to_numeric(order["device_ns"], errors="coerce") if "device_ns" in order else mk * math.nan
        ax[1].barh(y, 100 * dev / mk, color="#55A868", label="device (fused entry)")
        ax[1].barh(y, 100 * (mk - dev) / mk, left=100 * dev / mk, color="#999999", label="host outside it")
        ax[1].set_yticks(y, order["point_id"], fontsize=6)
        ax[1].invert_yaxis()
        ax[1].legend(fontsize=7, loc="lower left")
        for i, (t, c) in enumerate((("M", "#4C72B0"), ("V", "#55A868"), ("D", "#C44E52"))):
            col = f"{t}_run_share"
            if col in order:
                ax[2].barh(
                    y + (i - 1) * 0.27,
                    pd.to_numeric(order[col], errors="coerce"),
                    height=0.27,
                    color=c,
                    label=f"task {t}",
                )
        ax[2].set_yticks(y, order["point_id"], fontsize=6)
        ax[2].invert_yaxis()
        ax[2].axvline(1.0, color="k", ls="--", lw=0.8)
        ax[2].legend(fontsize=7, loc="lower left")
    ax[0].set_xlabel("wall-clock overlap (largest engine pair)")
    ax[0].set_ylabel("parallelism (task CPU time / makespan)")
    ax[0].set_title("(d) progress vs wall overlap, group D", fontsize=9)
    ax[1].set_xlabel("share of D's makespan [%]")
    ax[1].set_title("(e) host / device split, group D", fontsize=9)
    ax[2].set_xlabel("running share of the task's span")
    ax[2].set_title("(f) run share per task, group D", fontsize=9)


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
                r"(D/A\textsubscript{e2e} in Table~\ref{tab:results} and in the answers) include it, "
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
                + f"; the scratch peak ranges over {pk.min().min():.0f}--{pk.max().max():.0f}\\,MiB."
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


def _subfig(path: str, caption: str, width: str = r"\linewidth", height: str = r"0.40\textheight") -> list[str]:
    return [
        r"\begin{subfigure}{\linewidth}\centering",
        rf"\includegraphics[width={width},height={height},keepaspectratio]{{../{path}}}",
        rf"\caption{{{caption}}}",
        r"\end{subfigure}",
    ]


def figures_tex(
    targets: Sequence[str],
    sweeps: Mapping[str, dict],
    timelines: Sequence[str],
    evidence: Mapping[str, str],
    min_effect: float,
    emulated: Sequence[str] = (),
) -> str:
    """The paper's figures: per sweep its speedups and per-task slowdowns as
    two subfigures of one figure; timelines two per figure; the evidence
    figure per timed target.  Emulated targets get timelines only, marked."""
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
                rf"Paired speedups $T_Y/T_X$ of the groups against each other, per workload, along "
                rf"the swept variable{(' (' + xl + ')') if xl else ''}: median over all rounds of all "
                rf"replicates with a two-level bootstrap 95\% interval. Above 1 + {band}: X faster; "
                rf"inside 1 $\pm$ {band}: no difference.",
            )
            out.append(r"\vspace{1ex}")
            out += _subfig(
                f"results/{t}/figures/slowdown_{s}.pdf",
                r"Per-task slowdown $T_i^X/T_i$ in each group against the task alone (median and "
                r"interval): above 1, the task ran slower because it shared cores, memory or the "
                r"entry with the others.",
            )
            out += [
                rf"\caption{{Sweep ``{title}'' on target \texttt{{{tex_escape(t)}}}: (a) what each group "
                rf"gains, (b) what it costs each task.}}",
                rf"\label{{fig:sweep-{tex_escape(t)}-{s}}}",
                r"\end{figure}",
                "",
            ]
        if t in evidence:
            out += [
                r"\begin{figure}[tbp]",
                r"\centering",
                rf"\includegraphics[width=\linewidth]{{../{evidence[t]}}}",
                rf"\caption{{Evidence already measured, target \texttt{{{tex_escape(t)}}}, one marker per "
                r"point. (a) Group D: time from a task's end to the host seeing it, with the early-completion "
                r"interface against the entry's single return (below the dashed line: the host saw the "
                r"result earlier). (b) Preparation done before timing (M's packing) as a share of end-to-end "
                r"time. (c) Scratch peak of A, C and D against their speedup over A (grey lines join the "
                r"groups of one point): the scratch fusion costs for its gain. (d) Group D's parallelism "
                r"(task CPU time over makespan, 95\% interval) against the largest wall-clock overlap of two "
                r"engines: points at the right near 1 overlapped in time without running at once. (e) D's "
                r"makespan split into the fused entry's span and host time outside it (submit, wake-up, "
                r"return). (f) The share of its own span each task of D was running (1: it never waited "
                r"for a core).}",
                rf"\label{{fig:evidence-{tex_escape(t)}}}",
                r"\end{figure}",
                "",
            ]
    tls = list(timelines)
    for i in range(0, len(tls), 2):
        out += [r"\begin{figure}[p]", r"\centering"]
        for tl in tls[i : i + 2]:
            parts = Path(tl).with_suffix("").parts
            t, s, w, p = parts[1], parts[-3], parts[-2], parts[-1]
            emu = (
                r" \textbf{EMULATED} (QEMU): functional only, not performance."
                if (t in emulated or is_emulated(t))
                else ""
            )
            out += _subfig(
                tl,
                rf"Target \texttt{{{tex_escape(t)}}}, sweep {tex_escape(s)}, workload "
                rf"\texttt{{{tex_escape(w)}}}, point {tex_escape(p)}.{emu}",
                height=r"0.42\textheight",
            )
        out += [
            r"\caption{Timelines of the median round of each group: one lane per engine and one for the host; "
            r"a bar's solid part is the share of its span the task was running and its label the core; a "
            r"dotted segment is time a launched task waited for a core.}",
            rf"\label{{fig:timelines-{i // 2}}}",
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
