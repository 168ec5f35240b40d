"""LaTeX rows of the service mode's summary (rule serve_table), rendered from
workflow/templates/serve_table.tex.j2 with hxfuse.render.latex's Jinja2 loader."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from hxfuse.render.latex import _template, tex_escape

COLUMNS = ("p50_ms", "p95_ms", "p99_ms", "short_p99_ms", "miss_rate", "throughput_rps", "pairing_wait_mean_ms")


def _cell(row: pd.Series | None, scale: float = 1.0, digits: int = 2) -> str:
    if row is None or not math.isfinite(row["median"]):
        return "--"
    v, lo, hi = (row[k] * scale for k in ("median", "lo", "hi"))
    return f"{v:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def table_rows(summary: pd.DataFrame) -> list[dict]:
    """One row per (point, policy): each metric's median [interval]; miss
    rate in percent, throughput in requests/s."""
    rows = []
    pts = summary[["point", "rate", "window_us"]].drop_duplicates().sort_values(["rate", "window_us", "point"])
    for _, p in pts.iterrows():
        s = summary[summary["point"] == p["point"]]
        for pol in ("A", "B", "D"):
            sp = s[s["policy"] == pol].set_index("metric")
            if sp.empty:
                continue
            get = {m: (sp.loc[m] if m in sp.index else None) for m in COLUMNS}
            # a point measured while other work kept the cores busy is marked
            mark = r"$^\dagger$" if "loaded" in sp.columns and bool(sp["loaded"].any()) else ""
            rows.append(
                {
                    "point": tex_escape(p["point"]) + mark,
                    "rate": f"{p['rate']:g}",
                    "w": str(p["window_us"]),
                    "policy": pol,
                    "p50": _cell(get["p50_ms"]),
                    "p95": _cell(get["p95_ms"]),
                    "p99": _cell(get["p99_ms"]),
                    "short": _cell(get["short_p99_ms"]),
                    "miss": _cell(get["miss_rate"], 100.0, 1),
                    "tput": _cell(get["throughput_rps"], 1.0, 0),
                    "wait": _cell(get["pairing_wait_mean_ms"], 1.0, 3),
                }
            )
    return rows


def serve_table(summary: pd.DataFrame, template: str | Path) -> str:
    return _template(template).render(rows=table_rows(summary))
