"""One test per row of the plan's section 6 table, the fall-backs, and the
known answers that show the verdicts can fail: an effect below the minimum,
replicates that disagree, wall overlap without progress."""

import json

import pandas as pd
import pytest

from hxfuse.analysis import aggregate as ag
from hxfuse.analysis import verdicts as vd
from hxfuse.runner.records import parse_records
import math

from hxfuse.analysis import stats as st
from hxfuse.analysis.stats import Estimate

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
    assert v.conclusion.startswith("internal overlap makes D faster than the fused serial entry C")
    assert "net benefit" not in v.conclusion  # no benefit over existing concurrency is claimed
    # D slower than B is said beside the row, which does not read D/B
    assert v.result == "D < C and the timeline shows overlap; D > B (existing concurrency is faster)"
    # the same speedups with parallelism ~1: the spans overlap but the engines
    # took turns, so no "timeline shows overlap"
    v2 = vd.classify({"D/A": SAME, "D/B": SLOWER, "D/C": FASTER, "C/A": SLOWER}, SERIAL, wall_overlap=1.0)
    assert v2.progress_overlap is False and "D<C+overlap" not in v2.matches


def test_row_d_faster_than_a_and_like_b():
    v = vd.classify({"D/A": FASTER, "D/B": SAME, "D/C": SAME, "C/A": SAME}, SERIAL, wall_overlap=0.0)
    assert v.key == "D<A,D~B" and v.d_equiv_b
    assert v.result == "D < A and D ~ B; C -> D: D ~ C"
    assert v.conclusion == "resource complementarity works; existing concurrency already covers the main opportunity"


def test_b_leads_the_headline_when_d_like_b():
    # D < C with progress overlap, but B reaches the same: the plan's "D
    # better than A, close to B" leads, the C -> D result beside it
    v = vd.classify({"D/A": FASTER, "D/B": SAME, "D/C": FASTER, "C/A": SAME}, PAR, wall_overlap=0.9)
    assert v.key == "D<A,D~B" and v.d_equiv_b and v.d_vs_b == "~"
    assert v.matches == ("D<A,D~B", "D<C+overlap")
    assert v.result == "D < A and D ~ B; beside it: D < C and the timeline shows overlap"
    assert v.conclusion.endswith(
        "beside it: internal overlap makes D faster than the fused serial entry C (a gain over serial execution only)"
    )
    # the old order (D < C with overlap first) fails this
    assert vd.PRIORITY.index("D<A,D~B") < vd.PRIORITY.index("D<C+overlap")


def test_d_against_b_undetermined_is_said():
    # D < C with overlap while D/B's interval crosses the band: the verdict
    # says that D against B is open, and claims nothing over B
    v = vd.classify({"D/A": WIDE, "D/B": WIDE, "D/C": FASTER, "C/A": SAME}, PAR, wall_overlap=0.9)
    assert v.key == "D<C+overlap" and v.d_vs_b == "?"
    assert v.result.endswith("; D against B undetermined (spans the margin)")
    assert "existing concurrency" not in v.conclusion


@pytest.mark.parametrize("cause", vd.CAUSES)
def test_d_against_b_undetermined_names_its_cause(cause):
    # what would settle D against B differs by cause (more replicates, a
    # quieter machine, longer tasks): the verdict beside the row says which
    d_b = vd.RelationCall("?", 1.0, 0.95, 1.05, reason=f"{cause}: ...", cause=cause)
    v = vd.classify({"D/A": WIDE, "D/B": d_b, "D/C": FASTER, "C/A": SAME}, PAR, wall_overlap=0.9)
    assert v.key == "D<C+overlap"
    assert v.result == f"D < C and the timeline shows overlap; D against B undetermined ({cause})"


def test_only_d_faster_than_b_earns_fusion_over_existing_concurrency():
    v = vd.classify({"D/A": FASTER, "D/B": FASTER, "D/C": FASTER, "C/A": FASTER}, PAR, wall_overlap=0.9)
    assert v.key == "D<B,D<C" and v.conclusion.startswith("fusion adds something over existing concurrency")
    for r in vd.ROWS.values():
        if r.key != "D<B,D<C":
            assert "fusion adds something" not in r.conclusion


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
    # every open relation named with its cause
    assert v.reasons[0].startswith("D/A: ") and v.reasons[1].startswith("D/C: ")
    assert v.result == "undetermined (spans the margin)"


def test_disturbance_withholds_the_row():
    rows = {"D/A": FASTER, "D/B": FASTER, "D/C": FASTER, "C/A": FASTER}
    v2 = vd.classify(rows, PAR, wall_overlap=0.9, disturbances=["loaded before (...)"])
    assert v2.key == "inconclusive" and v2.reasons == ("loaded before (...)",)


def test_replicates_judged_by_their_intervals():
    rows = {"D/A": FASTER, "D/B": SAME, "D/C": FASTER, "C/A": SAME}
    above, below, inside = (1.2, 1.1, 1.3), (0.9, 0.85, 0.95), (1.0, 0.98, 1.02)
    agree = {"D/A": [above, above, above], "D/C": [above, above, above]}
    assert vd.classify(rows, SERIAL, 0.9, replicate_intervals=agree).key == "D<A,D~B"
    # D/A, which the row reads, split across the band: withheld
    split = {"D/A": [above, below, above]}
    v = vd.classify(rows, SERIAL, 0.9, replicate_intervals=split)
    assert v.key == "inconclusive"
    assert v.reasons[0].startswith("replicates disagree on D vs A (their own intervals [1.100, 1.300], [0.850, 0.950]")
    # medians on both sides but one interval reaching into the band: no disagreement
    wide_below = (0.95, 0.9, 1.0)
    assert vd.classify(rows, SERIAL, 0.9, replicate_intervals={"D/A": [above, wide_below]}).key == "D<A,D~B"
    # a split on C/A, which "D < A and D ~ B" does not read, does not withhold it
    assert vd.classify(rows, SERIAL, 0.9, replicate_intervals={"C/A": [above, below, inside]}).key == "D<A,D~B"


def test_margin_aware_relation_far_from_the_band_stays_decided():
    # a bias bound of 3% used to veto this point; widened by 3%, an interval
    # [1.43, 1.60] is still far above 1.03
    far = st.widen(Estimate(1.527, 1.429, 1.597, 120), 0.03)
    # on the log scale: divided and multiplied by 1 + b
    assert far.lo == pytest.approx(1.429 / 1.03) and far.hi == pytest.approx(1.597 * 1.03)
    assert vd.relation(far) == "<"
    # near the edge the same bound makes it undetermined
    near = st.widen(Estimate(1.06, 1.045, 1.075, 120), 0.03)
    assert vd.relation(Estimate(1.06, 1.045, 1.075, 120)) == "<" and vd.relation(near) == "?"
    assert vd.relation(st.widen(Estimate(1.06, 1.045, 1.075, 120), math.inf)) == "?"


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


def test_d_like_b_leads_even_when_d_against_a_is_open():
    # D < C with overlap, D ~ B, D against A undetermined: no "D < A and
    # D ~ B" row, yet the text must not lead with the C -> D result
    v = vd.classify({"D/A": WIDE, "D/B": SAME, "D/C": FASTER, "C/A": SAME}, PAR, wall_overlap=0.9)
    assert v.key == "D<C+overlap"
    assert v.result == "D ~ B; D < C and the timeline shows overlap"
    assert v.conclusion.startswith("existing concurrency (B) reaches what D reaches; ")


def test_overlap_needs_concurrent_progress_where_checkpoints_exist():
    rows = {"D/A": SAME, "D/B": SLOWER, "D/C": FASTER, "C/A": SLOWER}
    both = Estimate(0.8, 0.7, 0.9, 30)
    none = Estimate(0.02, 0.0, 0.05, 30)
    assert vd.classify(rows, PAR, 0.9, concurrent_progress=both, min_time_ns=0.10).key == "D<C+overlap"
    # CPU time says parallel, the checkpoints say the tasks never advanced together
    v = vd.classify(rows, PAR, 0.9, concurrent_progress=none, min_time_ns=0.10)
    assert v.progress_overlap is False and "D<C+overlap" not in v.matches
    # no CPU counters (QuRT: cpu_ns null, parallelism NaN): the checkpoints decide alone
    assert vd.overlap_evidence(None, both, 0.03, 0.10) is True
    assert vd.overlap_evidence(st.NAN_ESTIMATE, none, 0.03, 0.10) is False
    assert vd.overlap_evidence(None, None, 0.03, 0.10) is None
    # occupancy is no veto: parallelism ~1 (launch and wake-up time dilute it
    # at fine granularity) with the checkpoints showing both tasks at full
    # rate for longer than the minimum time is overlap
    assert vd.overlap_evidence(SERIAL, Estimate(54e3, 50e3, 58e3, 30), 0.03, 5e3) is True
    # without checkpoints, parallelism stands in
    assert vd.overlap_evidence(PAR, None, 0.03, 5e3) is True
    assert vd.overlap_evidence(SERIAL, None, 0.03, 5e3) is False
