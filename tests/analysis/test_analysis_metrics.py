import json
import math

import numpy as np
import pytest

from hxfuse.analysis import metrics as mx
from hxfuse.runner.records import parse_records

US = 1000  # ns per microsecond
PLAN = {"M": 100 * US, "V": 80 * US, "D": 60 * US}  # the plan's 100/80/60 us example


def run_of(records):
    return parse_records([json.dumps(r) for r in records])


@pytest.fixture
def plan_run(synth):
    return run_of(synth.synthetic_run(PLAN, rounds=4, warmup=1))


def only(tm, group, workload="mvd", empty=False):
    sub = mx.measured(tm, empty=empty)
    sub = sub[(sub["group"] == group) & (sub["workload"] == workload)]
    assert len(sub)
    return sub


def test_plan_example_serial_and_ideal(plan_run):
    tm = mx.trial_metrics(plan_run)
    alone = mx.alone_durations(tm)
    assert alone == {"M": 100 * US, "V": 80 * US, "D": 60 * US}
    b = mx.serial_bounds(alone, ["M", "V", "D"], k=3)
    assert b["t_serial_ns"] == 240 * US
    assert b["t_ideal_ns"] == 100 * US
    assert b["t_bound_ns"] == 100 * US
    # Two cores for three tasks: the bound is sum / 2 = 120 us.
    k = mx.engines_available(3, 2)
    assert k == 2
    assert mx.serial_bounds(alone, ["M", "V", "D"], k)["t_bound_ns"] == 120 * US
    assert math.isnan(mx.serial_bounds({"M": 1.0}, ["M", "V"], 2)["t_serial_ns"])


def test_overlap_efficiency_known():
    assert mx.overlap_efficiency(240, 100, 100) == 1.0
    assert mx.overlap_efficiency(240, 100, 240) == 0.0
    assert mx.overlap_efficiency(240, 100, 170) == pytest.approx(0.5)
    assert mx.overlap_efficiency(240, 100, 310) == pytest.approx(-0.5)
    assert math.isnan(mx.overlap_efficiency(100, 100, 100))


def test_fused_concurrent_trial_known_answers(plan_run):
    tm = mx.trial_metrics(plan_run)
    d = only(tm, "D").iloc[0]
    # Synthetic D: submit 1 us, 2 us to start the entry, 0.5 us entry set-up,
    # all tasks start together, 0.5 us after the last, 2 us back to the host.
    assert d["device_ns"] == 500 + 100 * US + 500
    assert d["makespan_ns"] == 1000 + 2000 + 101 * US + 2000
    assert d["host_submit_ns"] == 1000
    assert d["host_wait_ns"] == d["makespan_ns"] - 1000
    assert d["M_duration_ns"] == 100 * US
    assert d["M_completion_ns"] == 100 * US + 500
    assert d["D_completion_ns"] == 60 * US + 500
    assert d["M_host_seen_latency_ns"] == 1000
    assert d["M_latency_no_early_ns"] == 500 + 2000
    assert d["V_latency_no_early_ns"] == 20 * US + 500 + 2000
    assert d["busy_mx_ns"] == 100 * US
    assert d["util_mx"] == pytest.approx(100 * US / d["makespan_ns"])
    # The shorter engine always runs inside the longer one.
    assert d["overlap_mx_vec"] == 1.0 and d["overlap_mx_dma"] == 1.0 and d["overlap_vec_dma"] == 1.0
    assert d["overlap_max"] == 1.0
    assert d["concurrent_ns"] == 80 * US
    assert d["M_bytes"] == 32768 + 16384
    assert d["M_bandwidth_GBps"] == pytest.approx((32768 + 16384) / (100 * US))
    assert d["D_bytes"] == 64000
    assert d["end_to_end_ns"] == d["makespan_ns"] + 5000


def test_serial_trial_has_no_overlap(plan_run):
    tm = mx.trial_metrics(plan_run)
    a = only(tm, "A").iloc[0]
    assert a["overlap_max"] == 0.0 and a["concurrent_ns"] == 0.0
    # Task span of A: the three tasks plus two host round trips of 2 us.
    assert a["device_ns"] == 240 * US + 2 * 2000
    assert a["D_completion_ns"] == 240 * US + 2 * 2000
    # Host cost of A: one submit per task (1 us + 2 x 0.1 us) and three waits.
    assert a["host_requests"] == 3
    assert a["host_submit_ns"] == 1000 + 200
    assert a["host_wait_ns"] == a["makespan_ns"] - 1000 - 200
    c = only(tm, "C").iloc[0]
    assert c["overlap_max"] == 0.0
    assert c["device_ns"] == 240 * US + 1000


def test_slowdown_stp_antt_fairness(plan_run):
    tm = mx.trial_metrics(plan_run)
    sd = mx.slowdowns(tm, mx.alone_durations(tm))
    d_idx = only(tm, "D").index[0]
    row = sd.loc[d_idx]
    expect = np.array([100.5 / 100, 80.5 / 80, 60.5 / 60])
    assert row[["M_slowdown", "V_slowdown", "D_slowdown"]].to_numpy() == pytest.approx(expect)
    assert row["stp"] == pytest.approx((1 / expect).sum())
    assert row["antt"] == pytest.approx(expect.mean())
    assert row["fairness"] == pytest.approx(expect.min() / expect.max())
    # Serial A: D finishes last, after everything else.
    a_idx = only(tm, "A").index[0]
    assert sd.loc[a_idx, "D_slowdown"] == pytest.approx(244 / 60)
    # Alone runs have slowdown 1 for their own task and nothing for the others.
    m_idx = only(tm, "alone", workload="M").index[0]
    assert sd.loc[m_idx, "M_slowdown"] == pytest.approx(1.0)
    assert sd.loc[m_idx, "stp"] == pytest.approx(1.0)
    assert math.isnan(sd.loc[m_idx, "V_slowdown"])
    # Empty trials never get a slowdown.
    e_idx = only(tm, "D", empty=True).index[0]
    assert sd.loc[e_idx].isna().all()


def test_paired_speedups_within_round(synth):
    recs = synth.synthetic_run(PLAN, rounds=3, warmup=1, group_scale={"D": 1.0}, jitter=0.05)
    tm = mx.trial_metrics(run_of(recs))
    sp = mx.paired_speedups(tm, "mvd")
    assert list(sp.index) == [0, 1, 2]  # warm-up round -1 excluded
    for r in sp.index:
        m = mx.measured(tm)
        m = m[m["workload"] == "mvd"]
        t = m[m["round"] == r].set_index("group")["makespan_ns"]
        assert sp.loc[r, "speedup_D_over_A"] == pytest.approx(t["A"] / t["D"])
        assert sp.loc[r, "speedup_C_over_A"] == pytest.approx(t["A"] / t["C"])


def test_several_records_of_one_task_merge(synth):
    # Two vector workers report V on vec and vec1; V spans both.
    trial = synth.trial_record(
        round=0,
        workload="mv",
        group="D",
        tasks=[("M", "mx", 1000, 9000), ("V", "vec", 1000, 5000), ("V", "vec1", 1500, 7000)],
        submit=(0, 500),
        wait=(500, 10000),
        device=(800, 9500),
    )
    tm = mx.trial_metrics(run_of([synth.meta_record(), trial, synth.end_record(1)]))
    row = tm.iloc[0]
    assert row["V_duration_ns"] == 6000
    assert row["V_completion_ns"] == 7000 - 800
    assert row["busy_vec1_ns"] == 5500
    assert row["overlap_vec_vec1"] == pytest.approx(3500 / 4000)
    assert row["overlap_mx_vec"] == 1.0
    assert row["n_tasks"] == 2
    assert math.isnan(row["D_duration_ns"])
    run = run_of([synth.meta_record(), trial, synth.end_record(1)])
    assert list(mx.task_metrics(run)["engines"]) == ["mx", "vec,vec1"]


def test_engine_order_and_tasks_of():
    assert sorted(["dma", "vec2", "mx", "vec", "vec1", "zz"], key=mx.engine_sort_key) == [
        "mx",
        "vec",
        "vec1",
        "vec2",
        "dma",
        "zz",
    ]
    assert mx.tasks_of("mvd") == ["M", "V", "D"]
    assert mx.tasks_of("D") == ["D"]
