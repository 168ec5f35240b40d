"""The service mode's LaTeX rows and figures from a known summary."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from hxfuse.serve import stats as serve
from hxfuse.serve import table as serve_latex
from hxfuse.serve import plots as serve_plots

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "workflow" / "templates" / "serve_table.tex.j2"


def known_summary() -> pd.DataFrame:
    rows = []
    for rpl in (0, 1):
        for rep in (0, 1):
            for pol, p99 in (("A", 4.0), ("B", 2.0), ("D", 3.0)):
                rows.append(
                    {
                        **{m: 0.5 for m in serve.METRICS},
                        "replicate": rpl,
                        "rep": rep,
                        "policy": pol,
                        "p99_ms": p99,
                        "miss_rate": 0.125,
                        "throughput_rps": 400.0,
                        "point": "p_1",
                        "rate": 400.0,
                        "window_us": 300,
                    }
                )
    return serve.summarize(pd.DataFrame(rows), n_resamples=100)


def test_table_rows_show_medians_and_intervals():
    tex = serve_latex.serve_table(known_summary(), TEMPLATE)
    assert r"p\_1 & 400 & 300 & A & 0.50 [0.50, 0.50] & 0.50 [0.50, 0.50] & 4.00 [4.00, 4.00]" in tex
    # miss rate in percent, throughput in requests/s
    assert "12.5 [12.5, 12.5] & 400 [400, 400]" in tex
    assert tex.count(r"\\") == 4 and r"\label{tab:serve}" in tex  # header + 3 policies


def test_figures_are_written(tmp_path):
    s = known_summary()
    serve_plots.versus(s, "rate", "rate", [tmp_path / "r.png"])
    serve_plots.versus(s, "window_us", "w", [tmp_path / "w.pdf"])
    req = pd.DataFrame(
        {"point": "p_1", "rate": 400.0, "window_us": 300, "policy": ["A", "B", "D"] * 4, "latency_ns": range(1, 13)}
    )
    serve_plots.latency_cdf(req, [tmp_path / "c.png"])
    assert all((tmp_path / f).stat().st_size > 1000 for f in ("r.png", "w.pdf", "c.png"))
