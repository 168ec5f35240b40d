"""One test per row of the plan's section 6 table, the fall-backs, and the
known answers that show the verdicts can fail: an effect below the minimum,
replicates that disagree, wall overlap without progress."""

import json

import pandas as pd
import pytest

from hxfuse import aggregate as ag
from hxfuse import verdicts as vd
from hxfuse.io import parse_records
from hxfuse.stats import Estimate

FASTER = Estimate(1.5, 1.3, 1.7, 30)  # X < Y: interval above 1 + m
SLOWER = Estimate(0.8, 0.7, 0.9, 30)  # X > Y: interval below 1 - m
SAME = Estimate(1.005, 0.99, 1.02, 30)  # X ~ Y: interval inside 1 +/- m
WIDE = Estimate(1.02, 0.95, 1.08, 30)  # X ? Y: crosses the band's edges
PAR = Estimate(1.9, 1.8, 2.0, 30)  # engines made progress at once
SERIAL = Estimate(1.0, 0.98, 1.02, 30)  # time sharing: parallelism ~1


def test_relation_needs_the_minimum_effect():
    assert vd.relation(FASTER) == "<"
    assert vd.relation(SLOWER) == ">"
    assert vd.relation(SAME) == "~"
    assert vd.relation(WIDE) == "?"
    # excludes 1 but not the band: an effect smaller than m is not a difference
    assert vd.relation((1.02, 1.01, 1.025)) == "~"
    assert vd.relation((1.04, 1.01, 1.06)) == "?"
    assert vd.relation((1.05, 1.031, 1.07)) == "<"
    assert vd.relation((1.05, 1.031, 1.07), min_effect=0.05) == "?"
    assert vd.relation(None) is None
    assert vd.relation(Estimate(float("nan"), float("nan"), float("nan"), 0)) is None


def test_row_d_faster_than_c_with_progress_overlap():
    v = vd.classify({"D/A": SAME, "D/B": SLOWER, "D/C": FASTER, "C/A": SLOWER}, PAR, wall_overlap=0.8)
    assert v.key == "D<C+overlap" and v.progress_overlap is True
    assert v.conclusion == "internal multi-engine orchestration has net benefit"
    # the same speedups with parallelism ~1: the spans overlap but the engines
    # took turns, so no "timeline shows overlap"
    v2 = vd.classify({"D/A": SAME, "D/B": SLOWER, "D/C": FASTER, "C/A": SLOWER}, SERIAL, wall_overlap=1.0)
    assert v2.progress_overlap is False and "D<C+overlap" not in v2.matches


def test_row_d_faster_than_a_and_like_b():
    v = vd.classify({"D/A": FASTER, "D/B": SAME, "D/C": SAME, "C/A": SAME}, SERIAL, wall_overlap=0.0)
    assert v.key == "D<A,D~B" and v.d_equiv_b
    assert v.result == "D < A and D ~ B"


def test_d_like_b_is_said_when_it_holds():
    v = vd.classify({"D/A": FASTER, "D/B": SAME, "D/C": FASTER, "C/A": SAME}, PAR, wall_overlap=0.9)
    assert v.key == "D<C+overlap" and v.result.endswith("; D ~ B") and v.d_equiv_b
    assert v.matches == ("D<C+overlap", "D<A,D~B")


def test_row_d_faster_than_b_and_c():
    v = vd.classify({"D/A": FASTER, "D/B": FASTER, "D/C": FASTER, "C/A": FASTER}, PAR, wall_overlap=0.9)
    assert v.key == "D<B,D<C"
    assert "D<C+overlap" in v.matches


def test_row_c_faster_than_a_and_d_like_c():
    v = vd.classify({"D/A": FASTER, "D/B": FASTER, "D/C": SAME, "C/A": FASTER}, SERIAL, wall_overlap=0.05)
    assert v.key == "C<A,D~C"


def test_row_engines_overlap_but_d_no_faster():
    v = vd.classify({"D/A": SAME, "D/B": SLOWER, "D/C": SLOWER, "C/A": FASTER}, PAR, wall_overlap=0.7)
    assert v.key == "overlap,D no faster"
    # D ~ C and D ~ A with the spans overlapping: the overlap bought nothing
    v2 = vd.classify({"D/A": SAME, "D/B": SAME, "D/C": SAME, "C/A": SAME}, SERIAL, wall_overlap=1.0)
    assert v2.key == "overlap,D no faster"
    # no wall overlap: not this row
    v3 = vd.classify({"D/A": SLOWER, "D/B": SLOWER, "D/C": SLOWER, "C/A": SAME}, SERIAL, wall_overlap=0.0)
    assert v3.key == "no-match"


def test_no_difference_anywhere():
    v = vd.classify({"D/A": SAME, "D/B": SAME, "D/C": SAME, "C/A": SAME}, SERIAL, wall_overlap=0.0)
    assert v.key == "no-difference"


def test_undetermined_when_an_interval_crosses_the_band():
    v = vd.classify({"D/A": WIDE, "D/B": SAME, "D/C": WIDE, "C/A": SAME}, SERIAL, wall_overlap=0.0)
    assert v.key == "undetermined" and not v.matches
    assert "D/A" in v.reasons[0] and "D/C" in v.reasons[0]


def test_noise_and_disturbance_withhold_the_row():
    rows = {"D/A": FASTER, "D/B": FASTER, "D/C": FASTER, "C/A": FASTER}
    v = vd.classify(rows, PAR, wall_overlap=0.9, noise=["robust CV of group A is 0.30 > 0.10"])
    assert v.key == "inconclusive" and not v.matches
    assert v.reasons == ("robust CV of group A is 0.30 > 0.10",)
    v2 = vd.classify(rows, PAR, wall_overlap=0.9, disturbances=["loaded before (...)"])
    assert v2.key == "inconclusive" and v2.reasons == ("loaded before (...)",)


def test_replicates_disagreeing_in_direction_are_inconclusive():
    rows = {"D/A": FASTER, "D/B": SAME, "D/C": FASTER, "C/A": SAME}
    agree = {"D/A": [1.4, 1.5, 1.6], "D/C": [1.2, 1.3, 1.25]}
    assert vd.classify(rows, PAR, 0.9, replicate_speedups=agree).key == "D<C+overlap"
    split = {"D/A": [1.4, 1.5, 1.6], "D/C": [1.19, 0.95, 1.02]}
    v = vd.classify(rows, PAR, 0.9, replicate_speedups=split)
    assert v.key == "inconclusive"
    assert v.reasons == ("replicates disagree on D vs C (median speedups 1.190, 0.950, 1.020)",)
    # within the band one way and outside the other is not a disagreement in direction
    mild = {"D/C": [1.19, 1.01, 1.02]}
    assert vd.classify(rows, PAR, 0.9, replicate_speedups=mild).key == "D<C+overlap"


def test_missing_group_b_makes_its_rows_inapplicable():
    v = vd.classify({"D/A": FASTER, "D/C": FASTER, "C/A": SAME}, PAR, wall_overlap=0.5)
    assert v.key == "D<C+overlap"
    assert v.relations["D/B"] is None and not v.d_equiv_b


# ------------------------------------------------- known answers, end to end
US = 1000
PLAN = {"M": 100 * US, "V": 80 * US, "D": 60 * US}


def _table(synth, point="p", replicate=None, **kw):
    recs = synth.synthetic_run(PLAN, **kw)
    t = ag.trial_table(parse_records([json.dumps(r) for r in recs]), {"point": point})
    if replicate is not None:
        t["replicate"] = replicate
    return t


def _d(summary):
    return summary[(summary["workload"] == "mvd") & (summary["group"] == "D")].iloc[0]


def test_d_one_percent_faster_than_c_is_no_difference(synth):
    # C and D run the same tasks; D is 1% faster in every round with a tight
    # interval that excludes 1: below the 3% minimum effect, so "D ~ C".
    t = _table(
        synth, rounds=30, warmup=1, jitter=0.001, group_scale={"C": 0.4 * 1.01, "D": 1.0}, groups=("A", "B", "C", "D")
    )
    # make C's tasks run one after another like D's but 1% longer: scale the
    # makespans directly, pairing stays per round
    t = t.copy()
    d_rows = (t["group"] == "D") & ~t["empty"]
    c_rows = (t["group"] == "C") & ~t["empty"]
    d_ms = t.loc[d_rows].set_index("round")["makespan_ns"]
    t.loc[c_rows, "makespan_ns"] = t.loc[c_rows, "round"].map(d_ms * 1.01).to_numpy()
    s = ag.summarize(t, n_resamples=500)
    d = _d(s)
    assert d["speedup_over_C_lo"] > 1.0  # the old rule ("interval excludes 1") would call D < C
    assert d["speedup_over_C"] == pytest.approx(1.01, abs=1e-6)
    assert "D~C" in d["relations"]
    assert d["verdict_key"] != "D<C+overlap"


def test_disagreeing_replicates_give_inconclusive(synth):
    # replicate 0: D clearly faster than C; replicate 1: clearly slower
    r0 = _table(synth, replicate=0, rounds=20, warmup=0, jitter=0.002, group_scale={"D": 0.8}, seed=1)
    r1 = _table(synth, replicate=1, rounds=20, warmup=0, jitter=0.002, group_scale={"D": 3.0}, seed=2)
    s = ag.summarize(pd.concat([r0, r1], ignore_index=True), n_resamples=500)
    d = _d(s)
    assert d["n_replicates"] == 2 and d["n"] == 40
    assert d["speedup_over_C_rep_min"] < 0.97 < 1.03 < d["speedup_over_C_rep_max"]
    assert d["verdict_key"] == "inconclusive"
    assert "replicates disagree on D vs C" in d["inconclusive_reason"]
    # each replicate alone is conclusive
    for r in (r0, r1):
        assert _d(ag.summarize(r, n_resamples=200))["verdict_key"] != "inconclusive"


def test_replicates_widen_the_interval(synth):
    # three replicates, one of which ran D 10% slower (the machine changed
    # between invocations): pooled rounds hide it (the median stays in the
    # majority's cluster, tight interval), the hierarchical bootstrap, which
    # draws that replicate twice in about a quarter of its resamples, does not
    r0 = _table(synth, replicate=0, rounds=30, warmup=0, jitter=0.002, seed=1)
    r1 = _table(synth, replicate=1, rounds=30, warmup=0, jitter=0.002, seed=3)
    r2 = _table(synth, replicate=2, rounds=30, warmup=0, jitter=0.002, group_scale={"D": 1.1}, seed=2)
    both = pd.concat([r0, r1, r2], ignore_index=True)
    hier = _d(ag.summarize(both, n_resamples=1000))
    pooled = _d(ag.summarize(both.drop(columns="replicate"), n_resamples=1000))
    assert pooled["makespan_hi_ns"] < 1.03 * pooled["makespan_ns"]
    assert hier["makespan_hi_ns"] > 1.08 * hier["makespan_ns"]
    assert hier["makespan_rep_spread"] == pytest.approx(0.1, rel=0.15)


def test_quota_w2_like_point_is_row_5(synth):
    # Two V workers take M's core: every span overlaps fully (wall overlap 1)
    # but the tasks share the cores, so D takes as long as running them in
    # turn: D ~ A ~ C and eta ~ 0.  Old rule: "D < C and the timeline shows
    # overlap"; now: engines overlap but D is no faster.
    t = _table(
        synth,
        rounds=30,
        warmup=1,
        jitter=0.002,
        group_scale={"D": 240 / 100, "B": 240 / 100},
        cpu_share={"D": 100 / 240, "B": 100 / 240},
    )
    s = ag.summarize(t, n_resamples=500)
    d = _d(s)
    assert d["overlap_max"] == pytest.approx(1.0)
    assert d["parallelism"] == pytest.approx(1.0, abs=0.05)
    assert abs(d["eta_vs_alone"]) < 0.1
    assert d["progress_overlap"] is False or d["progress_overlap"] == False  # noqa: E712
    assert d["verdict_key"] == "overlap,D no faster"
