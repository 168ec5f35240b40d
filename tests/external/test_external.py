"""hxfuse/external/compare.py on synthetic raw data with known answers: D exactly 1.5x
faster than B_ort gives 1.5 with an interval around it, identical makespans give
'~', replicates that disagree widen the interval, and files that are not the
same point (or failed) are refused before any statistics."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from hxfuse.external import compare as ext
from hxfuse.runner.records import parse_records
from hxfuse.analysis.stats import hierarchical_bootstrap_median

TASKS_META = {
    "M": {"m": 64, "n": 64, "k": 64, "precision": "fp32"},
    "V": {"rows": 8, "cols": 32, "passes": 2, "workers": 1, "precision": "fp32"},
    "D": {"rows": 16, "row_bytes": 64, "src_stride": 128, "repeat": 2},
}
ENG = {"M": "mx", "V": "vec", "D": "dma"}
B_ORT_SHARE = 0.6  # of its makespan each B_ort task covers


def _trial(rnd, group, workload, tasks, makespan, t0, serial):
    """tasks: {task: duration}; serial: back to back, else all start at t0."""
    recs, t = [], t0
    for task, dur in tasks.items():
        b = t if serial else t0
        recs.append(
            {
                "task": task,
                "engine": ENG[task],
                "launch": b,
                "begin": b,
                "end": b + dur,
                "host_seen": b + dur,
                "checksum": "0",
                "cpu_ns": dur,
            }
        )
        t = b + dur
    host = {"submit_begin": t0, "submit_end": t0, "wait_begin": t0, "wait_end": t0 + makespan}
    return {
        "record": "trial",
        "round": rnd,
        "seq": 0,
        "warmup": False,
        "workload": workload,
        "group": group,
        "empty": False,
        "host": host,
        "device": None,
        "tasks": recs,
        "waits": [],
        "makespan_ns": makespan,
        "checksums_ok": True,
    }


def _run(groups, alone, rounds=40, rng=None, backend="hxrun host", status="ok", tasks_meta=TASKS_META):
    """groups: {group: makespan ns (or callable(round) -> ns)}; alone: {task: ns}."""
    return parse_records(_lines(groups, alone, rounds, rng, backend, status, tasks_meta))


def _lines(groups, alone, rounds=40, rng=None, backend="hxrun host", status="ok", tasks_meta=TASKS_META):
    rng = rng or np.random.default_rng(0)
    lines = [
        json.dumps(
            {
                "record": "meta",
                "backend": backend,
                "tasks": tasks_meta,
                "load_average_before": 0.5,
                "other_busy_cores_before": -1,
            }
        )
    ]
    t0 = 0
    for r in range(rounds):
        for g, ms in groups.items():
            ms = ms(r) if callable(ms) else ms
            ms = int(ms * (1 + 0.002 * rng.standard_normal()))
            # B_ort's tasks run side by side, each over most of the makespan
            # (parallelism 1.8: it ran in parallel, so the verdict gate passes);
            # every other group's cover a third each (parallelism ~1)
            tasks = {t: int(ms * (B_ORT_SHARE if g == "B_ort" else 1 / 3)) for t in "MVD"}
            lines.append(json.dumps(_trial(r, g, "mvd", tasks, ms, t0, serial=g.startswith("A"))))
            t0 += ms + 1000
        for task, ns in alone.items():
            ns = int(ns * (1 + 0.002 * rng.standard_normal()))
            lines.append(json.dumps(_trial(r, "alone", task, {task: ns}, ns, t0, serial=True)))
            t0 += ns + 1000
    lines.append(json.dumps({"record": "end", "status": status, "load_average_after": 1.25}))
    return lines


ALONE = {"M": 6_000_000, "V": 5_000_000, "D": 4_000_000}


def _ort(b=15e6, a=30e6, g=30e6, alone=ALONE, **kw):
    return _run(
        {"A_ort": a, "B_ort": b, "B_ort_graph": g}, alone, backend="onnxruntime 1.32.0 CPUExecutionProvider", **kw
    )


def _runner(d=10e6, alone=ALONE, **kw):
    return _run({"A": 30e6, "B": 11e6, "C": 29e6, "D": d}, alone, **kw)


def test_d_exactly_1_5x_faster_than_b_ort():
    df = ext.compare([_ort(b=15e6)], [_runner(d=10e6)], {"sweep": "s", "point": "p"})
    row = df.iloc[0]
    assert (row["sweep"], row["point"], row["workload"]) == ("s", "p", "mvd")
    assert row["speedup_D_over_B_ort"] == pytest.approx(1.5, rel=0.005)
    assert row["speedup_D_over_B_ort_lo"] < row["speedup_D_over_B_ort"] < row["speedup_D_over_B_ort_hi"]
    assert row["speedup_D_over_B_ort_lo"] > 1.48 and row["speedup_D_over_B_ort_hi"] < 1.52
    assert row["speedup_D_over_B_ort_rel"] == "<"
    assert row["speedup_D_over_A_ort"] == pytest.approx(3.0, rel=0.005)
    # within ORT, paired per round: B_ort 2x faster than A_ort, the graph no different
    assert row["speedup_B_ort_over_A_ort"] == pytest.approx(2.0, rel=0.005)
    assert row["speedup_B_ort_over_A_ort_rel"] == "<"
    assert row["speedup_B_ort_graph_over_A_ort_rel"] == "~"
    # same kernels on both sides: ratio 1 and '~'
    for t in "MVD":
        assert row[f"kernel_ratio_{t}"] == pytest.approx(1.0, rel=0.005)
        assert row[f"kernel_ratio_{t}_rel"] == "~"
    assert "D is faster than B_ort (1.50" in row["reading"]
    assert row["load_max_ort"] == 1.25 and np.isnan(row["other_busy_cores_max_runner"])
    assert not row["loaded"]  # no core count in the synthetic meta: nothing to judge against


def test_identical_makespans_give_no_difference():
    row = ext.compare([_ort(b=12e6)], [_runner(d=12e6, rng=np.random.default_rng(1))]).iloc[0]
    assert row["speedup_D_over_B_ort"] == pytest.approx(1.0, abs=0.005)
    assert row["speedup_D_over_B_ort_rel"] == "~"
    assert "D is no different from B_ort" in row["reading"]


def test_d_slower_than_b_ort_and_a_slower_kernel_is_its_own_variable():
    slow_m = ALONE | {"M": 9_000_000}
    row = ext.compare([_ort(b=10e6, alone=slow_m)], [_runner(d=14e6)]).iloc[0]
    assert row["speedup_D_over_B_ort_rel"] == ">"
    assert row["kernel_ratio_M"] == pytest.approx(1.5, rel=0.01) and row["kernel_ratio_M_rel"] == "<"
    assert row["kernel_ratio_V_rel"] == "~"
    assert "ORT's kernels alone differ from hxrun's" in row["reading"] and "M x1.50" in row["reading"]
    # eta against each backend's own alone times: serial 15 ms, ideal 6 (9 for ORT)
    assert row["eta_D"] == pytest.approx((15 - 14) / (15 - 6), abs=0.01)
    assert row["eta_B_ort"] == pytest.approx((18 - 10) / (18 - 9), abs=0.01)


def test_replicates_that_disagree_widen_the_interval():
    one = ext.compare([_ort(b=15e6)], [_runner(d=10e6)]).iloc[0]
    # three runner replicates at 9, 10 and 11.5 ms: the rounds of each are tight,
    # the replicates are not; the two-level bootstrap must show it
    reps = [_runner(d=d, rng=np.random.default_rng(i)) for i, d in enumerate((9e6, 10e6, 11.5e6))]
    many = ext.compare([_ort(b=15e6)], reps).iloc[0]
    assert many["replicates_runner"] == 3
    assert (many["speedup_D_over_B_ort_hi"] - many["speedup_D_over_B_ort_lo"]) > 10 * (
        one["speedup_D_over_B_ort_hi"] - one["speedup_D_over_B_ort_lo"]
    )
    assert many["speedup_D_over_B_ort_lo"] <= 15 / 11.5 + 0.01 and many["speedup_D_over_B_ort_hi"] >= 15 / 9 - 0.01


def test_a_loaded_machine_is_said():
    ort = _ort()
    ort.meta["online_cores"] = 2
    ort.end["other_busy_cores_after"] = 1.5
    row = ext.compare([ort], [_runner()]).iloc[0]
    assert row["loaded"] and "the machine was loaded" in row["reading"]
    quiet = _ort()
    quiet.meta["online_cores"] = 2
    quiet.end["other_busy_cores_after"] = 0.1
    runner = _runner()
    # the runner side has no busy-core sample: its load average 1.25 > 0.5 x 2 cores counts
    assert ext.compare([quiet], [runner]).iloc[0]["loaded"]
    runner.meta["other_busy_cores_before"] = 0.2
    assert not ext.compare([quiet], [runner]).iloc[0]["loaded"]


def test_hierarchical_medians_are_the_stats_module_draws():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(10, 1, 30), rng.normal(12, 1, 25), rng.normal(11, 1, 20)])
    c = np.repeat([0, 1, 2], [30, 25, 20])
    meds = ext.hierarchical_medians(x, c, 2000, seed=5)
    est = hierarchical_bootstrap_median(x, c, 2000, seed=5)
    assert np.quantile(meds, [0.025, 0.975]) == pytest.approx([est.lo, est.hi])


def test_unpaired_ratio_known_answer_and_empty_side():
    est = ext.unpaired_ratio([30.0] * 10, [0] * 10, [20.0] * 10, [0] * 10)
    assert (est.value, est.lo, est.hi) == (1.5, 1.5, 1.5)
    assert np.isnan(ext.unpaired_ratio([], [], [1.0], [0]).value)


def test_not_the_same_point_is_refused():
    other = TASKS_META | {"D": TASKS_META["D"] | {"repeat": 36}}
    with pytest.raises(ext.ExternalInputError, match=r"not the same point.*task D: repeat 2 vs 36"):
        ext.compare([_ort(tasks_meta=other)], [_runner()])


def test_failed_or_foreign_files_are_refused():
    with pytest.raises(ext.ExternalInputError, match="status 'checksum_mismatch'"):
        ext.compare([_ort()], [_runner(status="checksum_mismatch")])
    with pytest.raises(ext.ExternalInputError, match="is not an ONNX Runtime run"):
        ext.compare([_runner()], [_runner()])


def test_cli_writes_csv(tmp_path):
    o, r = tmp_path / "o.jsonl", tmp_path / "r.jsonl"
    o.write_text(
        "\n".join(
            _lines(
                {"A_ort": 30e6, "B_ort": 15e6, "B_ort_graph": 30e6},
                ALONE,
                backend="onnxruntime 1.32.0 CPUExecutionProvider",
            )
        )
    )
    r.write_text("\n".join(_lines({"A": 30e6, "D": 10e6}, ALONE)))
    out = tmp_path / "x" / "external.csv"
    assert ext.main(["--ort", str(o), "--runner", str(r), "--out", str(out), "--label", "sweep=ratio"]) == 0
    df = pd.read_csv(out)
    assert df.loc[0, "sweep"] == "ratio" and df.loc[0, "speedup_D_over_B_ort_rel"] == "<"
    assert df.loc[0, "speedup_D_over_B_ort"] == pytest.approx(1.5, rel=0.005)
    assert ext.main(["--ort", str(r), "--runner", str(r), "--out", str(out)]) == 2


def test_reading_table_against_b_ort():
    # D 3x faster than A and C (paired), 1.5x faster than B_ort: D < B_ort and D < C
    row = ext.compare([_ort(b=15e6)], [_runner(d=10e6)]).iloc[0]
    assert row["verdict_vs_B_ort_key"] == "D<B,D<C", row["verdict_vs_B_ort_reason"]
    # the same D against an ORT B just as fast: D ~ B_ort.  These synthetic
    # tasks cover a third of the makespan each (parallelism ~1), so there is
    # no progress overlap and the row is "D < A and D ~ B", not "D < C with overlap"
    row = ext.compare([_ort(b=10e6)], [_runner(d=10e6)]).iloc[0]
    assert row["verdict_vs_B_ort_key"] == "D<A,D~B"
    assert row["verdict_vs_B_ort"] == "D < A and D ~ B; C -> D: D < C"
    # a loaded machine withholds it, naming why
    ort = _run(
        {"A_ort": 30e6, "B_ort": 15e6, "B_ort_graph": 30e6}, ALONE, backend="onnxruntime 1.32.0 CPUExecutionProvider"
    )
    ort.meta["other_busy_cores_before"] = 2.0
    ort.meta["online_cores"] = 2
    row = ext.compare([ort], [_runner(d=10e6)]).iloc[0]
    assert row["verdict_vs_B_ort_key"] == "inconclusive" and "loaded" in row["verdict_vs_B_ort_reason"]


def test_the_verdict_is_given_only_when_durations_match_and_b_ort_ran_in_parallel(monkeypatch):
    row = ext.compare([_ort(b=15e6)], [_runner(d=10e6)]).iloc[0]
    assert row["verdict_withheld"] == "none" and row["verdict_vs_B_ort_key"] == "D<B,D<C"
    assert row["duration_matched"] and abs(row["M_alone_error"]) < 0.01
    assert row["parallelism_B_ort_lo"] > 1.7 and row["matching"] == "none (the point's own shapes)"
    # ORT's M alone 20% slower than the runner's: withheld, naming the mismatch
    row = ext.compare([_ort(b=15e6, alone=ALONE | {"M": 7_200_000})], [_runner(d=10e6)]).iloc[0]
    assert row["verdict_withheld"] == "duration_mismatch" and row["verdict_vs_B_ort_key"] == "withheld"
    assert row["verdict_vs_B_ort"] == "withheld: duration_mismatch" and not row["duration_matched"]
    assert "vs 6 ms (+20%)" in row["verdict_vs_B_ort_reason"]
    # 8% off is within the 10% of the rule
    row = ext.compare([_ort(b=15e6, alone=ALONE | {"M": 6_480_000})], [_runner(d=10e6)]).iloc[0]
    assert row["verdict_withheld"] == "none" and row["duration_matched"]
    # B_ort's tasks covering a third of its makespan each (parallelism 1): withheld, naming it
    monkeypatch.setitem(globals(), "B_ORT_SHARE", 1 / 3)
    row = ext.compare([_ort(b=15e6)], [_runner(d=10e6)]).iloc[0]
    assert row["verdict_withheld"] == "no_parallelism" and "B_ort's parallelism 1.00" in row["verdict_vs_B_ort_reason"]
    # both: both named
    row = ext.compare([_ort(b=15e6, alone=ALONE | {"V": 3_000_000})], [_runner(d=10e6)]).iloc[0]
    assert row["verdict_withheld"] == "duration_mismatch,no_parallelism"
    assert "vs 5 ms (-40%)" in row["verdict_vs_B_ort_reason"]


def test_a_duration_matched_ort_run_is_the_same_point_and_its_matching_is_shown():
    ort = _run(
        {"A_ort": 30e6, "B_ort": 15e6, "B_ort_graph": 30e6},
        ALONE,
        backend="onnxruntime 1.32.0 CPUExecutionProvider",
        tasks_meta=TASKS_META | {"M": TASKS_META["M"] | {"m": 200}},
    )
    with pytest.raises(ext.ExternalInputError, match="task M: m 64 vs 200"):
        ext.compare([ort], [_runner()])
    ort.meta["point_tasks"] = TASKS_META
    ort.meta["matching"] = {"M": {"scaled": "m", "runner_size": 64, "ort_size": 200}}
    row = ext.compare([ort], [_runner()]).iloc[0]
    assert row["matching"] == "M m 64->200" and row["verdict_withheld"] == "none"
    assert row["speedup_D_over_B_ort_pairs"] == "1.500"
    # the hand-over gaps: B_ort's tasks end at 0.6 of its makespan, D's at a third
    assert row["gap_B_ort_ms"] == pytest.approx(6.0, rel=0.01) and row["gap_D_ms"] == pytest.approx(6.67, rel=0.01)
