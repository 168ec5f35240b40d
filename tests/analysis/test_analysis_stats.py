import math

import numpy as np
import pytest

from hxfuse.analysis import stats as st


def test_bootstrap_median_is_seeded_and_brackets():
    rng = np.random.default_rng(3)
    x = rng.normal(100.0, 5.0, size=40)
    a = st.bootstrap_median(x, seed=7)
    b = st.bootstrap_median(x, seed=7)
    assert a == b  # reproducible
    assert a.value == pytest.approx(np.median(x))
    assert a.lo <= a.value <= a.hi
    assert a.n == 40
    assert 95 < a.lo and a.hi < 105


def test_bootstrap_edge_cases():
    assert math.isnan(st.bootstrap_median([]).value)
    one = st.bootstrap_median([5.0])
    assert (one.value, one.lo, one.hi, one.n) == (5.0, 5.0, 5.0, 1)
    const = st.bootstrap_median([3.0] * 10)
    assert (const.lo, const.hi) == (3.0, 3.0)
    assert st.bootstrap_median([1.0, np.nan, 3.0]).n == 2


def test_per_round_ratio_cancels_drift():
    # A drift that affects both groups equally in each round cancels in the
    # per-round ratio (hxfuse.analysis.metrics.paired_speedups): the interval is
    # exactly the constant ratio 2, while either side alone spreads widely.
    drift = np.linspace(1.0, 3.0, 20)
    t_a = 200.0 * drift
    t_d = 100.0 * drift
    est = st.hierarchical_bootstrap_median(t_a / t_d, None)
    assert (est.value, est.lo, est.hi) == pytest.approx((2.0, 2.0, 2.0))
    assert est.excludes(1.0)
    alone = st.bootstrap_median(t_a)
    assert alone.hi - alone.lo > 50.0


def test_cv():
    assert st.cv([1.0, 1.0, 1.0]) == 0.0
    assert st.cv([90.0, 110.0]) == pytest.approx(np.std([90, 110], ddof=1) / 100)
    assert math.isnan(st.cv([1.0]))


def test_mad_outliers_flag_never_drop():
    x = np.array([10.0, 11, 9, 10, 10.5, 9.5, 10.2, 50.0])
    flags = st.mad_outliers(x)
    assert flags.tolist() == [False] * 7 + [True]
    assert len(flags) == len(x)
    # Exactly at the edge: threshold 3.5 * 1.4826 * MAD.
    base = np.array([0.0, -1, 1, -1, 1, 0, 0])  # median 0, MAD 1
    cut = 3.5 * 1.4826
    assert st.mad_outliers(np.append(base, cut - 1e-9))[-1] == False  # noqa: E712
    assert st.mad_outliers(np.append(base, cut + 1e-9))[-1] == True  # noqa: E712
    # MAD of 0: no scale, nothing flagged; NaN never flagged.
    assert not st.mad_outliers([1.0, 1, 1, 1, 5]).any()
    assert not st.mad_outliers([1.0, 2, np.nan, 3]).any()


def test_noise_warnings():
    rng = np.random.default_rng(0)
    tight = {g: 100 * (1 + 0.01 * rng.standard_normal(100)) for g in "ABCD"}
    assert st.noise_warnings(tight) == []
    # one round at 10x the median: the classic CV explodes, the medians do not move
    one = dict(tight, A=np.r_[tight["A"][:99], 1000.0])
    assert st.cv(one["A"]) > 0.8
    assert st.noise_warnings(one) == []
    # the bulk spreads: robust CV 0.3
    loose = dict(tight, A=100 * (1 + 0.3 * rng.standard_normal(100)))
    msgs = st.noise_warnings(loose, cv_threshold=0.1)
    assert len(msgs) == 1 and msgs[0].startswith("robust CV of group A is 0.")
    # a preemption in every tenth round
    often = dict(tight, B=np.where(np.arange(100) % 10 == 0, 300.0, tight["B"]))
    msgs = st.noise_warnings(often)
    assert msgs == ["10% of group B's rounds are outliers (> 5%)"]
    # the same pattern 2% above the median is below a 3% minimum effect
    small = dict(tight, B=np.where(np.arange(100) % 10 == 0, 102.5, 100 + 0.001 * np.arange(100)))
    assert st.noise_warnings(small) != []
    assert st.noise_warnings(small, min_rel=0.03) == []


def test_hierarchical_bootstrap_known_answers():
    # one cluster: exactly the ordinary bootstrap
    x = np.arange(20, dtype=float)
    assert st.hierarchical_bootstrap_median(x, [0] * 20, 300) == st.bootstrap_median(x, 300)
    assert st.hierarchical_bootstrap_median(x, None, 300) == st.bootstrap_median(x, 300)
    # constant clusters at 1, 2, 3: the replicate level alone decides the
    # interval, which must reach both outer clusters' values
    v = np.repeat([1.0, 2.0, 3.0], 10)
    e = st.hierarchical_bootstrap_median(v, np.repeat([0, 1, 2], 10), 2000)
    assert e.value == 2.0 and e.lo == 1.0 and e.hi == 3.0 and e.n == 30
    # unequal sizes are honoured: a cluster of 1 cannot outweigh one of 50
    u = np.r_[np.ones(50), [100.0]]
    e = st.hierarchical_bootstrap_median(u, np.r_[np.zeros(50), [1]], 2000)
    assert e.hi == 1.0 or e.hi == 100.0  # drawn twice (25%): all 100s
    assert st.cluster_medians(u, np.r_[np.zeros(50), [1]]).tolist() == [1.0, 100.0]
    with pytest.raises(ValueError, match="differ in length"):
        st.hierarchical_bootstrap_median([1.0, 2.0], [0], 10)


def test_median_bias_bound_known_answers():
    from statistics import NormalDist

    # bulk: 80 values with MAD 1 around 100 (robust sigma 1.4826); 20 far outliers
    bulk = np.r_[np.full(40, 99.0), np.full(40, 101.0)]
    x = np.r_[bulk, np.full(20, 200.0)]
    med = float(np.median(x))
    mad = float(np.median(np.abs(x - med)))
    assert st.contamination(x) == pytest.approx(0.2)
    want = 1.4826 * mad * NormalDist().inv_cdf(1 / (2 * 0.8)) / med
    assert st.median_bias_bound(x) == pytest.approx(want)
    # no contamination: no bias
    assert st.median_bias_bound(bulk) == 0.0
    # the minimum effect decides what counts as contaminated: 10 rounds 2%
    # off and 10 rounds 10% off a tight bulk; with m = 3% only the latter
    tight = 100 + 0.2 * np.random.default_rng(1).standard_normal(80)
    y = np.r_[tight, np.full(10, 102.0), np.full(10, 110.0)]
    assert st.contamination(y, 0.0) == pytest.approx(0.2)
    assert st.contamination(y, 0.03) == pytest.approx(0.1)


def test_bias_bounds_widen_instead_of_veto():
    rng = np.random.default_rng(5)
    clean = 1.5 * (1 + 0.05 * rng.standard_normal(120))
    assert st.relation_bias(clean, None, 0.03)[0] == 0.0
    # a third of the rounds hit by interference: a bound well above 1.5%,
    # which widens the interval on the log scale (lo / (1 + b), hi (1 + b))
    # rather than vetoing it
    hit = clean.copy()
    hit[::3] *= 1.6
    b = st.relation_bias(hit, None, 0.03)[0]
    assert b > 0.015
    e = st.Estimate(1.5, 1.45, 1.55, 120)
    w = st.widen(e, b)
    assert (w.lo, w.hi) == pytest.approx((1.45 / (1 + b), 1.55 * (1 + b)))
    assert w.lo > 0 and st.widen(st.Estimate(0.2, 0.1, 0.3, 9), 5.0).lo > 0
    assert st.widen(e, float("nan")) == e and st.widen(e, 0.0) == e


def test_t_quantile_and_interval_known_answers():
    # textbook two-sided 95% critical values
    for df, q in ((1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042)):
        assert st.t_quantile(0.95, df) == pytest.approx(q, abs=1e-3)
    assert st.t_quantile(0.90, 2) == pytest.approx(2.920, abs=1e-3)
    lo, hi = st.t_interval([1.0, 1.1, 1.2])
    half = 4.3027 * 0.1 / np.sqrt(3)
    assert (lo, hi) == pytest.approx((1.1 - half, 1.1 + half), abs=1e-4)
    assert all(np.isnan(st.t_interval([1.0])))
    # the decision interval joins both: at least as wide as the wider
    e = st.Estimate(1.1, 1.08, 1.12, 90)
    d = st.decision_interval(e, [1.0, 1.1, 1.2])
    assert d.lo == pytest.approx(lo) and d.hi == pytest.approx(hi) and d.value == 1.1
    assert st.decision_interval(e, [1.1]) == e
    tight = st.decision_interval(st.Estimate(1.1, 0.5, 1.7, 90), [1.09, 1.1, 1.11])
    assert (tight.lo, tight.hi) == (0.5, 1.7)
