"""Answers generated from the verdicts (hxfuse.paper.answers): counts and
intervals come from the data, and nothing is claimed beyond a verdict."""

from __future__ import annotations

import pytest

from hxfuse.paper import answers


def _v(
    name,
    key,
    rel,
    dc=(1.2, 1.15, 1.25),
    db=(1.0, 0.99, 1.01),
    da=(1.2, 1.15, 1.25),
    x=0.0,
    reason="",
    par=(1.5, 1.4, 1.6),
    progress=True,
    sweep="ratio",
    wl="mv",
):
    rec = {
        "point_id": f"{sweep}/{wl}/{name}",
        "point": name,
        "label": name,
        "sweep": sweep,
        "workload": wl,
        "x": x,
        "verdict_key": key,
        "verdict": key,
        "relations": rel,
        "point_ok": True,
        "inconclusive_reason": reason,
        "progress_overlap": progress,
        "parallelism": par[0],
        "parallelism_lo": par[1],
        "parallelism_hi": par[2],
    }
    for col, (v, lo, hi) in (("speedup_over_C", dc), ("speedup_over_B", db), ("speedup_over_A", da)):
        rec.update({col: v, f"{col}_lo": lo, f"{col}_hi": hi})
    return rec


VERDICTS = [
    _v("p1", "D<C+overlap", "D<A D~B D<C C~A", dc=(1.37, 1.31, 1.43), x=1),
    _v("p2", "D<C+overlap", "D<A D~B D<C C~A", x=2),
    # inconclusive: its D/C interval is above the band, but it must not count as a verdict
    _v(
        "p3",
        "inconclusive",
        "D<A D?B D<C C~A",
        db=(1.02, 0.96, 1.08),
        x=3,
        reason="robust CV of group B is 0.77 > 0.10",
    ),
    # overlap stops paying here: D ~ C, no progress
    _v(
        "p4",
        "no-difference",
        "D~A D~B D~C C~A",
        dc=(1.0, 0.99, 1.01),
        da=(1.0, 0.99, 1.01),
        x=4,
        par=(1.0, 0.99, 1.01),
        progress=False,
    ),
]


def test_answers_count_verdicts_and_intervals_apart():
    a = answers.answers(VERDICTS, 0.03)
    assert "Of the 3 points that carry a verdict: D faster than C on 2" in a["C"]
    assert "1.37 [1.31, 1.43]" in a["C"]
    # the inconclusive point is counted among interval relations only, labelled
    assert "D faster than C (interval above 1 + 0.03) on 3 of 4 points (2 of them carry a verdict)" in a["C"]
    assert "Progress overlap (from the tasks' checkpoints: at least two tasks each advancing" in a["C"]
    assert "holds on 2 of those 3 points" in a["C"]
    assert (
        "D $\\sim$ B (interval inside [1/(1 + 0.03), 1 + 0.03]: equivalent by two one-sided tests) "
        "on 3 of 4 points, 3 of them with a verdict" in a["B"]
    )
    assert "undetermined on 1" in a["B"]
    assert "3 of 4 points carry a verdict" in a["summary"] and "1 are without one" in a["summary"]
    # named with its reason
    assert (
        "\\texttt{ratio/\\allowbreak{}mv/\\allowbreak{}p3}" in a["inconclusive"]
        and "0.77 \\textgreater{} 0.10" in a["inconclusive"]
    )
    assert "p3" not in a["C"].split("Interval relations")[0]


def test_where_overlap_stops_paying_is_located_in_x_order():
    a = answers.answers(list(reversed(VERDICTS)), 0.03)
    stop = a["stop"]
    assert stop.index("p1 1.37") < stop.index("p2 ") < stop.index("p3 ") < stop.index("p4 ")
    assert "D is not shown faster than C at \\texttt{ratio/\\allowbreak{}mv/\\allowbreak{}p4} (no different)" in stop
    assert "checkpoints show no concurrent progress) at \\texttt{ratio/\\allowbreak{}mv/\\allowbreak{}p4}" in stop
    assert "p3 1.20 [1.15, 1.25]*" in stop  # no verdict: marked


def test_every_point_paying_is_said_with_the_verdict_count():
    a = answers.answers(VERDICTS[:3], 0.03)
    assert (
        "intervals show no point in the swept range where overlap stops paying (2 of 3 points carry a verdict)"
        in a["stop"]
    )


def test_no_verdicts_claims_nothing():
    inc = [dict(v, verdict_key="inconclusive", inconclusive_reason="loaded before") for v in VERDICTS]
    a = answers.answers(inc, 0.03)
    assert "No point carries a verdict" in a["C"] and "No point carries a verdict" in a["A"]
    assert "0 of 4 points carry a verdict" in a["summary"]


def test_answers_tex_needs_verdicts_and_skips_emulated():
    with pytest.raises(ValueError, match="no 'verdicts' list"):
        answers.answers_tex({"target": "host"})
    tex = answers.answers_tex({"target": "hexagon-qemu", "emulated": True})
    assert "emulated: its timings answer no question" in tex
    tex = answers.answers_tex({"target": "host", "verdicts": VERDICTS, "analysis": {"min_effect": 0.05}})
    for name in ("hxAnswerC", "hxAnswerA", "hxAnswerB", "hxAnswerStop", "hxAnswerInconclusive", "hxAnswerSummary"):
        assert f"\\newcommand{{\\{name}}}" in tex
    assert "1 + 0.05" in tex


def test_external_comparison_is_reported_not_judged():
    rows = [
        {
            "sweep": "ratio",
            "point": "similar",
            "workload": "md",
            "backend": "onnxruntime 9.9",
            "speedup_D_over_B_ort": 1.74,
            "speedup_D_over_B_ort_lo": 1.27,
            "speedup_D_over_B_ort_hi": 2.81,
            "speedup_D_over_B_ort_rel": "<",
            "loaded": True,
            "verdict_withheld": "duration_mismatch,no_parallelism",
        },
        {
            "sweep": "ratio",
            "point": "similar",
            "workload": "mv",
            "backend": "onnxruntime 9.9",
            "speedup_D_over_B_ort": 1.19,
            "speedup_D_over_B_ort_lo": 0.70,
            "speedup_D_over_B_ort_hi": 1.48,
            "speedup_D_over_B_ort_rel": "?",
            "loaded": False,
            "verdict_withheld": "none",
        },
    ]
    text = answers.external_sentence(rows + [rows[1] | {"point": "Mshort"}])
    assert "given on 2, withheld on 1 (duration mismatch on 1, no parallelism on 1)." in text
    text = answers.external_sentence(rows)
    assert "onnxruntime 9.9" in text and "over 2 points" in text
    assert (
        "D faster than B\\textsubscript{ort} on 1 "
        "(\\texttt{ratio/\\allowbreak{}md/\\allowbreak{}similar} (1.74 [1.27, 2.81]))" in text
    )
    assert "undetermined on 1" in text and "loaded during 1 of these 2" in text
    assert "alone takes the runner's time" in text
    assert "given on 1, withheld on 1 (duration mismatch on 1, no parallelism on 1)." in text
    assert "measured no point" in answers.external_sentence([])


def test_end_to_end_speedup_is_said_beside_the_makespan_one():
    e2e = {
        "speedup_e2e_over_A": 1.40,
        "speedup_e2e_over_A_lo": 1.37,
        "speedup_e2e_over_A_hi": 1.43,
        "speedup_e2e_over_C": 1.10,
        "speedup_e2e_over_C_lo": 1.08,
        "speedup_e2e_over_C_hi": 1.12,
    }
    pts = [dict(VERDICTS[0], **e2e, speedup_over_A=1.51, speedup_over_A_lo=1.48, speedup_over_A_hi=1.54), VERDICTS[1]]
    pts[1] = dict(pts[1], speedup_e2e_over_A=1.18, speedup_e2e_over_A_lo=1.14, speedup_e2e_over_A_hi=1.22)
    a = answers.answers(pts, 0.03)
    assert (
        "D over A has a median of 1.29 over the 2 points, against 1.35 on the makespan alone "
        "(largest change: \\texttt{ratio/\\allowbreak{}mv/\\allowbreak{}p1}, 1.40 [1.37, 1.43] end to end "
        "against 1.51 [1.48, 1.54])"
    ) in a["A"]
    assert "D over C has a median of 1.10 over the one point" in a["C"]
    # a summary without the end-to-end columns: nothing said, nothing invented
    assert "End to end" not in answers.answers(VERDICTS, 0.03)["A"]


def test_the_summary_leads_with_d_against_b():
    # on the host, what the data carry first is how D stood against the
    # backend's own concurrency (B), before any count of rows
    s = answers.answers(VERDICTS, 0.03, "host")["summary"]
    assert s.startswith(r"On target \texttt{host}, D against the backend's own concurrency (B): equivalent on 3")
    assert s.index("D against the backend") < s.index("carry a verdict")


def test_machine_too_busy_is_not_a_row():
    busy = _v("p9", "machine-busy", "D<A D~B D<C C~A")
    a = answers.answers([*VERDICTS, busy], 0.03, "host")
    assert r"\texttt{ratio/\allowbreak{}mv/\allowbreak{}p9}" in a["inconclusive"]


def test_the_paper_claims_no_npu_answer():
    # the data are threads on a host: no sentence may say they answer the
    # NPU question, nor that this study asks it "on one NPU's engines"
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "paper"
    text = " ".join((root / f).read_text() for f in ("main.tex", "related.tex"))
    text = " ".join(text.split())
    for claim in ("answers the question on a stand-in", "asks the same question on one NPU", "has net benefit"):
        assert claim not in text, claim
    assert "This phase gives no NPU answer" in text
