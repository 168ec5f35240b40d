import json

import pytest

from hxfuse.analysis import intervals as iv
from hxfuse.analysis import timeline as tl
from hxfuse.runner.records import parse_records

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
    threads = {
        e["args"]["name"]: e["tid"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid
    }
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


def test_perfetto_file_loads_and_matches_gantt(synth, tmp_path):
    """The file the pipeline writes (rule perfetto) is valid trace-event JSON,
    in microseconds, with named processes and threads, and holds exactly the
    intervals of gantt_intervals (which the Gantt figures draw)."""
    recs = synth.synthetic_run(PLAN, workloads=("mv", "mvd"), rounds=3, warmup=1, jitter=0.02, seed=7)
    raw = synth.write_jsonl(tmp_path / "p.jsonl", recs)
    out = tmp_path / "p.perfetto.json"
    tl.write_perfetto(raw, out, info={"point_id": "host/s/mvd/p", "check_status": "ok"})
    tr = json.loads(out.read_text())
    assert tl.trace_problems(tr) == []
    assert tr["otherData"]["point_id"] == "host/s/mvd/p"
    assert "microseconds" in tr["otherData"]["time_unit"]
    ev = tr["traceEvents"]
    assert {e["ph"] for e in ev} == {"M", "X"}
    pname = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"mv A", "mv D", "mvd C", "mvd D", "V alone"} <= set(pname.values())
    xs = [e for e in ev if e["ph"] == "X"]
    assert all(isinstance(e["pid"], int) and isinstance(e["tid"], int) for e in xs)
    got = sorted(
        (pname[e["pid"]], tname[(e["pid"], e["tid"])], e["name"], round(e["ts"], 3), round(e["dur"], 3)) for e in xs
    )
    gi = tl.gantt_intervals(parse_records([json.dumps(r) for r in recs]))
    want = sorted(
        (
            f"{r.workload} {r.group}",
            r.lane,
            r.name,
            round(r.start_rel_ns / 1000, 3),
            round((r.end_rel_ns - r.start_rel_ns) / 1000, 3),
        )
        for r in gi.itertuples()
    )
    assert got == want
    # M of mvd D: 100 us (+-jitter) on the matrix engine, in microseconds.
    m = next(g for g in got if g[0] == "mvd D" and g[2] == "M")
    assert m[1] == "mx" and m[4] == pytest.approx(100, rel=0.1)


def test_trace_problems_finds_malformed_traces():
    ok = {
        "traceEvents": [
            {"ph": "M", "pid": 1, "tid": 0, "name": "process_name", "args": {"name": "p"}},
            {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "host"}},
            {"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 0.0, "dur": 10.0},
            {"ph": "X", "pid": 1, "tid": 1, "name": "b", "ts": 2.0, "dur": 3.0},  # nested: fine
        ]
    }
    assert tl.trace_problems(ok) == []
    assert tl.trace_problems({}) == ["no traceEvents list"]

    def with_event(e):
        return {"traceEvents": ok["traceEvents"] + [e]}

    assert any(
        "overlap without nesting" in p
        for p in tl.trace_problems(with_event({"ph": "X", "pid": 1, "tid": 1, "name": "c", "ts": 8.0, "dur": 5.0}))
    )
    assert any(
        "no thread_name" in p
        for p in tl.trace_problems(with_event({"ph": "X", "pid": 1, "tid": 2, "name": "c", "ts": 0.0, "dur": 1.0}))
    )
    assert any(
        "no process_name" in p
        for p in tl.trace_problems(with_event({"ph": "X", "pid": 2, "tid": 1, "name": "c", "ts": 0.0, "dur": 1.0}))
    )
    assert any(
        "ts/dur" in p
        for p in tl.trace_problems(with_event({"ph": "X", "pid": 1, "tid": 1, "name": "c", "ts": -1.0, "dur": 1.0}))
    )
    assert any(
        "not a metadata, complete or counter" in p
        for p in tl.trace_problems(with_event({"ph": "B", "pid": 1, "tid": 1, "name": "c", "ts": 0.0}))
    )


def _queued_run(synth):
    """One D trial of mvd on 2 cores: M and V start at once, D is launched
    with them but waits 50 us for a core; V ran on two workers (vec, vec1)
    that each ran half of their span (sharing cores with M)."""
    meta = synth.meta_record(online_cores=2)
    tr = synth.trial_record(
        round=0,
        workload="mvd",
        group="D",
        tasks=[
            ("M", "mx", 1_000, 101_000, 102_000, 100_000, 1_000),
            ("V", "vec", 1_000, 81_000, 102_000, 80_000, 1_000),
            ("D", "dma", 51_000, 111_000, 112_000, 60_000, 1_000),
        ],
        submit=(0, 500),
        wait=(500, 113_000),
        device=(800, 112_000),
    )
    v = next(t for t in tr["tasks"] if t["task"] == "V")
    v["workers"] = [
        {"engine": "vec", "begin": 1_000, "end": 81_000, "cpu_ns": 40_000, "cpu_begin": 1, "cpu_end": 1},
        {"engine": "vec1", "begin": 1_000, "end": 81_000, "cpu_ns": 40_000, "cpu_begin": 0, "cpu_end": 0},
    ]
    return parse_records([json.dumps(r) for r in (meta, tr, synth.end_record(1))])


def test_queue_run_share_and_worker_lanes(synth):
    run = _queued_run(synth)
    assert list(run.workers["engine"]) == ["mx", "vec", "vec1", "dma"]
    gi = tl.gantt_intervals(run)
    q = gi[gi["kind"] == "queue"]
    assert list(q["name"]) == ["queue D"] and list(q["lane"]) == ["dma"]
    assert (q["begin_ns"].iloc[0], q["end_ns"].iloc[0]) == (1_000, 51_000)
    tasks = gi[gi["kind"] == "task"].set_index("lane")
    assert tasks.loc["vec1", "name"] == "V" and tasks.loc["vec1", "run_share"] == pytest.approx(0.5)
    assert tasks.loc["vec1", "core"] == 0 and tasks.loc["mx", "run_share"] == pytest.approx(1.0)
    assert not tl.improper_nesting(gi)
    trace = tl.perfetto_trace(run)
    assert not tl.trace_problems(trace)
    ev = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "V"]
    assert sorted(e["args"]["run_share"] for e in ev) == [0.5, 0.5]
    assert any(e["name"] == "queue D" and e["cat"] == "queue" for e in trace["traceEvents"])


def test_progress_columns_known_answers(synth):
    from hxfuse.analysis import metrics as mx

    run = _queued_run(synth)
    tm = mx.trial_metrics(run).iloc[0]
    assert tm["D_queue_ns"] == 50_000 and tm["M_queue_ns"] == 0
    assert tm["V_cpu_ns"] == 80_000 and tm["V_run_share"] == pytest.approx(1.0)
    assert tm["D_run_share"] == pytest.approx(1.0)
    # (100 + 80 + 60) us of CPU time over a 113 us makespan
    assert tm["parallelism"] == pytest.approx(240 / 113)
    assert "busy_vec1_ns" in tm and tm["busy_vec1_ns"] == 80_000
