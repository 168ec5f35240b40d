"""The paper's generated sections: platform, scope (hxfuse.paper.sections).

Synthetic summaries with values no real machine has, so a value typed into
the code instead of read from the data would show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from hxfuse.paper import sections as paper


def _env_rows(target, cores=7, cpu="Test CPU 9000", emulated=False, engines=(2, 3)):
    rows = []
    for i, (wl, eng) in enumerate(zip(("mv", "mvd"), engines)):
        for g in "ABCD":
            rows.append(
                {
                    "target": target,
                    "sweep": "ratio",
                    "point_id": f"ratio/{wl}/p",
                    "point": "p",
                    "workload": wl,
                    "group": g,
                    "n": 33,
                    "cpu_model": cpu,
                    "cpu_governor": "performance",
                    "online_cores": cores,
                    "compiler": "cc 99.1",
                    "sdk_version": None,
                    "clock_resolution_ns": 1,
                    "clock_read_overhead_ns": 17 + i,
                    "emulated": emulated,
                    "device_engines_used": eng,
                }
            )
    return pd.DataFrame(rows)


def _doc(target, emulated=False, status="native: real timings"):
    return {
        "target": target,
        "emulated": emulated,
        "n_points": 2,
        "failed_points": [],
        "target_status": status,
        "replicates": {"ratio/mv/p": 4, "ratio/mvd/p": 4},
        "group_mapping": {g: f"mapping of {g} on {target}" for g in "ABCD"},
        "group_b_backend": f"B backend of {target}",
        "provenance": {
            "platform": "Linux-x86_64-test",
            "compilers": ["cc 99.1"],
            "python": "3.99.0",
            "git_commit": "abcdef0123456789",
        },
    }


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
    for needle in (
        "Test CPU 9000",
        "online cores & 7",
        "cc 99.1",
        "3.99.0",
        "Linux-x86\\_64-test",
        "17-18 ns per read",
        "2-3 (by workload)",
        "4 replicate(s) per point, 33 measured rounds per point",
        "mapping of D on host",
        "emulated & no",
        "own executor",
    ):
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
    q = _write(
        tmp_path,
        "hexagon-qemu",
        _env_rows("hexagon-qemu", cores=1, cpu="qemu cpu", emulated=True),
        _doc("hexagon-qemu", emulated=True, status="EMULATED under qemu-hexagon"),
    )
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
    m.write_text(
        json.dumps(
            {
                "checks": [
                    {
                        "key": "one_core",
                        "claim": "one core: parallelism about 1",
                        "how": "pinned",
                        "result": "pass",
                        "shown": "parallelism 0.42",
                    }
                ]
            }
        )
    )
    paper.write_sections([good[0]], [good[1]], {"mechanism": tmp_path / "m.tex"}, mechanism=m)
    tex = (tmp_path / "m.tex").read_text()
    assert "parallelism 0.42" in tex and "1 of 1 passed" in tex


# --- the template cites only computed numbers --------------------------------


PAPER = Path(__file__).resolve().parents[2] / "paper"
# Digits the template may hold: LaTeX settings and names, not results.
ALLOWED_DIGITS = [
    r"\\documentclass\[10pt\]",
    r"a4paper",
    r"margin=2cm",
    r"\[T1\]",
    r"phase-1",
    r"2-D",
    r"is about 1 when",
    r"\\hxval\{[^}]*\}",
]


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
    for name in (
        "setup",
        "scope",
        "platform_macros",
        "mechanism",
        "answers",
        "evidence",
        "limitations",
        "paper_figures",
        "results_table",
        "evidence_table",
        "results_macros",
    ):
        assert f"\\input{{generated/{name}.tex}}" in main, name
    for macro in (
        "\\hxAnswerC",
        "\\hxAnswerA",
        "\\hxAnswerB",
        "\\hxAnswerStop",
        "\\hxAnswerInconclusive",
        "\\hxEvidenceText",
        "\\hxCores",
        "\\hxMinEffectPct",
        "\\hxCiPct",
    ):
        assert macro in main, macro


def test_external_b_is_stated_where_it_ran(tmp_path):
    good = _write(tmp_path, "host", _env_rows("host"), _doc("host"))
    ext = tmp_path / "external.csv"
    pd.DataFrame(
        [
            {
                "sweep": "ratio",
                "point": "p",
                "workload": "mv",
                "backend": "onnxruntime 9.9",
                "speedup_D_over_B_ort": 1.01,
                "speedup_D_over_B_ort_lo": 0.99,
                "speedup_D_over_B_ort_hi": 1.02,
                "speedup_D_over_B_ort_rel": "~",
                "loaded": False,
            }
        ]
    ).to_csv(ext, index=False)
    out = {"scope": tmp_path / "s.tex"}
    paper.write_sections([good[0]], [good[1]], out, external_csv=ext)
    assert "External B (ONNX Runtime on the host, onnxruntime 9.9): ran at 1 point(s)" in out["scope"].read_text()
    paper.write_sections([good[0]], [good[1]], out)
    assert "External B" in out["scope"].read_text() and "not run in this build" in out["scope"].read_text()


# --- the further workloads: task graphs, the request stream, fixed vs searched --

from hxfuse.paper import graph_section as pg  # noqa: E402
from hxfuse.paper import search_section as pq  # noqa: E402
from hxfuse.paper import serve_section as ps  # noqa: E402


def _graph_row(
    point,
    model="decoder",
    reuse=False,
    loaded=False,
    failed=False,
    da=(1.40, 1.30, 1.50),
    db=(1.00, 0.99, 1.01),
    dc=(1.01, 0.99, 1.02),
    par=1.02,
    nodes=7,
    steps=4,
    width=3,
    mixed=2,
    d_ns=(2e6, 1.9e6, 2.1e6),
    e2e=(1.30, 1.20, 1.40),
    prep=0.25,
    busy=1.5,
):
    r = {
        "point": point,
        "model": model,
        "label": f"label of {point}",
        "reuse": reuse,
        "nodes": nodes,
        "n_M": 3,
        "n_V": 3,
        "n_D": 1,
        "steps": steps,
        "max_ready": width,
        "mixed_steps": mixed,
        "edges": 9,
        "failed": failed,
        "failed_reasons": "rep0: node x differs" if failed else "",
        "loaded": loaded,
        "other_busy_cores_max": busy if loaded else 0.0,
        "D_parallelism": par,
        "D_prep_share": prep,
    }
    r["D_device_ns"], r["D_device_ns_lo"], r["D_device_ns_hi"] = d_ns
    for key, v in (
        ("DA_device", da),
        ("DB_device", db),
        ("DC_device", dc),
        ("DA_e2e", e2e),
        ("DB_e2e", db),
        ("DC_e2e", dc),
    ):
        r[key], r[f"{key}_lo"], r[f"{key}_hi"] = (float("nan"),) * 3 if failed else v
        read = "none" if failed else pg.interval_reading(v[1], v[2], 0.03)
        r[f"{key}_verdict"] = "inconclusive (loaded)" if loaded and read != "none" else read
    return r


def _graphs():
    return pd.DataFrame(
        [
            _graph_row("dec"),
            _graph_row("dec-reuse", reuse=True, steps=9, width=1, mixed=1, d_ns=(3e6, 2.8e6, 3.2e6)),
            _graph_row("inc", model="inception", loaded=True, da=(1.2, 1.1, 1.3), dc=(1.2, 1.1, 1.3), par=1.6),
            _graph_row("mob", model="mobilenetv2", da=(1.05, 0.98, 1.12), mixed=0),
            _graph_row("bad", model="mobilenetv2", failed=True),
        ]
    )


def test_graph_readings_come_from_the_intervals_and_the_parallelism():
    g = _graphs()
    rows = {r["point"]: r for r in g.to_dict("records")}
    s = pg.graph_point_sentence(rows["dec"], 0.03)
    assert (
        "D/A 1.40 [1.30, 1.50] (faster), D/B 1.00 [0.99, 1.01] (no difference), D/C 1.01 [0.99, 1.02] "
        "(no difference); parallelism 1.02." in s
    )
    assert (
        "D gains over A without overlap (parallelism at most 1.15: the nodes took turns; D/C no difference): "
        "the gain is the host's round trip per node that the fused entry removes (7 requests in A, one in D)."
    ) in s
    # a loaded point says so, carries no verdict and is read on its intervals only
    s = pg.graph_point_sentence(rows["inc"], 0.03)
    assert "(loaded: other work kept up to 1.5 cores busy, so no verdict)" in s and "(faster)" not in s
    assert "On its intervals only: D gains over A and over C with a parallelism above 1.15" in s
    assert pg.graph_point_sentence(rows["mob"], 0.03).endswith("D is not shown faster than A (D/A undetermined).")
    assert "failed its correctness check (rep0: node x differs)" in pg.graph_point_sentence(rows["bad"], 0.03)
    summ = pg.graph_summary_sentence(g, 0.03)
    assert (
        "On the device time D is faster than A on 2 of the 3 graph point(s) that carry a verdict; on 2 of these "
        "D's parallelism is at most 1.15 (its nodes took turns), and on 2 of those D is not faster than C "
        "either"
    ) in summ
    assert (
        "1 graph point(s) ran on a loaded machine and carry no verdict; on their intervals alone D/A lies above "
        "1 + 0.03 on 1; D's parallelism exceeds 1.15 on all of these." in summ
    )
    assert "1 graph point(s) failed their check and carry no speedup." in summ
    two = pd.DataFrame([_graph_row("a"), _graph_row("b", dc=(1.2, 1.1, 1.3))])
    assert (
        "on 2 of these D's parallelism is at most 1.15 (its nodes took turns), and on 1 of those D is not faster "
        "than C either, so there the gain is the removed round trips, not overlap; on the other 1 D is faster "
        "than C as well, which with nodes taking turns is the barriers D drops, not overlap."
    ) in pg.graph_summary_sentence(two, 0.03)


def test_graph_interval_reading_is_the_summarys_rule():
    from hxfuse.graph.stats import verdict
    import itertools

    for lo, hi in itertools.product([0.9, 0.97, 0.98, 1.0, 1.02, 1.03, 1.04, 1.2, float("nan")], repeat=2):
        if not lo <= hi:
            continue
        assert pg.interval_reading(lo, hi, 0.03) == verdict(lo, hi, 0.03), (lo, hi)


def test_graph_section_reuse_and_end_to_end(tmp_path):
    g = _graphs()
    tex = pg.graph_tex(
        g,
        {"dec": "results/host/graph/figures/profile_dec.pdf"},
        "results/host/graph/figures/s.pdf",
        {"dec": 2 * 2**20, "dec-reuse": 2**20},
        "paper/generated/graph_table.tex",
        0.03,
    )
    assert (
        r"\texttt{dec-reuse} (label of dec-reuse): 7 nodes (3 M, 3 V, 1 D), 9 edges; 9 steps, "
        r"at most 1 ready nodes in one step, 1 step(s) with ready work on two or more engine classes." in tex
    )
    assert "4 of 5 graph point(s) have a step where fusion across engines has anything to overlap; the others" in tex
    assert (
        r"\texttt{dec} against \texttt{dec-reuse}: distinct storage 2048\,KiB without reuse, 1024\,KiB with "
        r"(50\%); the planner's ordering edges take the steps from 4 to 9" in tex
    )
    assert "D took longer with reuse (the intervals of D's device time do not overlap)" in tex
    assert r"\input{generated/graph_table.tex}" in tex and "{../results/host/graph/figures/profile_dec.pdf}" in tex
    assert (
        r"D/A 1.30 [1.20, 1.40] end to end (faster) against 1.40 [1.30, 1.50] device only; "
        r"preparation is 25\%"
    ) in tex
    assert "the end-to-end D/A median lies below the device-only one on 2 of 4 point(s)" in tex
    assert "No graph point ran in this build" in pg.graph_tex(None, {}, None, {}, None)


def _serve_rows(point, rate, w, ratios, loaded=False, n=4, **pol):
    rows = []
    for (policy, metric), (v, lo, hi) in ratios.items():
        rows.append(
            {
                "point": point,
                "rate": rate,
                "window_us": w,
                "policy": policy,
                "metric": metric,
                "median": v,
                "lo": lo,
                "hi": hi,
                "n": n,
                "loaded": loaded,
            }
        )
    for (policy, metric), v in pol.get("values", {}).items():
        rows.append(
            {
                "point": point,
                "rate": rate,
                "window_us": w,
                "policy": policy,
                "metric": metric,
                "median": v,
                "lo": v,
                "hi": v,
                "n": n,
                "loaded": loaded,
            }
        )
    return rows


def _serve():
    vals = {
        ("A", "miss_rate"): 0.0,
        ("B", "miss_rate"): 0.02,
        ("D", "miss_rate"): 0.1,
        ("A", "throughput_rps"): 400,
        ("B", "throughput_rps"): 401,
        ("D", "throughput_rps"): 380,
        ("D", "paired_share"): 0.4,
        ("D", "pairing_wait_mean_ms"): 0.25,
    }
    ratios = {
        ("D/A", "p99_ms"): (1.1, 0.9, 1.3),
        ("D/B", "p99_ms"): (0.8, 0.7, 0.9),
        ("D/B", "short_p99_ms"): (1.5, 1.2, 1.9),
        ("D/B", "throughput_rps"): (0.95, 0.92, 0.97),
    }
    return pd.DataFrame(
        _serve_rows("calm", 400, 300, ratios, values=vals)
        + _serve_rows("busy", 1200, 300, ratios, loaded=True, values=vals)
        + _serve_rows("once", 800, 0, ratios, n=1, values=vals)
    )


def test_serve_sentences_compare_d_with_a_and_b_and_say_undetermined():
    s = _serve()
    assert ps.ratio_reading({"median": 0.8, "lo": 0.7, "hi": 0.9, "n": 4}) == "lower"
    assert ps.ratio_reading({"median": 1.1, "lo": 0.9, "hi": 1.3, "n": 4}) == (
        "undetermined (its interval crosses an edge of 1 ± 0.03)"
    )
    # a tight interval that excludes 1 but stays inside the band is no finding
    assert ps.ratio_reading({"median": 0.999, "lo": 0.998, "hi": 0.9995, "n": 4}) == "no different (within 1 ± 0.03)"
    assert ps.ratio_reading({"median": 1.05, "lo": 1.02, "hi": 1.08, "n": 4}) == (
        "undetermined (its interval crosses an edge of 1 ± 0.03)"
    )
    assert ps.ratio_reading({"median": 1.05, "lo": 1.02, "hi": 1.08, "n": 4}, min_effect=0.01) == "higher"
    assert ps.ratio_reading({"median": 1.3, "lo": 1.3, "hi": 1.3, "n": 1}) == "undetermined (one replay: no interval)"
    calm = ps.serve_point_sentence(s, "calm")
    assert (
        r"Point \texttt{calm} (400 requests/s, $w$ = 300\,$\mu$s): p99 latency D/A 1.10 [0.90, 1.30], "
        r"undetermined (its interval crosses an edge of 1 ± 0.03) and D/B 0.80 [0.70, 0.90], lower; the bandwidth "
        r"requests' p99 D/B 1.50 [1.20, 1.90], higher; throughput D/B 0.95 [0.92, 0.97], undetermined (its "
        r"interval crosses an edge of 1 ± 0.03) (medians A 400/s, B 401/s, "
        r"D 380/s); deadline misses A 0.0\%, B 2.0\%, D 10.0\%. D paired 40\% of the requests, with a mean "
        r"pairing wait of 0.250\,ms."
    ) == calm
    assert r"$w$ = 300\,$\mu$s; loaded: not counted in the answers): " in ps.serve_point_sentence(s, "busy")
    assert "loaded" not in calm
    once = ps.serve_point_sentence(s, "once")
    assert (
        "; one replay per policy: every ratio undetermined, no interval): p99 latency D/A 1.10 and D/B 0.80; " in once
    ) and "lower" not in once
    ans = ps.requests_answer(s)
    assert (
        "Over the 2 point(s) off a loaded machine, D's p99 latency against A is undetermined at 2; against B it "
        "is lower at 1, undetermined at 1; D's throughput against B is undetermined at 2"
    ) in ans
    assert r"1 of 3 point(s) ran on a loaded machine (\texttt{busy})" in ans and "(Section~" in ans
    assert "(Section~" not in ps.requests_answer(s, ref=False)
    only_loaded = s[s["point"] == "busy"]
    assert "No point ran off a loaded machine, so no ratio is read" in ps.requests_answer(only_loaded)
    tex = ps.serve_tex(
        s,
        {
            "latency_cdf": "results/host/serve/figures/latency_cdf.pdf",
            "vs_rate": "results/host/serve/figures/vs_rate.pdf",
        },
        "results/host/serve/serve_table.tex",
    )
    assert r"\input{../results/host/serve/serve_table.tex}" in tex and "vs_rate.pdf" in tex
    assert "Figure~\\ref{fig:serve-sweep}" in tex and "fig:serve}" in tex
    assert "did not run in this build" in ps.serve_tex(None, {}, None)


def _search_doc(value=0.05, lo=0.01, hi=0.09, verdict="fixed>best"):
    return {
        "search": {
            "name": "pqt",
            "target": "host",
            "space_size": 18,
            "best": {"id": "c3", "label": "spread, 2", "is_fixed": False},
            "fixed": {"label": "fixed: spread, 1"},
            "cost": {"candidates": 8, "d_rounds": 80, "runner_seconds": 12.4, "reference_seconds": 1.6},
        },
        "confirmation": {
            "regret": {"value": value, "lo": lo, "hi": hi},
            "pairs": 3,
            "verdict": verdict,
            "verdict_text": "the search found a better configuration than the fixed default",
        },
    }


def test_search_section_reports_regret_or_says_how_to_run_it():
    s = pq.search_sentence(_search_doc())
    assert (
        r"Search \texttt{pqt} on \texttt{host} evaluated 8 of the 18 configurations of its space (80 measured "
        r"rounds of D, 12\,s of runner time, 2\,s more for the fixed default's reference run); the best found is "
        r"spread, 2. Re-measured against the fixed default (fixed: spread, 1) in 3 interleaved pairs, the regret "
        r"is +5.0\% [+1.0\%, +9.0\%]: the search found a better configuration than the fixed default."
    ) == s
    tex = pq.search_tex(
        [_search_doc()], {"host/pqt": "results/host/figures/search_pqt.pdf"}, "paper/generated/search_table.tex"
    )
    assert r"\input{generated/search_table.tex}" in tex and "search_pqt.pdf" in tex
    assert r"\label{fig:search-host-pqt}" in tex
    # an inconclusive confirmation says so, with how many reasons withheld the verdict
    doc = _search_doc(verdict="inconclusive")
    doc["confirmation"]["reasons"] = ["fixed pair 0: loaded before", "best pair 1: loaded after"]
    assert (
        "the regret is +5.0\\% [+1.0\\%, +9.0\\%]: inconclusive, no verdict (2 reason(s), e.g. fixed pair 0: "
        "loaded before)."
    ) in pq.search_sentence(doc)
    none = pq.search_tex([], {}, None)
    assert "Not run in this build" in none and "snakemake -{}-cores 4 searches -{}-config study=search" in none
    assert "tab:search" not in none


def test_workload_sections_are_written_and_input_by_the_paper(tmp_path):
    good = _write(tmp_path, "host", _env_rows("host"), _doc("host"))
    gcsv, scsv = tmp_path / "graph.csv", tmp_path / "serve.csv"
    _graphs().to_csv(gcsv, index=False)
    _serve().to_csv(scsv, index=False)
    out = {k: tmp_path / f"{k}.tex" for k in ("graph", "serve", "search", "workload_answers", "limitations")}
    paper.write_sections([good[0]], [good[1]], out, workloads={"graph_summary": gcsv, "serve_summary": scsv})
    ans = out["workload_answers"].read_text()
    for macro in (
        "hxAnswerReady",
        "hxAnswerRequests",
        "hxAnswerSearch",
        "hxAbstractGraph",
        "hxAbstractServe",
        "hxAbstractSearch",
    ):
        assert f"\\newcommand{{\\{macro}}}" in ans, macro
    assert "Fixed vs searched did not run in this build" in ans
    assert "Not run in this build" in out["search"].read_text()
    lim = out["limitations"].read_text()
    assert r"\textbf{Graphs.} The 5 graph point(s)" in lim and "1 of them ran on a loaded machine" in lim
    assert r"\textbf{Request stream.} 3 point(s), 1 of them on a loaded machine" in lim
    # nothing configured: every section says it did not run
    paper.write_sections([good[0]], [good[1]], out)
    assert "No graph point ran in this build" in out["graph"].read_text()
    assert "did not run in this build" in out["serve"].read_text()
    main = (PAPER / "main.tex").read_text()
    for name in ("graph", "serve", "search", "workload_answers"):
        assert f"\\input{{generated/{name}.tex}}" in main, name
    for macro in (
        "hxAnswerReady",
        "hxAnswerRequests",
        "hxAnswerSearch",
        "hxAbstractGraph",
        "hxAbstractServe",
        "hxAbstractSearch",
    ):
        assert f"\\{macro}" in main, macro


def test_a_device_target_without_a_recorded_b_backend_takes_the_targets_own(tmp_path):
    """A device summary that lacks group_b_backend reads B's description from
    the target table (once a crash: a Target was read like a dict)."""
    from hxfuse.config.targets import TARGETS

    doc = {k: v for k, v in _doc("hexagon").items() if k != "group_b_backend"}
    csv, js = _write(tmp_path, "hexagon", _env_rows("hexagon"), doc)
    tabs, docs = paper.load([csv], [js])
    p = paper.platform("hexagon", tabs["hexagon"], docs["hexagon"])
    assert p["group_b"] == TARGETS["hexagon"].group_b != ""
