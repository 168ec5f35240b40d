"""The interference evidence in the analysis: the bias bound for a known
share, the per-trial rule and the per-relation share of hit rounds."""

from __future__ import annotations

import json
import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

from hxfuse.analysis import metrics as mx
from hxfuse.analysis import stats as st
from hxfuse.runner.records import parse_records


def test_bias_bound_from_share_known_answers():
    x = np.array([0.9, 1.0, 1.0, 1.1, 1.2])  # median 1.0, MAD 0.1
    assert st.median_bias_bound_from_share(x, 0.0) == 0.0
    c = 0.2
    expected = 1.4826 * 0.1 * NormalDist().inv_cdf(1 / (2 * (1 - c))) / 1.0
    assert st.median_bias_bound_from_share(x, c) == pytest.approx(expected, rel=1e-12)
    assert st.median_bias_bound_from_share(x, 0.5) == math.inf
    assert math.isnan(st.median_bias_bound_from_share(x, math.nan))
    assert math.isnan(st.median_bias_bound_from_share(x[:2], 0.1))
    # with the MAD share as c it is the old bound
    c_mad = st.contamination(x, 0.03)
    assert st.median_bias_bound_from_share(x, c_mad) == pytest.approx(st.median_bias_bound(x, 0.03))


def test_share_falls_back_to_the_mad_proxy():
    x = np.r_[np.ones(19), 5.0] + np.linspace(0, 0.01, 20)
    assert st.interference_share(x, 0.25) == (0.25, "measured")
    assert st.interference_share(x, None) == (st.contamination(x), "mad")
    share, source = st.interference_share(x, math.nan, 0.03)
    assert source == "mad" and share == pytest.approx(0.05)
    # the relation's bias rests on the measured share where there is one
    assert st.relation_bias(x, None, 0.03) == (st.median_bias_bound(x, 0.03), pytest.approx(0.05), "mad")
    assert st.relation_bias(x, 0.0, 0.03) == (0.0, 0.0, "measured")
    wide = np.linspace(0.9, 1.1, 21)  # spread enough for 40% hit rounds to matter
    b, c, source = st.relation_bias(wide, 0.4, 0.03)
    assert source == "measured" and c == 0.4 and b == pytest.approx(st.median_bias_bound_from_share(wide, 0.4))
    assert b > 0.015


def _with_evidence(records, other_of):
    """Adds a runner ``interference`` object to every trial: other_of(trial) ns."""
    out = []
    for r in records:
        if r["record"] == "trial":
            r = r | {"interference": {"involuntary_switches": 3, "other_cpu_ns": other_of(r), "span_ns": 1}}
            r["tasks"] = [t | {"involuntary_switches": None if r["empty"] else 0} for t in r["tasks"]]
        out.append(r)
    return out


def _table(records):
    return mx.trial_metrics(parse_records([json.dumps(r) for r in records]))


def test_rule_and_round_shares(synth):
    recs = synth.synthetic_run(rounds=10, warmup=1)
    # group B's trials in rounds 0-3 lost 20% of their makespan to other
    # work; every other trial saw 2 us of housekeeping
    tm = _table(
        _with_evidence(recs, lambda r: int(0.2 * r["makespan_ns"]) if r["group"] == "B" and r["round"] < 4 else 2000)
    )
    m = mx.measured(tm)
    hit = (m["group"] == "B") & (m["round"] < 4)
    assert (m.loc[hit, "interfered"] == 1).all() and (m.loc[~hit, "interfered"] == 0).all()
    assert m["other_cpu_share"].max() == pytest.approx(0.2, rel=1e-3)
    assert (m["task_involuntary_switches"] == 0).all() and (m["involuntary_switches"] == 3).all()
    shares = mx.interfered_round_shares(tm, "mvd")
    assert shares == {"D/A": 0.0, "D/B": 0.4, "D/C": 0.0, "C/A": 0.0, "B/A": 0.4}


def test_displaced_time_is_what_did_not_fit_into_idle_cores():
    # group A on 2 cores: one task kept one core busy for 10 ms, another
    # process took 1 ms, which fits into the idle core: nothing displaced
    assert mx.displaced_cpu_ns([1e6], [11e6], [10e6], 2.0, lag_ns=0.0)[0] == 0.0
    # both cores saturated (busy = 2 x span): all of it displaced the runner
    assert mx.displaced_cpu_ns([1e6], [20e6], [10e6], 2.0, lag_ns=0.0)[0] == pytest.approx(1e6)
    # partly: 1.5 ms idle left, 4 ms of other work: 2.5 ms displaced
    assert mx.displaced_cpu_ns([4e6], [18.5e6], [10e6], 2.0, lag_ns=0.0)[0] == pytest.approx(2.5e6)
    # idle below the reading's lag is not idle: 1.5 ms "idle" per core with a
    # 4 ms lag -> all 4 ms displaced
    assert mx.displaced_cpu_ns([4e6], [18.5e6], [10e6], 2.0)[0] == pytest.approx(4e6)
    # unknown busy time: no idle assumed (worst case); unknown other: NaN
    assert mx.displaced_cpu_ns([1e6], [np.nan], [10e6], 2.0)[0] == pytest.approx(1e6)
    assert np.isnan(mx.displaced_cpu_ns([np.nan], [20e6], [10e6], 2.0)[0])


def test_displacement_bias_uses_the_measured_magnitudes():
    rng = np.random.default_rng(2)
    x = 1.5 * (1 + 0.03 * rng.standard_normal(100))
    zero = np.zeros(100)
    # nothing displaced: no bias
    assert st.displacement_bias(x, zero, zero) == (0.0, 0.0, 0.0)
    # every Y trial displaced by 2%: the undisturbed ratios are 2% lower at
    # most, so the median is, and only on that side (a yes/no flag would
    # count every round as hit: Huber's bound inf)
    down, up, c = st.displacement_bias(x, np.full(100, 0.02), zero)
    assert down == pytest.approx(1 / 0.98 - 1) and up == 0.0 and c == 1.0
    assert st.median_bias_bound_from_share(x, 1.0) == math.inf
    # an unknown share: no bound from magnitudes
    assert all(math.isnan(v) for v in st.displacement_bias(x, np.r_[np.nan, zero[1:]], zero))


def test_displacement_bias_known_answer_for_the_sample_median():
    # x = 1..101 (median 51); the ten largest rounds' Y trials displaced by
    # 99%: undisturbed they may lie near 0, so the lower ends' median is the
    # 51st of {ten values near 0 or 1} + {1..91} = 41: b_down = 51/41 - 1.
    # Rounds displaced on X raise only the upper side.  The former bound
    # (min over D of D + Huber(c(D)), symmetric) gave 0.229 on both sides
    # here: below the 0.244 the sample's median can really have moved (Huber's
    # bound is for a normal population), above the 0.196 on the upper side.
    x = np.arange(1.0, 102.0)
    down = np.r_[np.zeros(91), np.full(10, 0.99)]
    # the X trials of the rounds 41..50, just below the median, displaced by
    # half: undisturbed those ratios may be 82..100, and the upper ends'
    # median is the 51st of {1..40} + {51..101} + {82, 84, .., 100} = 61;
    # rounds below the median moved up without crossing it would not count
    up = np.r_[np.zeros(40), np.full(10, 0.5), np.zeros(51)]
    b_down, b_up, c = st.displacement_bias(x, down, up)
    assert b_down == pytest.approx(51 / 41 - 1)
    assert b_up == pytest.approx(61 / 51 - 1)
    assert st.displacement_bias(x, np.zeros(101), np.r_[np.full(10, 0.5), np.zeros(91)])[1] == 0.0
    assert c == pytest.approx(20 / 101)
    # half the rounds displaced by their whole length: no bound on that side
    whole = np.r_[np.ones(51), np.zeros(50)]
    assert st.displacement_bias(x, whole, np.zeros(101))[0] == math.inf
    # a share above 1 (two cores of other work over the span) is their whole length
    assert st.displacement_bias(x, np.r_[np.full(51, 1.7), np.zeros(50)], np.zeros(101))[0] == math.inf


def test_widen_by_sides():
    e = st.Estimate(1.0, 0.98, 1.02, 100)
    w = st.widen(e, (0.01, 0.05))
    assert w.lo == pytest.approx(0.98 / 1.01) and w.hi == pytest.approx(1.02 * 1.05)
    assert st.widen(e, (math.inf, 0.0)) == st.Estimate(1.0, 0.0, 1.02, 100)
    assert st.widen(e, (math.nan, 0.0)) == e and st.widen(e, 0.01) == st.widen(e, (0.01, 0.01))


def test_round_shifts_carry_each_trials_direction():
    # speedup D over A = T_A / T_D: a displaced A trial can only have raised
    # it (down side), a displaced D trial only lowered it (up side)
    rows = []
    for rnd in range(3):
        for g, share in (("A", 0.1 * rnd), ("B", 0.0), ("C", 0.0), ("D", 0.05)):
            rows.append(
                dict(
                    workload="mv",
                    group=g,
                    round=rnd,
                    replicate=1,
                    warmup=False,
                    empty=False,
                    makespan_ns=1e6,
                    displaced_share=share,
                    trial_id=len(rows),
                )
            )
    sh = mx.round_shifts(pd.DataFrame(rows), "mv")
    assert list(sh["shift_down_D_over_A"]) == pytest.approx([0.0, 0.1, 0.2])
    assert list(sh["shift_up_D_over_A"]) == pytest.approx([0.05, 0.05, 0.05])


def test_threshold_floor_and_resolution():
    assert mx.interference_threshold_ns(1e9) == pytest.approx(1.5e7)
    assert mx.interference_threshold_ns(1e5) == mx.INTERFERENCE_FLOOR_NS
    assert mx.interference_threshold_ns(1e5, 1e7) == 1e7  # /proc/stat's 10 ms


def test_no_evidence_means_unknown_not_clean(synth):
    tm = _table(synth.synthetic_run(rounds=4, warmup=0))
    assert tm["interfered"].isna().all() and tm["other_cpu_ns"].isna().all()
    assert all(math.isnan(v) for v in mx.interfered_round_shares(tm, "mvd").values())
    # a platform that cannot read other work writes null: unknown too
    tm = _table(_with_evidence(synth.synthetic_run(rounds=4, warmup=0), lambda r: None))
    assert tm["interfered"].isna().all()
