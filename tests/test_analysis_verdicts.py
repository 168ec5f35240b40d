"""One test per row of the plan's section 6 table, plus the fall-backs."""

import pytest

from hxfuse import verdicts as vd
from hxfuse.stats import Estimate

FASTER = Estimate(1.5, 1.3, 1.7, 30)   # X < Y: interval above 1
SLOWER = Estimate(0.8, 0.7, 0.9, 30)   # X > Y: interval below 1
SAME = Estimate(1.02, 0.95, 1.08, 30)  # X ~ Y: interval contains 1


def test_relation():
    assert vd.relation(FASTER) == "<"
    assert vd.relation(SLOWER) == ">"
    assert vd.relation(SAME) == "~"
    assert vd.relation((1.0, 1.01, 1.2)) == "<"
    assert vd.relation(None) is None
    assert vd.relation(Estimate(float("nan"), float("nan"), float("nan"), 0)) is None


def test_row_d_faster_than_c_with_overlap():
    v = vd.classify({"D/A": SAME, "D/B": SLOWER, "D/C": FASTER, "C/A": SLOWER}, overlap_d=0.8)
    assert v.key == "D<C+overlap"
    assert v.conclusion == "internal multi-engine orchestration has net benefit"
    assert v.next_step == "locate work-ratio, bandwidth and buffer limits"
    assert v.timeline_overlap is True
    # Without timeline overlap the same speedups do not support this row.
    v2 = vd.classify({"D/A": SAME, "D/B": SLOWER, "D/C": FASTER, "C/A": SLOWER}, overlap_d=0.01)
    assert "D<C+overlap" not in v2.matches


def test_row_d_faster_than_a_and_like_b():
    v = vd.classify({"D/A": FASTER, "D/B": SAME, "D/C": SAME, "C/A": SAME}, overlap_d=0.0)
    assert v.key == "D<A,D~B"
    assert v.result == "D < A and D ~ B"
    assert v.conclusion == "complementarity is real, existing concurrency already captures most of it"
    assert v.next_step == "find placement/quota/sync granularity still to improve"


def test_row_d_faster_than_b_and_c():
    v = vd.classify({"D/A": FASTER, "D/B": FASTER, "D/C": FASTER, "C/A": FASTER}, overlap_d=0.9)
    assert v.key == "D<B,D<C"  # most specific of the rows that hold
    assert set(v.matches) == {"D<B,D<C", "D<C+overlap"}
    assert v.conclusion == "fused internal scheduling adds control or overhead advantage"
    assert v.next_step == "ablate quota, sync domain, resource plan"


def test_row_c_faster_than_a_and_d_like_c():
    v = vd.classify({"D/A": FASTER, "D/B": FASTER, "D/C": SAME, "C/A": FASTER}, overlap_d=0.05)
    assert v.key == "C<A,D~C"
    assert v.conclusion == "the gain is mostly entry merging, or overlap opportunity is small"
    assert v.next_step == "analyse wait placement, task profile, shared bottleneck"


def test_row_engines_overlap_but_d_slower():
    v = vd.classify({"D/A": SAME, "D/B": SLOWER, "D/C": SLOWER, "C/A": FASTER}, overlap_d=0.7)
    assert v.key == "overlap,D slower"
    assert v.result == "engines overlap but D slower"
    assert v.conclusion == "contention or management cost exceeds the gain"
    assert v.next_step == "shrink window, change tile, or fall back"
    # Slower than the serial baseline A counts too, also without C.
    v2 = vd.classify({"D/A": SLOWER}, overlap_d=0.7)
    assert v2.key == "overlap,D slower"
    v3 = vd.classify({"D/A": SLOWER, "D/B": SLOWER, "D/C": SAME, "C/A": SLOWER}, overlap_d=0.5)
    assert v3.key == "overlap,D slower"
    # No overlap: a slower D is not this row.
    v4 = vd.classify({"D/A": SLOWER, "D/B": SLOWER, "D/C": SLOWER, "C/A": SAME}, overlap_d=0.0)
    assert v4.key == "no-match"


def test_inconclusive_noise():
    v = vd.classify({"D/A": SAME, "D/B": SAME, "D/C": SAME, "C/A": SAME}, overlap_d=0.9)
    assert v.key == "inconclusive"
    assert v.result == "inconclusive (noise)"
    v2 = vd.classify({"D/A": SLOWER, "D/B": SAME, "D/C": SAME, "C/A": SAME}, overlap_d=0.0,
                     noise=["CV of group A is 0.30 > 0.10"])
    assert v2.key == "inconclusive"
    assert v2.noise == ("CV of group A is 0.30 > 0.10",)


def test_no_row_matches_without_noise():
    v = vd.classify({"D/A": SLOWER, "D/B": SAME, "D/C": SAME, "C/A": SAME}, overlap_d=0.0)
    assert v.key == "no-match"


def test_missing_group_b_makes_its_rows_inapplicable():
    v = vd.classify({"D/A": FASTER, "D/C": FASTER, "C/A": SAME}, overlap_d=0.5)
    assert v.key == "D<C+overlap"
    assert v.relations["D/B"] is None
    assert vd.relations_text(v.relations) == "D<A D<C C~A"


@pytest.mark.parametrize("key", list(vd.ROWS))
def test_every_row_text_comes_from_the_design(key):
    row = vd.ROWS[key]
    assert row.result and row.conclusion and row.next_step
    assert key in vd.PRIORITY
