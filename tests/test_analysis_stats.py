import math

import numpy as np
import pytest

from hxfuse import stats as st


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


def test_paired_ratio_pairs_within_round():
    # A drift that affects both groups equally in each round cancels in the
    # paired ratio: the interval is exactly the constant ratio 2.
    drift = np.linspace(1.0, 3.0, 20)
    t_a = 200.0 * drift
    t_d = 100.0 * drift
    est = st.paired_ratio(t_a, t_d)
    assert (est.value, est.lo, est.hi) == pytest.approx((2.0, 2.0, 2.0))
    assert est.excludes(1.0)
    with pytest.raises(ValueError):
        st.paired_ratio([1, 2], [1])
    assert st.paired_ratio([1.0, np.nan, 4.0], [1.0, 1.0, 0.0]).n == 1


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
    tight = {g: st.Estimate(v, v - 1, v + 1, 10) for g, v in zip("ABCD", (100, 90, 80, 70))}
    assert st.noise_warnings(tight, {g: 0.01 for g in "ABCD"}) == []
    loose = {g: st.Estimate(v, 50, 150, 10) for g, v in zip("ABCD", (100, 90, 80, 70))}
    msgs = st.noise_warnings(loose, {"A": 0.3, "B": 0.01, "C": 0.01, "D": 0.01}, cv_threshold=0.1)
    assert any("CV of group A" in m for m in msgs)
    assert any("all groups" in m for m in msgs)
    # D ~ B alone is a result, not noise.
    partly = dict(tight, B=st.Estimate(70, 69, 71, 10))
    assert st.noise_warnings(partly, {}) == []
