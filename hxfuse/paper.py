"""Generated sections of the paper: platform and scope, limitations.

Every number and every platform fact here is read from the pipeline's
outputs (``summary.json``: provenance, group mapping, target status;
``summary.csv``: the environment columns each runner recorded), never typed
in: the paper must describe the machine the data came from, whichever it was.
Targets that have no summary in this build are listed from
:data:`hxfuse.config.TARGETS` as *not run*, with what running them would give.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .config import EMULATED_TARGETS, TARGETS
from . import answers as ans
from . import mechanism as mech
from .latex import tex_escape


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


def _emulated(target: str, s: pd.DataFrame, doc: dict) -> bool:
    if target in EMULATED_TARGETS or doc.get("emulated"):
        return True
    return bool(_distinct(s, "emulated")) and any(v.lower() in ("true", "1") for v in _distinct(s, "emulated"))


def platform(target: str, s: pd.DataFrame, doc: dict) -> dict:
    """The recorded platform of one target that ran, as plain values."""
    prov = doc.get("provenance", {}) or {}
    rounds = pd.to_numeric(s["n"], errors="coerce") if "n" in s else pd.Series(dtype=float)
    reps = sorted({int(v) for v in (doc.get("replicates") or {}).values()})
    cores = _distinct(s, "online_cores")
    return {
        "target": target,
        "status": doc.get("target_status") or TARGETS.get(target, {}).get("status", "unknown"),
        "emulated": _emulated(target, s, doc),
        "cpu": _joined(s, "cpu_model"),
        "cores": "; ".join(cores) if cores else "not recorded",
        "cores_n": int(cores[0]) if len(cores) == 1 else None,
        "governor": _joined(s, "cpu_governor"),
        "platform": prov.get("platform") or "not recorded",
        "compiler": "; ".join(prov.get("compilers") or []) or _joined(s, "compiler"),
        "python": prov.get("python") or "not recorded",
        "sdk": _joined(s, "sdk_version", "none"),
        "clock": (f"{_span(s, 'clock_resolution_ns', ' ns')} resolution, "
                  f"{_span(s, 'clock_read_overhead_ns', ' ns')} per read"),
        "engines": _span(s, "device_engines_used"),
        "n_points": int(doc.get("n_points", 0)),
        "n_failed": len(doc.get("failed_points", []) or []),
        "replicates": ", ".join(str(r) for r in reps) or "not recorded",
        "rounds": int(rounds.max()) if len(rounds.dropna()) else None,
        "group_mapping": dict(doc.get("group_mapping") or {}),
        "group_b": B_LIMITATION.get(target) or doc.get("group_b_backend")
        or TARGETS.get(target, {}).get("group_b", ""),
        "commit": (prov.get("git_commit") or "unknown")[:10],
    }


def _row(key: str, value: str) -> str:
    return rf"{key} & {value} \\"


def setup_tex(tabs: Mapping[str, pd.DataFrame], docs: Mapping[str, dict]) -> str:
    """Table ``tab:setup``: one block per target that ran."""
    out = ["% Generated by hxfuse.paper (rule `paper_sections`); do not edit.",
           r"\begin{table}[tbp]", r"\centering\small",
           r"\caption{Platform of every target that ran in this build, as the runner and the "
           r"pipeline recorded it (summary provenance and environment columns), and what each "
           r"group is on that target.}",
           r"\label{tab:setup}",
           r"\begin{tabular}{@{}p{0.2\linewidth}p{0.76\linewidth}@{}}", r"\toprule"]
    first = True
    for target, doc in docs.items():
        p = platform(target, tabs.get(target, pd.DataFrame()), doc)
        if not first:
            out.append(r"\midrule")
        first = False
        out.append(rf"\multicolumn{{2}}{{@{{}}l}}{{\textbf{{target \texttt{{{tex_escape(target)}}}}}: "
                   rf"{tex_escape(p['status'])}}} \\")
        out.append(r"\midrule")
        out += [_row("CPU", tex_escape(p["cpu"])),
                _row("online cores", tex_escape(p["cores"])),
                _row("frequency governor", tex_escape(p["governor"])),
                _row("operating system", tex_escape(p["platform"])),
                _row("compiler", tex_escape(p["compiler"])),
                _row("Python (analysis)", tex_escape(p["python"])),
                _row("SDK", tex_escape(p["sdk"])),
                _row("clock", tex_escape(p["clock"])),
                _row("emulated", "yes: timings are not performance" if p["emulated"] else "no"),
                _row("engines busy at once", tex_escape(p["engines"]) + " (by workload)"),
                _row("points", f"{p['n_points']} ({p['n_failed']} failed), "
                               f"{tex_escape(p['replicates'])} replicate(s) of "
                               f"{p['rounds'] if p['rounds'] is not None else '--'} measured rounds in all")]
        for g in "ABCD":
            if g in p["group_mapping"]:
                out.append(_row(f"group {g}", tex_escape(p["group_mapping"][g])))
        if p["group_b"]:
            out.append(_row("B's limitation", tex_escape(p["group_b"])))
    out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(out) + "\n"


def scope_tex(tabs: Mapping[str, pd.DataFrame], docs: Mapping[str, dict],
              external: Mapping | None = None) -> str:
    """A plain statement of what was and was not measured, on which target."""
    items = []
    for target in TARGETS:
        if target in docs:
            p = platform(target, tabs.get(target, pd.DataFrame()), docs[target])
            cpu = f"{p['cores']} online core(s) of {p['cpu']}, {p['platform']}"
            if p["emulated"]:
                what = (rf"ran under emulation ({tex_escape(cpu)}): {p['n_points']} points were checked "
                        r"for correctness only; no timing from it is reported as performance.")
            else:
                what = (rf"ran ({tex_escape(p['status'])}) on {tex_escape(cpu)}: {p['n_points']} points, "
                        rf"{p['n_failed']} failed the correctness check. Every timing in this paper comes "
                        r"from this target.")
        else:
            what = (rf"not run in this build. {tex_escape(TARGETS[target]['status'])}." if not
                    TARGETS[target].get("emulated") else
                    rf"not run in this build ({tex_escape(TARGETS[target]['status'])}).")
        items.append(rf"\item \texttt{{{tex_escape(target)}}}: {what}")
    if external:
        items.append(rf"\item External B (ONNX Runtime): {tex_escape(external['text'])}")
    else:
        items.append(r"\item External B (ONNX Runtime on the host, \texttt{snakemake external}): "
                     r"not run in this build, so group B below is the project's own executor only.")
    return ("% Generated by hxfuse.paper (rule `paper_sections`); do not edit.\n"
            r"\begin{itemize}" + "\n" + "\n".join(items) + "\n" + r"\end{itemize}" + "\n")


def platform_macros(tabs: Mapping[str, pd.DataFrame], docs: Mapping[str, dict]) -> str:
    """``\\hxCores`` and friends for the text: the first timed target's values."""
    lines = ["% Generated by hxfuse.paper (rule `paper_sections`); do not edit."]
    timed = [t for t in docs if not platform(t, tabs.get(t, pd.DataFrame()), docs[t])["emulated"]]
    p = platform(timed[0], tabs.get(timed[0], pd.DataFrame()), docs[timed[0]]) if timed else None
    vals = {"hxTimedTarget": timed[0] if timed else "none",
            "hxCores": p["cores"] if p else "--",
            "hxCpu": p["cpu"] if p else "--",
            "hxPlatform": p["platform"] if p else "--",
            "hxRounds": str(p["rounds"]) if p and p["rounds"] is not None else "--",
            "hxReplicates": p["replicates"] if p else "--"}
    for k, v in vals.items():
        lines.append(rf"\newcommand{{\{k}}}{{{tex_escape(v)}}}")
    return "\n".join(lines) + "\n"




def _mechanism_tex(path: str | Path | None) -> str:
    if path is None:
        raise ValueError("the mechanism section needs mechanism.json (rule mechanism)")
    return mech.table_tex(mech.load(path))


def _answers_tex(docs: Mapping[str, dict]) -> str:
    """The answers of the first timed target (emulated ones answer nothing)."""
    timed = [t for t in docs if not (t in EMULATED_TARGETS or docs[t].get("emulated"))]
    doc = docs[timed[0]] if timed else next(iter(docs.values()))
    target = doc.get("target", "")
    note = ("B's limitation: " + B_LIMITATION[target]) if target in B_LIMITATION else ""
    return ans.answers_tex(doc, b_note=note)


def write_sections(summaries: Sequence[str | Path], summaries_json: Sequence[str | Path],
                   out: Mapping[str, str | Path], mechanism: str | Path | None = None) -> None:
    """Write every generated section named in ``out`` (keys: setup, scope,
    platform_macros, mechanism: the latter needs ``mechanism``, the path of
    mechanism.json)."""
    tabs, docs = load(summaries, summaries_json)
    if not docs:
        raise ValueError("no summary.json given: the paper needs at least one target's results")
    text = {"setup": lambda: setup_tex(tabs, docs),
            "scope": lambda: scope_tex(tabs, docs),
            "platform_macros": lambda: platform_macros(tabs, docs),
            "mechanism": lambda: _mechanism_tex(mechanism),
            "answers": lambda: _answers_tex(docs)}
    unknown = set(out) - set(text)
    if unknown:
        raise ValueError(f"unknown generated section(s): {sorted(unknown)}")
    for key, path in out.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text[key]())
