import json

import pytest

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
    assert (d.loc[d["kind"] == "submit", "start_rel_ns"] == 0).all()
    tasks = d[d["kind"] == "task"].set_index("name")
    assert tasks.loc["M", "lane"] == "mx"
    # The host's wait ends exactly at the makespan.
    hw = d[d["kind"] == "host_wait"].iloc[0]
    assert hw["end_rel_ns"] == hw["makespan_ns"]


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
