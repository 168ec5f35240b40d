import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from hxfuse.analysis import aggregate as ag
from hxfuse.runner.records import parse_records

US = 1000
PLAN = {"M": 100 * US, "V": 80 * US, "D": 60 * US}


DOC = (Path(__file__).resolve().parents[2] / "docs" / "columns.md").read_text()


def generic_name(col):
    """Map a concrete column to its placeholder form in docs/columns.md."""
    col = re.sub(r"^[MVD]_", "{T}_", col)
    col = re.sub(r"^busy_\w+_ns$", "busy_{e}_ns", col)
    col = re.sub(r"^util_\w+$", "util_{e}", col)
    if col != "overlap_max":
        col = re.sub(r"^overlap_\w+$", "overlap_{a}_{b}", col)
    col = re.sub(r"^speedup_(e2e_)?over_[ABC]", r"speedup_\1over_{Y}", col)
    return col


def assert_documented(columns, point_cols=("point",)):
    missing = [c for c in columns if c not in point_cols and f"`{c}`" not in DOC and f"`{generic_name(c)}`" not in DOC]
    assert not missing, f"columns missing from docs/columns.md: {missing}"


def run_of(records):
    return parse_records([json.dumps(r) for r in records])


def table(synth, point, **kw):
    return ag.trial_table(run_of(synth.synthetic_run(PLAN, **kw)), point)


def test_trial_table_adds_point_and_provenance(synth):
    t = table(synth, {"point": "p0", "m_shape": [64, 64, 64], "ratio": 1.25}, rounds=2, warmup=1)
    assert list(t.columns[:3]) == ["point", "m_shape", "ratio"]
    assert (t["m_shape"] == "[64, 64, 64]").all()  # hashable, CSV-friendly
    assert (t["online_cores"] == 4).all() and (t["target"] == "host").all()
    assert set(t.loc[t["workload"] == "mvd", "k_engines"]) == {3}
    assert {"M_slowdown", "stp", "antt", "fairness", "makespan_ns", "trial_id"} <= set(t.columns)
    assert t["warmup"].any()
    assert ag.infer_point_cols(t) == ["point", "m_shape", "ratio"]
    # A swept runner option that meta also records: the point's value wins.
    w = ag.trial_table(run_of(synth.synthetic_run(PLAN, rounds=1, warmup=0)), {"wait": "spin"})
    assert (w["wait"] == "spin").all() and list(w.columns).count("wait") == 1
    with pytest.raises(ValueError, match="clash"):
        ag.trial_table(run_of(synth.synthetic_run(PLAN, rounds=1, warmup=0)), {"makespan_ns": 1})


def test_summarize_known_answers(synth):
    t = table(synth, {"point": "p0"}, rounds=6, warmup=2)
    # Warm-up trials are wildly slow; they must not move any statistic.
    t.loc[t["warmup"], "makespan_ns"] *= 10
    s = ag.summarize(t, n_resamples=200)
    mvd = s[s["workload"] == "mvd"].set_index("group")
    assert list(mvd.index) == ["A", "B", "C", "D"]
    assert set(s.loc[s["group"] == "alone", "workload"]) == {"M", "V", "D"}
    d = mvd.loc["D"]
    assert d["n"] == 6 and d["n_warmup"] == 2
    assert d["makespan_ns"] == 106 * US
    assert (d["makespan_lo_ns"], d["makespan_hi_ns"]) == (106 * US, 106 * US)
    assert d["t_serial_ns"] == 240 * US and d["t_ideal_ns"] == 100 * US and d["t_bound_ns"] == 100 * US
    assert d["t_serial_measured_ns"] == 249 * US
    assert d["device_ns"] == 101 * US
    assert d["eta_vs_alone"] == pytest.approx((240 - 101) / (240 - 100))
    assert d["eta_vs_A"] == pytest.approx((249 - 106) / (249 - 100))
    assert d["speedup_over_A"] == pytest.approx(249 / 106)
    assert d["speedup_over_C"] == pytest.approx(246 / 106)
    assert d["speedup_over_B"] == pytest.approx(105 / 106)
    assert mvd.loc["C", "speedup_over_A"] == pytest.approx(249 / 246)
    assert mvd.loc["B", "speedup_over_A"] == pytest.approx(249 / 105)
    assert math.isnan(mvd.loc["A", "speedup_over_A"])
    assert d["M_slowdown"] == pytest.approx(1.005)
    assert d["overlap_max"] == 1.0 and mvd.loc["A", "overlap_max"] == 0.0
    assert d["control_overhead_ns"] == 1000 + 2000 + 500 + 10 + 500 + 2000
    assert d["makespan_outliers"] == 0 and d["makespan_cv"] == 0.0
    # Every task ran its whole span (cpu_ns = duration): D's three tasks made
    # progress at once, parallelism = 240 us of CPU time / 106 us makespan.
    assert d["parallelism"] == pytest.approx(240 / 106)
    assert mvd.loc["A", "parallelism"] == pytest.approx(240 / 249)
    assert d["eta_vs_bound"] == pytest.approx(d["eta_vs_alone"])  # k = 3 engines: bound = max T_i
    # D ~ B: what existing concurrency reaches leads, D < C beside it
    assert d["verdict_key"] == "D<A,D~B"
    assert d["verdict_matches"] == "D<A,D~B,D<C+overlap"
    # D/B = 105/106 and C/A = 249/246: inside the 3% band, no difference.
    assert d["relations"] == "D<A D~B D<C C~A"
    assert bool(d["d_equiv_b"]) and d["d_vs_b"] == "~"
    assert d["verdict"] == "D < A and D ~ B; beside it: D < C and the timeline shows overlap"
    assert d["next_step"] == "find placement/quota/sync granularity still to improve"
    assert mvd.loc["A", "verdict"] == ""
    assert bool(d["point_ok"]) and d["excluded_reason"] == ""
    assert_documented(s.columns)
    assert_documented(t.columns)
    assert_documented(ag.verdict_table(s).columns)


def test_verdict_with_noise_and_contention(synth):
    t = table(synth, {"point": "p1"}, rounds=12, warmup=1, jitter=0.01, group_scale={"B": 1.3})
    s = ag.summarize(t, n_resamples=500)
    v = ag.verdict_table(s)
    assert list(v["point"]) == ["p1"] and list(v["workload"]) == ["mvd"]
    assert v.loc[0, "verdict_key"] == "D<B,D<C"
    assert v.loc[0, "speedup_over_B_lo"] > 1.0


def test_failed_points_never_enter_a_speedup(synth):
    good = table(synth, {"point": "good"}, rounds=4, warmup=1)
    bad = table(synth, {"point": "bad"}, rounds=4, warmup=1)
    good["check_ok"] = True
    bad["check_ok"] = False
    # A trial checksum mismatch also excludes a point, even with check_ok true.
    mism = ag.trial_table(
        run_of(synth.synthetic_run(PLAN, rounds=4, warmup=1, checksum_fail=[(2, "C")])), {"point": "mism"}
    )
    mism["check_ok"] = True
    trials = pd.concat([good, bad, mism], ignore_index=True)
    s = ag.summarize(trials, n_resamples=100)
    assert set(s["point"]) == {"good", "bad", "mism"}
    for p in ("bad", "mism"):
        rows = s[s["point"] == p]
        assert not rows["point_ok"].any()
        cols = ["speedup_over_A", "speedup_over_B", "speedup_over_C", "speedup_e2e_over_A", "eta_vs_A", "eta_vs_alone"]
        assert rows[cols].isna().all().all()
        assert set(rows.loc[rows["group"] == "D", "verdict_key"]) == {"excluded"}
    assert s[s["point"] == "good"]["speedup_over_A"].notna().any()
    fp = ag.failed_points(trials)
    assert list(fp["point"]) == ["bad", "mism"]
    assert "check_ok is false" in fp.iloc[0]["excluded_reason"]
    assert "checksum mismatch" in fp.iloc[1]["excluded_reason"]


def test_missing_group_b(synth):
    t = table(synth, {"point": "noB"}, rounds=4, warmup=0, groups=("A", "C", "D"))
    s = ag.summarize(t, n_resamples=100)
    d = s[(s["workload"] == "mvd") & (s["group"] == "D")].iloc[0]
    assert math.isnan(d["speedup_over_B"])
    assert "B" not in d["relations"]
    assert d["verdict_key"] == "D<C+overlap"


def _meta_with_prep(synth, prep_ns):
    tasks = synth.meta_record()["tasks"]
    tasks["M"] = tasks["M"] | {"prep_ns": prep_ns}
    return {"tasks": tasks}


def _replicate(synth, rep, prep_ns, **kw):
    run = run_of(synth.synthetic_run(PLAN, meta=_meta_with_prep(synth, prep_ns), seed=1 + rep, **kw))
    return ag.trial_table(run, {"point": "p", "replicate": rep})


def test_end_to_end_speedups_count_preparation_once_per_trial(synth):
    """Known answer: M's packing (prep) is done once before timing and is the
    same for every group of a replicate; the end-to-end ratio adds it to both
    sides of each round's ratio.  Makespans (conftest's schedule): A 249 us,
    B 105, C 246, D 106; prep 100 us."""
    t = _replicate(synth, 0, 100 * US, rounds=6, warmup=1)
    assert set(t.loc[t["workload"] == "mvd", "prep_ns"]) == {100 * US}
    s = ag.summarize(t, n_resamples=200)
    mvd = s[s["workload"] == "mvd"].set_index("group")
    d = mvd.loc["D"]
    assert d["speedup_over_A"] == pytest.approx(249 / 106)  # makespan: prep not counted
    assert d["speedup_e2e_over_A"] == pytest.approx((249 + 100) / (106 + 100))
    assert (d["speedup_e2e_over_A_lo"], d["speedup_e2e_over_A_hi"]) == pytest.approx(((349 / 206),) * 2)
    assert d["speedup_e2e_over_B"] == pytest.approx((105 + 100) / (106 + 100))
    assert d["speedup_e2e_over_C"] == pytest.approx((246 + 100) / (106 + 100))
    assert mvd.loc["C", "speedup_e2e_over_A"] == pytest.approx((249 + 100) / (246 + 100))
    assert mvd.loc["B", "speedup_e2e_over_A"] == pytest.approx((249 + 100) / (105 + 100))
    assert math.isnan(mvd.loc["A", "speedup_e2e_over_A"])
    v = ag.verdict_table(s)
    assert v.loc[0, "speedup_e2e_over_A"] == pytest.approx(349 / 206)
    assert_documented(s.columns)


def test_end_to_end_speedups_pair_within_a_replicate(synth):
    """Two replicates with different preparation (100 us and 20 us): each
    round's ratio uses its own replicate's prep, and the median pools the
    rounds (6 each: the two middle values are one of each).  On log(ratio),
    as every ratio: the median of an even count is then the geometric mean
    of the two middle ratios."""
    t = pd.concat(
        [_replicate(synth, 0, 100 * US, rounds=6, warmup=0), _replicate(synth, 1, 20 * US, rounds=6, warmup=0)],
        ignore_index=True,
    )
    s = ag.summarize(t, n_resamples=200)
    d = s[(s["workload"] == "mvd") & (s["group"] == "D")].iloc[0]
    r0, r1 = 349 / 206, 269 / 126
    assert d["speedup_e2e_over_A"] == pytest.approx((r0 * r1) ** 0.5)
    assert d["speedup_e2e_over_A_lo"] == pytest.approx(r0) and d["speedup_e2e_over_A_hi"] == pytest.approx(r1)
    assert d["speedup_over_A"] == pytest.approx(249 / 106)


def test_slowdowns_use_each_replicates_own_alone_times(synth):
    """SD_i = T_i^X / T_i with T_i the median alone duration of the trial's
    own replicate (docs/metrics.md, "Which alone time").  Replicate 1 runs
    everything, the alone runs included, 1.2x slower (another frequency):
    D's M completes 500 ns (the entry) after its span, so its slowdown is
    100.5/100 in replicate 0 and 120.5/120 in replicate 1.  Against the
    point's pooled alone median (110 us) they would be 0.914 and 1.095."""
    slow = {g: 1.2 for g in ("A", "B", "C", "D", "alone")}
    t = pd.concat(
        [
            ag.trial_table(run_of(synth.synthetic_run(PLAN, rounds=6, warmup=0)), {"point": "p", "replicate": 0}),
            ag.trial_table(
                run_of(synth.synthetic_run(PLAN, rounds=6, warmup=0, group_scale=slow)), {"point": "p", "replicate": 1}
            ),
        ],
        ignore_index=True,
    )
    d = t[(t["workload"] == "mvd") & (t["group"] == "D") & ~t["empty"]]
    assert d.loc[d["replicate"] == 0, "M_slowdown"].to_numpy() == pytest.approx([100.5 / 100] * 6)
    assert d.loc[d["replicate"] == 1, "M_slowdown"].to_numpy() == pytest.approx([120.5 / 120] * 6)
    s = ag.summarize(t, n_resamples=100)
    sd = s[(s["workload"] == "mvd") & (s["group"] == "D")].iloc[0]
    assert sd["M_slowdown"] == pytest.approx((100.5 / 100 + 120.5 / 120) / 2, abs=1e-9)
    # the point-level references stay pooled over the replicates (both sides
    # of eta are medians of the point): alone M median 110 us
    m_alone = s[(s["workload"] == "M") & (s["group"] == "alone")].iloc[0]
    assert m_alone["M_duration_ns"] == pytest.approx(110 * US)
