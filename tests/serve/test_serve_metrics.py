"""Known answers for the service mode's metrics and trace generator
(hxfuse.serve.stats): a known trace with chosen start/end times, hand-computed
percentiles, miss rate, throughput and pairing wait; the Poisson generator's
seeding and mean."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hxfuse.serve import stats as serve
from hxfuse.serve import trace as st


def request(i, kind, arrival_ms, latency_ms, deadline_ms, wait_ms=0.0, paired=None, policy="D", rep=0):
    ms = 1_000_000
    end = int(round((arrival_ms + latency_ms) * ms))
    return {
        "record": "request",
        "rep": rep,
        "policy": policy,
        "id": i,
        "kind": kind,
        "size": 8,
        "input": 0,
        "arrival_ns": int(arrival_ms * ms),
        "deadline_ns": int(deadline_ms * ms),
        "admit_ns": int(arrival_ms * ms),
        "launch_ns": int(arrival_ms * ms),
        "start_ns": int(arrival_ms * ms),
        "end_ns": end,
        "pairing_wait_ns": int(round(wait_ms * ms)),
        "paired_with": paired,
        "tasks": [{"engine": "mx", "push_ns": 0, "begin_ns": int(arrival_ms * ms), "end_ns": end, "cpu_ns": 0}],
        "checksum": "0",
    }


def ten_requests():
    """Request i arrives at i ms with latency i + 1 ms (so it ends at 2i + 1
    ms); even ids are compute, odd bandwidth; deadline 5.5 ms; pairing waits
    0.3 ms for ids 2 and 4, 0.1 ms for id 6, else 0; 2 and 3 are a pair."""
    waits = {2: 0.3, 4: 0.3, 6: 0.1}
    paired = {2: 3, 3: 2}
    return [
        request(i, "compute" if i % 2 == 0 else "bandwidth", i, i + 1, 5.5, waits.get(i, 0.0), paired.get(i))
        for i in range(10)
    ]


def test_replay_metrics_known_answer():
    df = serve.request_table(ten_requests())
    assert list(df["latency_ns"]) == [(i + 1) * 1_000_000 for i in range(10)]
    m = serve.replay_metrics(df)
    assert len(m) == 1
    row = m.iloc[0]
    # nearest rank over latencies 1..10 ms: p50 = 5th = 5, p95 = 10th, p99 = 10th
    assert row["p50_ms"] == 5.0 and row["p95_ms"] == 10.0 and row["p99_ms"] == 10.0
    # deadline 5.5 ms: latencies 6..10 miss
    assert row["miss_rate"] == 0.5
    # 10 requests from the first arrival (0) to the last end (19 ms)
    assert row["throughput_rps"] == pytest.approx(10 / 0.019, rel=1e-12)
    # pairing waits: (0.3 + 0.3 + 0.1) / 10 ms, max 0.3 ms; 2 of 10 paired
    assert row["pairing_wait_mean_ms"] == pytest.approx(0.07, abs=1e-12)
    assert row["pairing_wait_max_ms"] == pytest.approx(0.3)
    assert row["paired_share"] == 0.2
    # short-task tail: bandwidth (odd ids) latencies 2, 4, 6, 8, 10 -> p99 = 10;
    # compute: 1, 3, 5, 7, 9 -> 9
    assert row["short_p99_ms"] == 10.0 and row["compute_p99_ms"] == 9.0


def test_admission_lag_is_the_largest_admit_minus_arrival():
    recs = ten_requests()
    recs[4]["admit_ns"] += 250_000  # the dispatcher saw request 4 0.25 ms late
    recs[4]["launch_ns"] += 250_000
    m = serve.replay_metrics(serve.request_table(recs)).iloc[0]
    assert m["admit_lag_max_ms"] == pytest.approx(0.25)
    # latency still counts from the trace's arrival
    assert m["p50_ms"] == 5.0


@pytest.mark.parametrize(
    "env, loaded",
    [
        ({"online_cores": 2, "other_busy_cores_before": 0.5, "other_busy_cores_after": 0.0}, False),  # = 0.25 x 2
        ({"online_cores": 2, "other_busy_cores_before": 0.51, "other_busy_cores_after": 0.0}, True),
        ({"online_cores": 2, "other_busy_cores_before": 0.0, "other_busy_cores_after": 1.2}, True),
        ({"online_cores": 2, "other_busy_cores_before": -1.0, "other_busy_cores_after": None}, False),  # unreadable
        ({"online_cores": None, "other_busy_cores_before": 2.0, "other_busy_cores_after": 2.0}, False),
    ],
)
def test_loaded_machine_known_answers(env, loaded):
    assert serve.is_loaded(env) is loaded


def test_nearest_rank_known_answers():
    x = np.arange(1, 201)  # 1..200, shuffled: order must not matter
    np.random.default_rng(0).shuffle(x)
    assert serve.nearest_rank(x, 50) == 100
    assert serve.nearest_rank(x, 95) == 190
    assert serve.nearest_rank(x, 99) == 198
    assert serve.nearest_rank(x, 100) == 200
    assert serve.nearest_rank([7.0], 99) == 7.0
    assert math.isnan(serve.nearest_rank([], 50))
    # 3 values: p50 is the 2nd (ceil 1.5), p99 the 3rd
    assert serve.nearest_rank([30, 10, 20], 50) == 20 and serve.nearest_rank([30, 10, 20], 99) == 30


def test_metrics_are_per_replay():
    recs = ten_requests() + [dict(r, policy="B", pairing_wait_ns=0, paired_with=None) for r in ten_requests()]
    m = serve.replay_metrics(serve.request_table(recs)).set_index("policy")
    assert m.loc["B", "pairing_wait_mean_ms"] == 0 and m.loc["B", "paired_share"] == 0
    assert m.loc["B", "p99_ms"] == m.loc["D", "p99_ms"] == 10.0


def test_summary_medians_and_paired_ratios_known_answer():
    rows = []
    # two replicates x two repetitions; D's p99 is twice B's in every replay
    for rpl, rep, b in [(0, 0, 1.0), (0, 1, 2.0), (1, 0, 3.0), (1, 1, 4.0)]:
        base = {m: 1.0 for m in serve.METRICS}
        rows.append({**base, "replicate": rpl, "rep": rep, "policy": "B", "p99_ms": b, "point": "p"})
        rows.append({**base, "replicate": rpl, "rep": rep, "policy": "D", "p99_ms": 2 * b, "point": "p"})
    s = serve.summarize(pd.DataFrame(rows), n_resamples=200).set_index(["policy", "metric"])
    assert s.loc[("B", "p99_ms"), "median"] == 2.5  # median of 1, 2, 3, 4
    assert s.loc[("D", "p99_ms"), "median"] == 5.0
    lo, hi = s.loc[("B", "p99_ms"), ["lo", "hi"]]
    assert 1.0 <= lo <= 2.5 <= hi <= 4.0
    r = s.loc[("D/B", "p99_ms")]
    assert (r["median"], r["lo"], r["hi"], r["n"]) == (2.0, 2.0, 2.0, 4)


def test_poisson_arrivals_are_seeded_and_have_mean_gap_one_over_rate():
    a = st.poisson_arrivals(1000.0, 20000, seed=3)
    assert np.array_equal(a, st.poisson_arrivals(1000.0, 20000, seed=3))
    assert not np.array_equal(a, st.poisson_arrivals(1000.0, 20000, seed=4))
    assert a.dtype == np.int64 and np.all(np.diff(a) >= 0) and a[0] >= 0
    gaps = np.diff(np.concatenate([[0], a]))
    # mean gap 1/rate = 1 ms; the mean of 20000 exponential gaps has a relative
    # standard error of 1/sqrt(20000) = 0.7%: 3% is over 4 standard errors
    assert np.mean(gaps) == pytest.approx(1e6, rel=0.03)
    # exponential: the standard deviation equals the mean
    assert np.std(gaps) == pytest.approx(1e6, rel=0.05)


def test_make_trace_mix_sizes_and_deadlines():
    t = st.make_trace(500.0, 4000, 7, 0.25, [64, 128], [256], {"compute": 10, "bandwidth": 2.5})
    assert tuple(t.columns) == st.TRACE_COLUMNS
    share = (t["kind"] == "compute").mean()
    assert share == pytest.approx(0.25, abs=0.03)  # binomial sd 0.007
    assert set(t.loc[t["kind"] == "compute", "size"]) == {64, 128}
    assert set(t.loc[t["kind"] == "bandwidth", "size"]) == {256}
    assert set(t.loc[t["kind"] == "compute", "deadline_ns"]) == {10_000_000}
    assert set(t.loc[t["kind"] == "bandwidth", "deadline_ns"]) == {2_500_000}
    # the arrivals of a seed do not depend on the mix
    same = st.make_trace(500.0, 4000, 7, 0.9, [64], [256], {"compute": 1, "bandwidth": 1})
    assert np.array_equal(t["arrival_ns"], same["arrival_ns"])


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda d: d.assign(kind=["compute", "prefill", "compute"]),
            "row 2: kind 'prefill' is not compute or bandwidth",
        ),
        (lambda d: d.assign(arrival_ns=[5, 3, 9]), "row 2: arrival_ns decreases"),
        (lambda d: d.assign(size=[1, 0, 2]), "row 2: size 0 is not in [1, 4096]"),
        (lambda d: d.assign(deadline_ns=[1, 1, 0]), "row 3: deadline_ns 0 is not positive"),
        (lambda d: d.rename(columns={"size": "rows"}), "columns must be arrival_ns,kind,size,deadline_ns"),
    ],
)
def test_bad_traces_are_refused_with_the_row(tmp_path, edit, message):
    good = pd.DataFrame(
        {
            "arrival_ns": [1, 2, 3],
            "kind": ["compute", "bandwidth", "compute"],
            "size": [1, 2, 3],
            "deadline_ns": [1, 1, 1],
        }
    )
    st.validate_trace(good)
    with pytest.raises(st.ServeError, match=None) as exc:
        st.validate_trace(edit(good))
    assert message in str(exc.value)
    with pytest.raises(st.ServeError):
        st.poisson_arrivals(0.0, 10, 1)
