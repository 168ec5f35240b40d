"""LaTeX output of the pipeline (rule ``table``).

- ``results_table.tex``: a booktabs table rendered with Jinja2 from
  ``workflow/templates/results_table.tex.j2`` (LaTeX-safe delimiters:
  ``<< var >>``, ``<% block %>``, ``<# comment #>``).  One row per point x
  workload: median makespans of A and D, the paired speedups D/A, D/B, D/C,
  C/A with their bootstrap intervals, D/A end to end (preparation included),
  D's parallelism (progress evidence),
  the overlap efficiencies against T_ideal and against the resource-aware
  bound, and the verdict of the reading table.  Failed points
  show "failed" and no numbers.  Emulated targets (``hexagon-qemu``: the
  runner's meta says ``emulated``) show correctness only, "correct (emulated,
  timings not performance)": no timing, speedup, efficiency or verdict, no
  macro and no speedup/slowdown figure.
- ``results_macros.tex``: headline numbers for the text.  Letters-only macros
  (``\\hxNpoints``, ``\\hxNfailed``, ``\\hxConfigHash``, ``\\hxCommit``,
  ``\\hxMedianDAmv`` ...) plus ``\\hxval{target/sweep/workload/point/KEY}`` for
  any point (KEY: DA, DB, DC, CA, BA, DAe2e, TA, TD, eta).

The paper's figure environments are hxfuse.paper.sections's (rule
``paper_sections``).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from hxfuse.analysis import verdicts as vd
from hxfuse.config.targets import emulated_results  # whose timings are not performance
from hxfuse.render.tex import tex_escape  # the one escaper (re-exported: answers, paper, tables import it from here)

SPEEDUPS = [
    ("DA", "D", "speedup_over_A"),
    ("DB", "D", "speedup_over_B"),
    ("DC", "D", "speedup_over_C"),
    ("CA", "C", "speedup_over_A"),
    ("BA", "B", "speedup_over_A"),
    # end to end (preparation + makespan on both sides); the table shows D/A only
    ("DAe2e", "D", "speedup_e2e_over_A"),
]


def _finite(v) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def fmt(v, digits: int = 2) -> str:
    return f"{float(v):.{digits}f}" if _finite(v) else "--"


def fmt_ms(ns) -> str:
    if not _finite(ns):
        return "--"
    ms = float(ns) / 1e6
    return f"{ms:#.3g}" if ms < 100 else f"{ms:.0f}"


def spd_cell(v, lo, hi) -> str:
    r"""``\hxspd{value}{lo}{hi}`` (defined in the macros file), or -- ."""
    if not _finite(v):
        return "--"
    return rf"\hxspd{{{fmt(v)}}}{{{fmt(lo)}}}{{{fmt(hi)}}}"


def verdict_tex(key) -> str:
    """Short verdict for the table: 'D<C+overlap' -> 'D$<$C + overlap'."""
    if not isinstance(key, str) or not key:
        return "--"
    s = tex_escape(key).replace(r"\textless{}", "$<$").replace(r"\textgreater{}", "$>$")
    s = s.replace(r"\textasciitilde{}", r"$\sim$").replace("+", " + ").replace(",", ", ")
    return s


# How D stood against B, beside a row that does not read D/B (the verdict
# text says the same in words: hxfuse.analysis.verdicts.D_VS_B_TEXT).
_D_VS_B_TEX = {"<": r", D$<$B", "~": r", D$\sim$B", ">": r", D$>$B", "?": r", D vs B open"}


def d_vs_b_tex(key, r) -> str:
    r"""', D$\sim$B' etc. for a row that does not read D/B; '' otherwise
    (older summaries without ``d_vs_b``: from ``d_equiv_b``)."""
    # the rows that read D/B say it themselves (hxfuse.analysis.verdicts.READS)
    if not isinstance(key, str) or "D/B" in vd.READS.get(key, ()):
        return ""
    rel = r.get("d_vs_b")
    if not isinstance(rel, str) or rel not in _D_VS_B_TEX:
        rel = "~" if _truthy(r.get("d_equiv_b")) else None
    return _D_VS_B_TEX.get(rel, "")


# the longest first reason the results table prints whole
REASON_CHARS = 240


def verdict_words(r: Mapping) -> str:
    """The verdict of a summary row in words, once, for the line under its
    row in the results table: the verdict's own text (the reading-table row
    and how D stood against B), and for a point without a verdict its first
    reason, shortened to what a reader needs (the full list is in
    verdicts.csv).  LaTeX-escaped."""
    text = str(r.get("verdict") or "").strip()
    if not text or text == "nan":
        return "--"
    if str(r.get("verdict_key", "")) in ("inconclusive", "undetermined", "no-match"):
        reason = str(r.get("inconclusive_reason") or "").strip()
        if reason and reason != "nan":
            first = re.sub(r"\s*\([^)]*\)", "", reason.split(";")[0]).strip()
            # the line is a wrapping paragraph: a reason as the analysis
            # words it (up to ~150 characters) is kept whole; only a
            # runaway one is cut, at a word
            if len(first) > REASON_CHARS:
                first = first[: REASON_CHARS - 3].rsplit(" ", 1)[0].rstrip(" ,;:") + "..."
            more = reason.count(";")
            text += f": {first}" + (f" (and {more} more reason{'s' if more > 1 else ''})" if more else "")
    if _finite(r.get("device_fallbacks")) and float(r["device_fallbacks"]) > 0:
        text += f"; {int(r['device_fallbacks'])} device fallbacks"
    return tex_escape(text)


def _truthy(v) -> bool:
    """A boolean read back from CSV ('True', True, 1) or missing (NaN, None)."""
    return str(v).strip().lower() in ("true", "1", "1.0")


def _us(ns):
    return ns / 1e3 if _finite(ns) else math.nan


def _rows_of(summary: pd.DataFrame) -> dict:
    return {g: summary[summary["group"] == g] for g in ("A", "B", "C", "D")}


def table_rows(summary: pd.DataFrame, sweeps: dict, target: str) -> list[dict]:
    """One dict per point x workload, in config order, ready for the template."""
    rows = []
    if summary.empty:
        return rows
    emulated = emulated_results(target, table=summary)
    by = _rows_of(summary)
    order = {(s, p["name"]): (i, j) for i, (s, sw) in enumerate(sweeps.items()) for j, p in enumerate(sw["points"])}
    d = by["D"].copy()
    d["_o"] = [order.get((s, p), (99, 99)) for s, p in zip(d["sweep"], d["point"])]
    wl_order = {"mv": 0, "md": 1, "mvd": 2}
    d["_w"] = d["workload"].map(wl_order).fillna(9)
    d = d.sort_values(["_w", "_o"], kind="stable")
    for r in d.to_dict(orient="records"):
        key = (r["point_id"], r["workload"])

        def grp(g, col):
            s = by[g]
            s = s[(s["point_id"] == key[0]) & (s["workload"] == key[1])]
            return s[col].iloc[0] if len(s) and col in s else math.nan

        ok = bool(r.get("point_ok", True))
        row = {
            "target": tex_escape(target),
            "sweep": tex_escape(r["sweep"]),
            "workload": tex_escape(r["workload"]),
            "point": tex_escape(r.get("label", r["point"])),
            "x": f"{float(r['x']):g}",
            "ok": ok,
            "emulated": emulated,
            "reason": tex_escape(str(r.get("excluded_reason", "") or "")[:60]),
        }
        row["status"] = (
            "correct (emulated, timings not performance)" if emulated and ok else "correct" if ok else "failed"
        )
        if ok and not emulated:
            row["TA"] = fmt_ms(grp("A", "makespan_ns"))
            row["TD"] = fmt_ms(r["makespan_ns"])
            for k, g, col in SPEEDUPS:
                # the relation's one interval, the one its verdict reads
                # (docs/columns.md: _lo/_hi), so a bracket never contradicts
                # its relation
                lo, hi = grp(g, f"{col}_lo"), grp(g, f"{col}_hi")
                row[k] = spd_cell(grp(g, col), lo, hi)
            row["eta"] = fmt(r.get("eta_vs_alone"))
            row["eta_bound"] = fmt(r.get("eta_vs_bound"))
            row["par"] = spd_cell(r.get("parallelism"), r.get("parallelism_lo"), r.get("parallelism_hi"))
            key = r.get("verdict_key", "")
            row["verdict"] = verdict_tex(key)
            if key in ("undetermined", "machine-busy") and isinstance(r.get("verdict"), str):
                # the cause is the answer: "undetermined (too few replicates)",
                # "machine too busy: 3 of 3 replicates disturbed"
                row["verdict"] = tex_escape(r["verdict"])
            # D ~ B leads the cell, as it leads the verdict's text
            dvb = d_vs_b_tex(key, r)
            row["verdict"] = (r"D$\sim$B; " + row["verdict"]) if dvb == _D_VS_B_TEX["~"] else row["verdict"] + dvb
            if _finite(r.get("device_fallbacks")) and float(r["device_fallbacks"]) > 0:
                # a fallback replaced an engine or memory: said in the table
                row["verdict"] += rf" ({int(r['device_fallbacks'])} device fallbacks)"
            # evidence behind the verdict (group D): per-task slowdown, host
            # versus device time, engine overlap, control cost, scratch peak
            row["slowdown"] = " ".join(
                rf"{t}\,{fmt(r.get(f'{t}_slowdown'))}" for t in "MVD" if _finite(r.get(f"{t}_slowdown"))
            )
            row["submit_us"] = fmt(_us(r.get("host_submit_ns")), 1)
            row["wait_ms"] = fmt_ms(r.get("host_wait_ns"))
            row["device_ms"] = fmt_ms(r.get("device_ns"))
            row["overlap"] = fmt(r.get("overlap_max"))
            row["run_share"] = " ".join(
                rf"{t}\,{fmt(r.get(f'{t}_run_share'))}" for t in "MVD" if _finite(r.get(f"{t}_run_share"))
            )
            queue = [r.get(f"{t}_queue_ns") for t in "MVD" if _finite(r.get(f"{t}_queue_ns"))]
            row["queue_ms"] = fmt_ms(max(queue)) if queue else "--"
            row["ctrl_us"] = fmt(_us(r.get("control_overhead_ns")), 1)
            # a point that does not use the arena shows "--", not a 0 MiB peak
            sp = r.get("scratch_peak_bytes")
            row["scratch_mib"] = fmt(sp / 2**20, 1) if _finite(sp) and float(sp) > 0 else "--"
            # one cell per task (the tables print them as columns, not a run of text)
            for t in "MVD":
                row[f"sd_{t}"] = fmt(r.get(f"{t}_slowdown"))
                row[f"rs_{t}"] = fmt(r.get(f"{t}_run_share"))
            row["verdict_words"] = verdict_words(r)
        else:
            mark = r"\emph{correct (emulated)}" if emulated and ok else r"\emph{failed}"
            row.update(
                {
                    "TA": mark,
                    "TD": "",
                    "eta": "",
                    "eta_bound": "",
                    "par": "",
                    "verdict": "excluded" if not ok else "--",
                    "verdict_words": "",
                    **{k: "" for k, _, _ in SPEEDUPS},
                }
            )
        rows.append(row)
    return rows


def emulated_caption(targets: Sequence[str]) -> str:
    if not targets:
        return ""
    names = ", ".join(rf"\texttt{{{tex_escape(t)}}}" for t in targets)
    return (
        rf"  Target{'s' if len(targets) > 1 else ''} {names} "
        r"\textbf{EMULATED} (QEMU, a functional model): every point was checked correct "
        r"(outputs equal to numpy exactly); its timings are not Hexagon performance, so no "
        r"timing, speedup, efficiency or verdict is shown."
    )


def _template(template: str | Path):
    """A Jinja2 template with LaTeX-safe delimiters (<< var >>, <% block %>, <# comment #>)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(template).parent)),
        block_start_string="<%",
        block_end_string="%>",
        variable_start_string="<<",
        variable_end_string=">>",
        comment_start_string="<#",
        comment_end_string="#>",
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    return env.get_template(Path(template).name)


def render_table(
    rows: list[dict],
    template: str | Path,
    caption_extra: str = "",
    failed: Sequence[dict] = (),
    min_effect: float = 0.03,
) -> str:
    tpl = _template(template)
    targets = list(dict.fromkeys(r["target"] for r in rows))
    return tpl.render(
        rows=rows,
        caption_extra=caption_extra,
        targets=targets,
        min_effect_pct=f"{100 * float(min_effect):g}",
        failed=[{k: tex_escape(v) for k, v in f.items()} for f in failed],
    )


def _csname(key: str) -> str:
    return key.replace("\\", "/")


def macros(summaries: dict[str, pd.DataFrame], docs: dict[str, dict], sweeps: dict) -> str:
    lines = [
        "% Generated by hxfuse.render.latex (rule `table`); do not edit.",
        r"\providecommand{\hxspd}[3]{#1\,[#2,\,#3]}",
        r"\makeatletter",
        r"\newcommand{\hxval}[1]{\@ifundefined{hx@v@#1}{\textbf{??}}{\@nameuse{hx@v@#1}}}",
        r"\makeatother",
    ]

    def define(name: str, value: str) -> None:
        lines.append(rf"\newcommand{{\{name}}}{{{value}}}")

    def val(key: str, value: str) -> None:
        lines.append(rf"\expandafter\def\csname hx@v@{_csname(key)}\endcsname{{{value}}}")

    n_points = sum(int(d.get("n_points", 0)) for d in docs.values())
    n_failed = sum(len(d.get("failed_points", [])) for d in docs.values())
    prov = next(iter(docs.values()), {}).get("provenance", {}) if docs else {}
    commit = (prov.get("git_commit") or "unknown")[:10]
    dirty = any(g.get("git_dirty") for d in docs.values() for g in d.get("provenance", {}).get("points_git", []))
    define("hxNpoints", str(n_points))
    define("hxNfailed", str(n_failed))
    define("hxConfigHash", tex_escape(prov.get("config_hash", "unknown")))
    define("hxCommit", tex_escape(commit + ("-dirty" if dirty else "")))
    define("hxTargets", tex_escape(", ".join(docs)))
    compilers = sorted({c for d in docs.values() for c in d.get("provenance", {}).get("compilers", [])})
    define("hxCompiler", tex_escape("; ".join(compilers) or "unknown"))
    for target, s in summaries.items():
        if s.empty:
            continue
        letters = re.sub(r"[^A-Za-z]", "", target.title())
        emulated = emulated_results(target, table=s)
        for g, col, key in (
            ("D", "speedup_over_A", "DA"),
            ("D", "speedup_over_C", "DC"),
            ("D", "speedup_over_B", "DB"),
            ("C", "speedup_over_A", "CA"),
        ):
            sub = s[(s["group"] == g) & s["point_ok"].astype(bool)]
            for w, ws in sub.groupby("workload"):
                vals = pd.to_numeric(ws[col], errors="coerce").dropna()
                if len(vals) and not emulated:
                    # target-qualified always; the first target also unqualified
                    define(f"hx{letters}Median{key}{w}", fmt(vals.median()))
                    define(f"hx{letters}Max{key}{w}", fmt(vals.max()))
                    if target == next(iter(summaries)):
                        define(f"hxMedian{key}{w}", fmt(vals.median()))
                        define(f"hxMax{key}{w}", fmt(vals.max()))
        for r in s.to_dict(orient="records"):
            base = f"{target}/{r['point_id']}"
            if r["group"] == "D":
                for key, g, col in SPEEDUPS:
                    gs = s[(s["group"] == g) & (s["point_id"] == r["point_id"]) & (s["workload"] == r["workload"])]
                    if len(gs) and _finite(gs[col].iloc[0]) and not emulated:
                        val(f"{base}/{key}", fmt(gs[col].iloc[0]))
                        val(f"{base}/{key}lo", fmt(gs[f"{col}_lo"].iloc[0]))
                        val(f"{base}/{key}hi", fmt(gs[f"{col}_hi"].iloc[0]))
                if _finite(r.get("eta_vs_alone")) and not emulated:
                    val(f"{base}/eta", fmt(r["eta_vs_alone"]))
            if r["group"] in ("A", "D") and _finite(r.get("makespan_ns")) and not emulated:
                val(f"{base}/T{r['group']}", fmt_ms(r["makespan_ns"]))
    return "\n".join(lines) + "\n"


def write_all(
    summaries: Sequence[str],
    summaries_json: Sequence[str],
    template: str,
    sweeps: dict,
    out_table: str,
    out_macros: str,
    evidence_template: str | None = None,
    out_evidence: str | None = None,
) -> None:
    tabs, docs = {}, {}
    for csv, js in zip(summaries, summaries_json):
        doc = json.loads(Path(js).read_text())
        target = doc["target"]
        try:
            tabs[target] = pd.read_csv(csv)
        except pd.errors.EmptyDataError:
            tabs[target] = pd.DataFrame()
        docs[target] = doc
    rows = [r for t, s in tabs.items() for r in table_rows(s, sweeps, t)]
    failed = [
        {"target": f["target"], "point": f["point_id"], "reason": f["reason"][:90]}
        for d in docs.values()
        for f in d.get("failed_points", [])
    ]
    Path(out_table).parent.mkdir(parents=True, exist_ok=True)
    emulated = [t for t, s in tabs.items() if emulated_results(t, table=s, doc=docs[t])]
    effects = {float((d.get("analysis") or {}).get("min_effect", 0.03)) for d in docs.values()} or {0.03}
    if len(effects) > 1:
        raise ValueError(f"targets were summarised with different analysis.min_effect values: {sorted(effects)}")
    min_effect = effects.pop()
    Path(out_table).write_text(
        render_table(rows, template, caption_extra=emulated_caption(emulated), failed=failed, min_effect=min_effect)
    )
    if evidence_template and out_evidence:
        Path(out_evidence).write_text(
            render_table(
                rows, evidence_template, caption_extra=emulated_caption(emulated), failed=failed, min_effect=min_effect
            )
        )
    Path(out_macros).write_text(macros(tabs, docs, sweeps))


def _rel_mark(rel) -> str:
    """The relation as a LaTeX mark after an interval: <, >, ~ or ?."""
    return {"<": r"\,$<$", ">": r"\,$>$", "~": r"\,$\sim$", "?": r"\,?"}.get(rel if isinstance(rel, str) else "", "")


def external_rows(df: pd.DataFrame) -> list[dict]:
    """Rows of the external-B table (one per point x workload of external.csv)."""
    rows = []
    for r in df.to_dict(orient="records"):

        def cell(name):
            return spd_cell(r.get(name), r.get(f"{name}_lo"), r.get(f"{name}_hi")) + _rel_mark(r.get(f"{name}_rel"))

        alone = " ".join(
            rf"{t}\,{fmt(r.get(f'{t}_alone_ort_ms'), 1)}/{fmt(r.get(f'{t}_alone_runner_ms'), 1)}"
            rf"\,({100 * float(r.get(f'{t}_alone_error')):+.0f}\%)"
            for t in "MVD"
            if _finite(r.get(f"{t}_alone_error"))
        )
        gaps = f"{fmt(r.get('gap_B_ort_ms'))}/{fmt(r.get('gap_D_ms'))}"
        withheld = str(r.get("verdict_withheld", "none"))
        verdict = (
            "withheld: " + ", ".join(tex_escape(c.replace("_", " ")) for c in withheld.split(","))
            if withheld not in ("none", "nan", "")
            else verdict_tex(r.get("verdict_vs_B_ort_key", ""))
            + (r", D$\sim$B" if str(r.get("verdict_vs_B_ort", "")).endswith("; D ~ B") else "")
        )
        rows.append(
            {
                "workload": tex_escape(r.get("workload", "")),
                "point": tex_escape(r.get("point", "")),
                "reps": f"{int(r.get('replicates_runner', 0))}/{int(r.get('replicates_ort', 0))}",
                "DB": cell("speedup_D_over_B_ort"),
                "DA": cell("speedup_D_over_A_ort"),
                "BA": cell("speedup_B_ort_over_A_ort"),
                "GA": cell("speedup_B_ort_graph_over_A_ort"),
                "par": spd_cell(
                    r.get("parallelism_B_ort"), r.get("parallelism_B_ort_lo"), r.get("parallelism_B_ort_hi")
                ),
                "gaps": gaps,
                "alone": alone or "--",
                "verdict": verdict,
            }
        )
    return rows


def write_external_table(csv: str | Path, template: str | Path, out: str | Path) -> None:
    """paper/generated/external_table.tex from results/host/external.csv."""
    try:
        df = pd.read_csv(csv)
    except pd.errors.EmptyDataError:
        df = pd.DataFrame()
    effects = set(pd.to_numeric(df.get("min_effect", pd.Series([0.03])), errors="coerce").dropna()) or {0.03}
    backend = str(df["backend"].dropna().iloc[0]) if "backend" in df and df["backend"].notna().any() else "ONNX Runtime"
    text = _template(template).render(
        rows=external_rows(df),
        backend=tex_escape(backend),
        min_effect_pct=f"{100 * float(max(effects)):g}",
        loaded=bool(df.get("loaded", pd.Series([], dtype=bool)).astype(str).str.lower().eq("true").any()),
    )
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(text)
