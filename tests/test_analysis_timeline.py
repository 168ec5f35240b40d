import json

import pytest

from hxfuse import intervals as iv
from hxfuse import timeline as tl
from hxfuse.io import parse_records

US = 1000
PLAN = {"M": 100 * US, "V": 80 * US, "D": 60 * US}


@pytest.fixture
def run(synth):
    recs = synth.synthetic_run(PLAN, rounds=5, warmup=1, jitter=0.05, seed=4)
    return parse_records([json.dumps(r) for r in recs])


def test_representative_is_median_makespan(run):
    rep = tl.representative_trials(run)
    t = run.trials[~run.trials["warmup"] & ~run.trials["empty"]]
    for _, r in rep.iterrows():
        g = t[(t["workload"] == r["workload"]) & (t["group"] == r["group"])]
        assert r["makespan_ns"] == sorted(g["makespan_ns"])[(len(g) - 1) // 2]
    assert len(rep) == 4 + 3  # A-D of mvd plus three alone runs
    fixed = tl.representative_trials(run, round=2)
    assert set(fixed["round"]) == {2}


def test_gantt_intervals(run):
    gi = tl.gantt_intervals(run)
    d = gi[(gi["workload"] == "mvd") & (gi["group"] == "D")]
    assert set(d["lane"]) == {"host", "mx", "vec", "dma"}
    assert set(d["kind"]) == {"submit", "host_wait", "entry", "task", "wait"}
    assert d.loc[d["kind"] == "submit", "start_rel_ns"].min() == 0
    tasks = d[d["kind"] == "task"].set_index("name")
    assert tasks.loc["M", "lane"] == "mx"
    # The host's wait ends exactly at the makespan.
    hw = d[d["kind"] == "host_wait"].iloc[0]
    assert hw["name"] == "wait req"
    assert hw["end_rel_ns"] == hw["makespan_ns"]
    # In A the host waits once per task and is busy submitting in between;
    # host slices never overlap one another.
    a = gi[(gi["workload"] == "mvd") & (gi["group"] == "A") & (gi["lane"] == "host")]
    assert list(a.loc[a["kind"] == "host_wait", "name"]) == ["wait M", "wait V", "wait D"]
    host_sets = a[["begin_ns", "end_ns"]].to_numpy()
    assert iv.union_length(host_sets) == pytest.approx((host_sets[:, 1] - host_sets[:, 0]).sum())
    assert iv.union_length(host_sets) == pytest.approx(a["makespan_ns"].iloc[0])


def test_perfetto_trace_shape(run):
    tr = tl.perfetto_trace(run)
    json.dumps(tr)  # serialisable as is
    ev = tr["traceEvents"]
    procs = {e["args"]["name"]: e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    assert {"mvd A", "mvd B", "mvd C", "mvd D", "M alone"} <= set(procs)
    pid = procs["mvd D"]
    threads = {e["args"]["name"]: e["tid"] for e in ev
               if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid}
    assert set(threads) == {"host", "mx", "vec", "dma"}
    assert threads["host"] == 1
    xs = [e for e in ev if e["ph"] == "X"]
    assert len(xs) == len(tl.gantt_intervals(run))
    m = next(e for e in xs if e["pid"] == pid and e["name"] == "M")
    assert m["tid"] == threads["mx"]
    assert m["dur"] == pytest.approx(PLAN["M"] / 1000, rel=0.2)  # microseconds
    assert all(e["ts"] >= 0 and e["dur"] >= 0 for e in xs)



def test_slices_nest_on_every_lane(run):
    assert tl.improper_nesting(tl.gantt_intervals(run)) == []
    bad = tl.gantt_intervals(run).iloc[:2].copy()
    bad["lane"] = "x"
    bad["begin_ns"], bad["end_ns"] = [0.0, 5.0], [10.0, 15.0]
    assert len(tl.improper_nesting(bad)) == 1
