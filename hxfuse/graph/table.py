"""LaTeX table of the graph points (workload 4), rendered with the pipeline's
Jinja2 loader (hxfuse.render.latex, LaTeX-safe delimiters) from
``workflow/templates/graph_table.tex.j2``: one row per graph point with its
ready profile (nodes, steps, widest step), the medians of A and D (device
and end to end) and D/A, D/B, D/C with intervals; a failed point shows
"failed" and no number; a point measured on a loaded machine is marked with
a dagger (its intervals stand, it carries no verdict)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from hxfuse.render.latex import _template, fmt, fmt_ms, spd_cell, tex_escape


def table_rows(summary: pd.DataFrame, target: str) -> list[dict]:
    rows = []
    for _, r in summary.iterrows():
        loaded = bool(r.get("loaded", False))
        row = {
            "target": tex_escape(target),
            "label": tex_escape(r["label"]) + ("$^\\dagger$" if loaded else ""),
            "reuse": "yes" if r["reuse"] else "no",
            "ok": not bool(r["failed"]),
            "nodes": f"{int(r['nodes'])} ({int(r['n_M'])}/{int(r['n_V'])}/{int(r['n_D'])})",
            "steps": int(r["steps"]),
            "width": int(r["max_ready"]),
        }
        for t in ("device", "e2e"):
            row[f"TA_{t}"] = fmt_ms(r[f"A_{t}_ns"])
            row[f"TD_{t}"] = fmt_ms(r[f"D_{t}_ns"])
            for key in ("DA", "DB", "DC"):
                row[f"{key}_{t}"] = spd_cell(r[f"{key}_{t}"], r[f"{key}_{t}_lo"], r[f"{key}_{t}_hi"])
        row["par"] = fmt(r["D_parallelism"])
        rows.append(row)
    return rows


def write_table(
    summaries: dict[str, str | Path], template: str | Path, out: str | Path, min_effect: float = 0.03
) -> None:
    rows = []
    for target, path in summaries.items():
        rows += table_rows(pd.read_csv(path), target)
    text = _template(template).render(rows=rows, min_effect_pct=f"{100 * float(min_effect):g}")
    Path(out).write_text(text)
