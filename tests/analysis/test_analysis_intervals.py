import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hxfuse.analysis import intervals as iv

# Integer endpoints on a small grid let a brute-force unit-cell count serve as
# the reference for every property.
GRID = 60
interval = st.tuples(st.integers(0, GRID), st.integers(0, GRID))
interval_set = st.lists(interval, max_size=8)


def cells(s):
    covered = np.zeros(GRID, dtype=bool)
    for b, e in s:
        if e > b:
            covered[b:e] = True
    return covered


# ---------------------------------------------------------- known answers


def test_known_union_and_overlap():
    busy_mx = [(0, 100), (150, 200)]  # 150 busy
    busy_vec = [(50, 120), (60, 80), (190, 260)]  # union (50,120) + (190,260) = 140
    assert iv.union_length(busy_mx) == 150
    assert iv.union_length(busy_vec) == 140
    # Intersection: (50,100) + (190,200) = 60
    assert iv.intersect(busy_mx, busy_vec).tolist() == [[50, 100], [190, 200]]
    assert iv.intersection_length(busy_mx, busy_vec) == 60
    assert iv.pairwise_overlap(busy_mx, busy_vec) == pytest.approx(60 / 140)
    # Utilisation over a 300 ns makespan.
    assert iv.utilisation(busy_mx, 300) == pytest.approx(0.5)
    assert iv.utilisation(busy_vec, 280) == pytest.approx(0.5)


def test_full_and_no_overlap():
    assert iv.pairwise_overlap([(0, 100)], [(20, 60)]) == 1.0  # the shorter runs inside
    assert iv.pairwise_overlap([(0, 100)], [(100, 160)]) == 0.0  # touching is not overlapping
    assert math.isnan(iv.pairwise_overlap([(0, 100)], []))
    assert math.isnan(iv.utilisation([(0, 1)], 0))


def test_normalize_merges_and_drops_empty():
    got = iv.normalize([(5, 7), (0, 2), (1, 3), (3, 4), (9, 9), (8, 6)])
    # Touching intervals merge: busy time has no gap at 3.
    assert got.tolist() == [[0, 4], [5, 7]]
    assert iv.union_length(got) == 6


def test_concurrency_length_known():
    sets = [[(0, 100)], [(50, 150)], [(90, 200)]]
    # Two or more busy on [50, 150); all three on [90, 100).
    assert iv.concurrency_length(sets, 2) == pytest.approx(100)
    assert iv.concurrency_length(sets, 3) == pytest.approx(10)
    assert iv.concurrency_length(sets, 1) == pytest.approx(200)


# ---------------------------------------------------------- properties


@settings(max_examples=200, deadline=None)
@given(interval_set)
def test_union_matches_brute_force(s):
    assert iv.union_length(s) == cells(s).sum()
    lengths = [max(0, e - b) for b, e in s]
    assert iv.union_length(s) <= sum(lengths)
    assert iv.union_length(s) >= max(lengths, default=0)


@settings(max_examples=200, deadline=None)
@given(interval_set, interval_set)
def test_intersection_properties(a, b):
    inter = iv.intersection_length(a, b)
    assert inter == (cells(a) & cells(b)).sum()
    assert inter == iv.intersection_length(b, a)
    assert inter <= min(iv.union_length(a), iv.union_length(b))
    # Inclusion-exclusion on the union of both sets.
    assert iv.union_length(list(a) + list(b)) == iv.union_length(a) + iv.union_length(b) - inter
    ov = iv.pairwise_overlap(a, b)
    if min(iv.union_length(a), iv.union_length(b)) > 0:
        assert 0.0 <= ov <= 1.0
    else:
        assert math.isnan(ov)


@settings(max_examples=150, deadline=None)
@given(interval_set, st.integers(1, 200))
def test_utilisation_and_normal_form(s, span):
    n = iv.normalize(s)
    assert (np.diff(n[:, 0]) > 0).all() if len(n) > 1 else True
    assert (n[1:, 0] > n[:-1, 1]).all()  # disjoint and not touching
    assert iv.utilisation(s, span) == pytest.approx(cells(s).sum() / span)


@settings(max_examples=150, deadline=None)
@given(st.lists(interval_set, min_size=1, max_size=4), st.integers(1, 4))
def test_concurrency_matches_brute_force(sets, k):
    depth = sum(cells(s).astype(int) for s in sets)
    assert iv.concurrency_length(sets, k) == (depth >= k).sum()


def test_subtract_known():
    got = iv.subtract([(0, 100)], [(10, 20), (50, 60), (90, 120)])
    assert got.tolist() == [[0, 10], [20, 50], [60, 90]]
    assert iv.subtract([(0, 10)], []).tolist() == [[0, 10]]


@settings(max_examples=150, deadline=None)
@given(interval_set, interval_set)
def test_subtract_matches_brute_force(a, b):
    d = iv.subtract(a, b)
    assert iv.union_length(d) == (cells(a) & ~cells(b)).sum()
    assert iv.intersection_length(d, b) == 0
