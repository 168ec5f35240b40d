"""The paper's generated sections: platform, scope (hxfuse.paper).

Synthetic summaries with values no real machine has, so a value typed into
the code instead of read from the data would show."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from hxfuse import paper


def _env_rows(target, cores=7, cpu="Test CPU 9000", emulated=False, engines=(2, 3)):
    rows = []
    for i, (wl, eng) in enumerate(zip(("mv", "mvd"), engines)):
        for g in "ABCD":
            rows.append({"target": target, "sweep": "ratio", "point_id": f"ratio/{wl}/p", "point": "p",
                         "workload": wl, "group": g, "n": 33, "cpu_model": cpu, "cpu_governor": "performance",
                         "online_cores": cores, "compiler": "cc 99.1", "sdk_version": None,
                         "clock_resolution_ns": 1, "clock_read_overhead_ns": 17 + i, "emulated": emulated,
                         "device_engines_used": eng})
    return pd.DataFrame(rows)


def _doc(target, emulated=False, status="native: real timings"):
    return {"target": target, "emulated": emulated, "n_points": 2, "failed_points": [],
            "target_status": status, "replicates": {"ratio/mv/p": 4, "ratio/mvd/p": 4},
            "group_mapping": {g: f"mapping of {g} on {target}" for g in "ABCD"},
            "group_b_backend": f"B backend of {target}",
            "provenance": {"platform": "Linux-x86_64-test", "compilers": ["cc 99.1"], "python": "3.99.0",
                           "git_commit": "abcdef0123456789"}}


def _write(tmp_path, target, df, doc):
    csv, js = tmp_path / f"{target}.csv", tmp_path / f"{target}.json"
    df.to_csv(csv, index=False)
    js.write_text(json.dumps(doc))
    return str(csv), str(js)


def test_setup_and_scope_report_the_recorded_platform(tmp_path):
    csv, js = _write(tmp_path, "host", _env_rows("host"), _doc("host"))
    out = {k: tmp_path / f"{k}.tex" for k in ("setup", "scope", "platform_macros")}
    paper.write_sections([csv], [js], out)
    setup = out["setup"].read_text()
    for needle in ("Test CPU 9000", "online cores & 7", "cc 99.1", "3.99.0", "Linux-x86\\_64-test",
                   "17-18 ns per read", "2-3 (by workload)", "4 replicate(s) per point, 33 measured rounds per point",
                   "mapping of D on host", "emulated & no", "own executor"):
        assert needle in setup, needle
    scope = out["scope"].read_text()
    assert "\\texttt{host}: ran (native: real timings) on 7 online core(s) of Test CPU 9000" in scope
    # the Hexagon targets did not run here and the statement says so
    for t in ("hexagon-qemu", "hexagon", "hexagon-sim"):
        assert f"\\texttt{{{t}}}: not run in this build" in scope, t
    macros = out["platform_macros"].read_text()
    assert "\\newcommand{\\hxCores}{7}" in macros and "\\newcommand{\\hxTimedTarget}{host}" in macros


def test_emulated_target_is_reported_as_correctness_only(tmp_path):
    h = _write(tmp_path, "host", _env_rows("host"), _doc("host"))
    q = _write(tmp_path, "hexagon-qemu", _env_rows("hexagon-qemu", cores=1, cpu="qemu cpu", emulated=True),
               _doc("hexagon-qemu", emulated=True, status="EMULATED under qemu-hexagon"))
    tabs, docs = paper.load([h[0], q[0]], [h[1], q[1]])
    scope = paper.scope_tex(tabs, docs)
    line = next(x for x in scope.splitlines() if "texttt{hexagon-qemu}" in x)
    assert "ran under emulation" in line and "correctness only" in line
    assert "no timing from it is reported as performance" in line
    setup = paper.setup_tex(tabs, docs)
    assert "emulated & yes: timings are not performance" in setup
    # the timed target stays the host, whatever order the summaries come in
    tabs, docs = paper.load([q[0], h[0]], [q[1], h[1]])
    assert "\\newcommand{\\hxTimedTarget}{host}" in paper.platform_macros(tabs, docs)


def test_bad_inputs_fail_clearly(tmp_path):
    csv, js = _write(tmp_path, "host", _env_rows("host"), {"n_points": 1})
    with pytest.raises(ValueError, match="no 'target' key"):
        paper.load([csv], [js])
    with pytest.raises(ValueError, match="2 summary.csv files but 1"):
        paper.load([csv, csv], [js])
    good = _write(tmp_path, "host", _env_rows("host"), _doc("host"))
    with pytest.raises(ValueError, match="unknown generated section"):
        paper.write_sections([good[0]], [good[1]], {"abstract": tmp_path / "a.tex"})


def test_mechanism_section_needs_its_data(tmp_path):
    good = _write(tmp_path, "host", _env_rows("host"), _doc("host"))
    with pytest.raises(ValueError, match="needs mechanism.json"):
        paper.write_sections([good[0]], [good[1]], {"mechanism": tmp_path / "m.tex"})
    m = tmp_path / "mechanism.json"
    m.write_text(json.dumps({"checks": [{"key": "one_core", "claim": "one core: parallelism about 1",
                                         "how": "pinned", "result": "pass", "shown": "parallelism 0.42"}]}))
    paper.write_sections([good[0]], [good[1]], {"mechanism": tmp_path / "m.tex"}, mechanism=m)
    tex = (tmp_path / "m.tex").read_text()
    assert "parallelism 0.42" in tex and "1 of 1 passed" in tex


# --- the template cites only computed numbers --------------------------------


PAPER = Path(__file__).resolve().parents[1] / "paper"
# Digits the template may hold: LaTeX settings and names, not results.
ALLOWED_DIGITS = [r"\\documentclass\[10pt\]", r"a4paper", r"margin=2cm", r"\[T1\]", r"phase-1", r"2-D",
                  r"is about 1 when", r"\\hxval\{[^}]*\}"]


def _template_text() -> str:
    # drop comments (an unescaped % to the end of the line; \% is text)
    text = "\n".join(re.sub(r"(?<!\\)%.*", "", ln) for ln in (PAPER / "main.tex").read_text().splitlines())
    for pat in ALLOWED_DIGITS:
        text = re.sub(pat, "", text)
    return text


def test_template_types_no_number():
    text = _template_text()
    assert not re.findall(r"\d", text), [ln for ln in text.splitlines() if re.search(r"\d", ln)]


def test_template_inputs_every_generated_section():
    main = (PAPER / "main.tex").read_text()
    for name in ("setup", "scope", "platform_macros", "mechanism", "answers", "evidence", "limitations",
                 "paper_figures", "results_table", "evidence_table", "results_macros"):
        assert f"\\input{{generated/{name}.tex}}" in main, name
    for macro in ("\\hxAnswerC", "\\hxAnswerA", "\\hxAnswerB", "\\hxAnswerStop", "\\hxAnswerInconclusive",
                  "\\hxEvidenceText", "\\hxCores", "\\hxMinEffectPct", "\\hxCiPct"):
        assert macro in main, macro


def test_external_b_is_stated_where_it_ran(tmp_path):
    good = _write(tmp_path, "host", _env_rows("host"), _doc("host"))
    ext = tmp_path / "external.csv"
    pd.DataFrame([{"sweep": "ratio", "point": "p", "workload": "mv", "backend": "onnxruntime 9.9",
                   "speedup_D_over_B_ort": 1.01, "speedup_D_over_B_ort_lo": 0.99, "speedup_D_over_B_ort_hi": 1.02,
                   "speedup_D_over_B_ort_rel": "~", "loaded": False}]).to_csv(ext, index=False)
    out = {"scope": tmp_path / "s.tex"}
    paper.write_sections([good[0]], [good[1]], out, external_csv=ext)
    assert "External B (ONNX Runtime on the host, onnxruntime 9.9): ran at 1 point(s)" in out["scope"].read_text()
    paper.write_sections([good[0]], [good[1]], out)
    assert "External B" in out["scope"].read_text() and "not run in this build" in out["scope"].read_text()
