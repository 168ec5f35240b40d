"""The external-B LaTeX table from a known comparison table."""

from pathlib import Path

import pandas as pd

from hxfuse.render import latex

REPO = Path(__file__).resolve().parents[2]


def test_external_table_known_answers(tmp_path):
    row = {
        "workload": "mv",
        "point": "similar",
        "replicates_runner": 3,
        "replicates_ort": 2,
        "backend": "onnxruntime 1.32.0 CPUExecutionProvider",
        "min_effect": 0.03,
        "loaded": False,
    }
    for name, (v, lo, hi, rel) in {
        "speedup_D_over_B_ort": (1.5, 1.4, 1.6, "<"),
        "speedup_D_over_A_ort": (1.0, 0.99, 1.01, "~"),
        "speedup_B_ort_over_A_ort": (1.2, 0.9, 1.5, "?"),
        "speedup_B_ort_graph_over_A_ort": (0.8, 0.7, 0.9, ">"),
    }.items():
        row |= {name: v, f"{name}_lo": lo, f"{name}_hi": hi, f"{name}_rel": rel}
    row |= {
        "M_alone_ort_ms": 13.4,
        "M_alone_runner_ms": 13.1,
        "M_alone_error": 13.4 / 13.1 - 1,
        "V_alone_ort_ms": 9.5,
        "V_alone_runner_ms": 9.9,
        "V_alone_error": 9.5 / 9.9 - 1,
        "parallelism_B_ort": 1.41,
        "parallelism_B_ort_lo": 1.32,
        "parallelism_B_ort_hi": 1.48,
        "gap_B_ort_ms": 0.21,
        "gap_D_ms": 0.04,
        "verdict_withheld": "none",
        "verdict_vs_B_ort_key": "D<C+overlap",
        "verdict_vs_B_ort": "D < C and the timeline shows overlap; D ~ B",
    }
    csv = tmp_path / "external.csv"
    pd.DataFrame([row]).to_csv(csv, index=False)
    out = tmp_path / "t.tex"
    latex.write_external_table(csv, REPO / "workflow" / "templates" / "external_table.tex.j2", out)
    tex = out.read_text()
    line = next(ln for ln in tex.splitlines() if ln.startswith("mv & similar"))
    assert line == (
        r"mv & similar & 3/2 & \hxspd{1.50}{1.40}{1.60}\,$<$ & \hxspd{1.00}{0.99}{1.01}\,$\sim$ & "
        r"\hxspd{1.20}{0.90}{1.50}\,? & \hxspd{0.80}{0.70}{0.90}\,$>$ & \hxspd{1.41}{1.32}{1.48} & 0.21/0.04 & "
        r"M\,13.4/13.1\,(+2\%) V\,9.5/9.9\,(-4\%) & D$<$C + overlap, D$\sim$B \\"
    )
    # a withheld verdict names its conditions, not the reading table's key
    withheld = row | {"verdict_withheld": "duration_mismatch,no_parallelism", "verdict_vs_B_ort_key": "withheld"}
    pd.DataFrame([withheld]).to_csv(csv, index=False)
    latex.write_external_table(csv, REPO / "workflow" / "templates" / "external_table.tex.j2", out)
    line = next(ln for ln in out.read_text().splitlines() if ln.startswith("mv & similar"))
    assert line.endswith(r"& withheld: duration mismatch, no parallelism \\"), line
    assert "onnxruntime 1.32.0 CPUExecutionProvider" in tex and r"$1\pm 3\%$" in tex
    assert "The machine was loaded" not in tex
    pd.DataFrame([row | {"loaded": True}]).to_csv(csv, index=False)
    latex.write_external_table(csv, REPO / "workflow" / "templates" / "external_table.tex.j2", out)
    assert "The machine was loaded" in out.read_text()
