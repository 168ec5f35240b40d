"""Known answers for every row of the reading table (docs/metrics.md,
"Verdicts"): synthetic runs built for each row reach it end to end through
hxfuse.analysis.aggregate.summarize, including the rows the former rule
could not reach in practice (D ~ B and D ~ C beside a disturbed replicate,
engines overlapping with D no faster) and a 25% effect on two replicates,
which must be undetermined for too few replicates, never "below
resolution"."""

import json

import pandas as pd
import pytest

from hxfuse.analysis import aggregate as ag
from hxfuse.analysis import stats as st
from hxfuse.analysis import verdicts as vd
from hxfuse.runner.records import parse_records

US = 1000
PLAN = {"M": 100 * US, "V": 80 * US, "D": 60 * US}
BOOT = dict(n_resamples=400)


def _rep(synth, replicate, loaded=False, **kw):
    kw = {"rounds": 20, "warmup": 0, "jitter": 0.002, "seed": 10 + replicate} | kw
    recs = synth.synthetic_run(PLAN, **kw)
    t = ag.trial_table(parse_records([json.dumps(r) for r in recs]), {"point": "p"})
    t["replicate"] = replicate
    if loaded:
        # other work kept 1.5 of the 2 cores busy before this invocation
        t["other_busy_cores_before"] = 1.5
    return t


def _d(parts):
    s = ag.summarize(pd.concat(parts, ignore_index=True), **BOOT)
    return s[(s["workload"] == "mvd") & (s["group"] == "D")].iloc[0]


def _with_disturbed(synth, disturbed_scale, **kw):
    """Two clean replicates and a third on a loaded machine that also ran
    the groups of ``disturbed_scale`` differently."""
    clean = [_rep(synth, r, **kw) for r in (0, 1)]
    scale = dict(kw.get("group_scale") or {})
    for g, f in disturbed_scale.items():
        scale[g] = scale.get(g, 1.0) * f
    return [*clean, _rep(synth, 2, loaded=True, **(kw | {"group_scale": scale}))]


def test_d_like_b_is_reached_beside_a_disturbed_replicate(synth):
    # D and B both overlap the tasks (D/B ~ 0.99), D < A.  The loaded third
    # replicate ran D 10% slower: the former rule withheld the point
    # ("leaving out the disturbed replicate changes the row"); measured, not
    # vetoed, the clean replicates decide and the disturbed one is a
    # sensitivity check.
    d = _d(_with_disturbed(synth, {"D": 1.10}))
    assert d["verdict_key"] == "D<A,D~B", d["inconclusive_reason"]
    assert d["speedup_over_B_rel"] == "~" and bool(d["d_equiv_b"])
    assert d["replicates_disturbed"] == 1 and "replicate 2" in d["sensitivity"]
    assert 1 / 1.03 <= d["speedup_over_B_lo"] <= d["speedup_over_B_hi"] <= 1.03


def test_d_like_c_is_reached(synth):
    # D runs its tasks one after another as C does (no overlap: each task
    # runs a third of its span), A is 20% slower than C: C < A and D ~ C
    kw = {"group_scale": {"A": 1.2, "D": 2.40}, "cpu_share": {"D": 1 / 3}}
    d = _d(_with_disturbed(synth, {"C": 1.10}, **kw))
    assert d["verdict_key"] == "C<A,D~C", d["inconclusive_reason"]
    assert d["speedup_over_C_rel"] == "~"


def test_engines_overlap_but_d_no_faster_is_reached(synth):
    # quota/mv/w2-like: every span overlaps (wall overlap 1), the tasks share
    # the cores, D ~ A ~ C; a disturbed replicate does not withhold it
    kw = {"group_scale": {"D": 240 / 100, "B": 240 / 100}, "cpu_share": {"D": 100 / 240, "B": 100 / 240}}
    d = _d(_with_disturbed(synth, {"D": 0.8}, **kw))
    assert d["verdict_key"] == "overlap,D no faster", d["inconclusive_reason"]
    assert d["speedup_over_C_rel"] in ("~", ">") and bool(d["wall_overlap"])


def test_d_faster_than_b_and_c(synth):
    d = _d([_rep(synth, r, group_scale={"B": 1.3}) for r in range(3)])
    assert d["verdict_key"] == "D<B,D<C"
    assert d["relations"] == "D<A D<B D<C C~A"


def test_d_faster_than_c_with_overlap_and_b_in_the_headline(synth):
    # D < C with progress overlap (three engines at once), D > B: the row
    # that does not read D/B says how D stood against it
    d = _d([_rep(synth, r, group_scale={"B": 0.8}) for r in range(3)])
    assert d["verdict_key"] == "D<C+overlap"
    assert d["verdict"].endswith("; D > B (existing concurrency is faster)")


def test_no_difference(synth):
    # every group takes as long as A (D and B serialised like A and C)
    kw = {"group_scale": {"B": 2.44, "D": 2.43}, "cpu_share": {"B": 1 / 3, "D": 1 / 3}}
    parts = [_rep(synth, r, **kw) for r in range(3)]
    d = _d(parts)
    assert d["relations"].count("~") == 4, d["relations"]
    assert "no-difference" in d["verdict_matches"].split(",")


def test_large_effect_on_two_replicates_is_too_few_replicates_not_below_resolution(synth):
    # ratio_d/md/DshortVlong-like: D/A 1.22 and 1.27 in two replicates, each
    # tight.  The t interval on two medians (t_1 = 12.7) spans the margin:
    # the relation is open because two replicates cannot carry it, not
    # because the effect is small
    base = 249 / 106
    parts = [
        _rep(synth, 0, group_scale={"D": base / 1.22, "B": 1.3}),
        _rep(synth, 1, group_scale={"D": base / 1.27, "B": 1.3}),
    ]
    d = _d(parts)
    assert 1.2 < d["speedup_over_A"] < 1.3
    assert d["speedup_over_A_rel"] == "?"
    assert d["speedup_over_A_why"].startswith("too few replicates (2)")
    assert "below resolution" not in d["verdict"]
    assert d["speedup_over_A_lo"] > 0  # a ratio's bound is positive


def test_machine_too_busy_when_no_replicate_is_clean(synth):
    d = _d([_rep(synth, r, loaded=True) for r in range(3)])
    assert d["verdict"] == "machine too busy: 3 of 3 replicates disturbed"
    # the verdict the disturbed replicates would give is reported beside it
    assert d["sensitivity"].startswith("with the disturbed replicates 0, 1, 2: ")


def test_widened_ratio_bounds_stay_positive():
    # a results-table bound such as 1.77 [-0.59, 3.84] came from widening a
    # ratio on the linear scale; on the log scale the bound divides
    w = st.widen(st.Estimate(1.77, 1.2, 2.3, 60), 0.9)
    assert 0 < w.lo < 1.2 and w.hi > 2.3
    assert w.lo == pytest.approx(1.2 / 1.9)


def test_overlap_from_checkpoints_is_not_vetoed_by_occupancy():
    # t50us-like: CPU-time parallelism 0.97 (launch and wake-up time dilute
    # it) while the checkpoints show M and V both at full rate for 54 us
    rows = {
        "D/A": st.Estimate(1.3, 1.2, 1.4, 60),
        "D/B": st.Estimate(0.87, 0.85, 0.89, 60),
        "D/C": st.Estimate(1.3, 1.2, 1.4, 60),
        "C/A": st.Estimate(1.0, 0.99, 1.01, 60),
    }
    par = st.Estimate(0.97, 0.95, 0.99, 60)
    conc = st.Estimate(54e3, 50e3, 58e3, 60)
    v = vd.classify(rows, par, 0.9, concurrent_progress=conc, min_time_ns=5e3)
    assert v.progress_overlap is True and v.key == "D<C+overlap"


def test_results_table_prints_the_cause_and_positive_bounds(synth):
    # the results table's verdict cell of an undetermined point names its
    # cause, and every bound it prints is the (positive) decision interval
    from hxfuse.render import latex

    base = 249 / 106
    t = pd.concat(
        [
            _rep(synth, 0, group_scale={"D": base / 1.22, "B": 1.3}),
            _rep(synth, 1, group_scale={"D": base / 1.27, "B": 1.3}),
        ],
        ignore_index=True,
    )
    s = ag.summarize(t, **BOOT).assign(sweep="ratio", point_id="ratio/mvd/p", x=1.0, label="p", target="host")
    rows = [r for r in latex.table_rows(s, {"ratio": {"points": [{"name": "p"}]}}, "host") if r["workload"] == "mvd"]
    assert rows[0]["verdict"].startswith("undetermined (too few replicates")
    d = s[(s["workload"] == "mvd") & (s["group"] == "D")].iloc[0]
    assert f"{d['speedup_over_A_lo']:.2f}" in rows[0]["DA"] and f"{d['speedup_over_A_hi']:.2f}" in rows[0]["DA"]
    assert "-" not in rows[0]["DA"]
