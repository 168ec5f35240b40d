"""ONNX Runtime's groups on the timeline (hxfuse.external.ort -> hxfuse.runner.records -> hxfuse.analysis.timeline):
a recorded profile's nodes become lanes by the thread ORT ran them on, and the
Perfetto trace has one slice per node at the profile's own times."""

from __future__ import annotations

import json
from pathlib import Path

from hxfuse.external import ort_profile, ort_records
from hxfuse.model import ENGINE_OF
from hxfuse.analysis import timeline as tl
from hxfuse.runner.records import parse_records

DATA = Path(__file__).parents[1] / "data"
# tests/data/ort_profile_mvd_graph.json: the mvd graph under ORT_PARALLEL,
# called from thread 18528; every node ran on the inter-op thread 18653.
CALLER, POOL = 18528, 18653
# run 0's nodes (name, task, begin us, end us), from the file's Node events
RUN0 = [
    ("D_loop", "D", 34502, 34786),
    ("D_cond", "D", 34633, 34658),
    ("D_gather", "D", 34669, 34681),
    ("D_end", "D", 34687, 34697),
    ("D_slice", "D", 34701, 34728),
    ("D_cond", "D", 34740, 34744),
    ("D_gather", "D", 34749, 34754),
    ("D_end", "D", 34759, 34763),
    ("D_slice", "D", 34766, 34774),
    ("V_mul0/QuickGeluFusion/", "V", 34793, 34807),
    ("V_mul1/QuickGeluFusion/", "V", 34811, 34816),
    ("V_rowmax", "V", 34822, 34848),
    ("V_rowsum", "V", 34852, 34864),
    ("M_matmul", "M", 34877, 34899),
]


def _runs():
    doc = json.loads((DATA / "ort_profile_mvd_graph.json").read_text())
    start = doc["profiling_start_time_ns"]
    # epoch = the profiler's start: a node's ns = its ts (us) * 1000
    return ort_profile.profile_runs(doc["events"], start, epoch_ns=start)


def test_recorded_profile_nodes_and_their_thread_lanes():
    runs = _runs()
    got = [(n["name"], n["task"], n["begin"] // 1000, n["end"] // 1000) for n in runs[0]["nodes"]]
    assert got == RUN0
    assert {n["tid"] for r in runs for n in r["nodes"]} == {POOL}
    assert len(runs[1]["nodes"]) == 14
    # a thread of ONNX Runtime's pool gets ort1; a harness thread keeps its name
    assert ort_profile.thread_lanes({"graph:mvd": runs}, {CALLER: "graph"}) == {POOL: "ort1"}
    assert ort_profile.thread_lanes({"graph:mvd": runs}, {POOL: "dma"}) == {POOL: "dma"}
    two = [{"nodes": [{"tid": 7, "begin": 5}, {"tid": 3, "begin": 1}, {"tid": 9, "begin": 2}]}]
    assert ort_profile.thread_lanes({"s": two}, {9: "mx"}) == {3: "ort1", 9: "mx", 7: "ort2"}
    lanes = {POOL: "ort1"}
    assert ort_profile.task_nodes(runs[0], "M", lanes) == [["M_matmul", "ort1", 34877000, 34899000]]
    assert [n[0] for n in ort_profile.task_nodes(runs[0], "V", lanes)] == [n[0] for n in RUN0 if n[1] == "V"]


SUBMIT = 25_000_000  # the host's submit, ns on the profile's clock (before run 0's first node)


def _ort_file(tmp_path: Path) -> Path:
    """A raw file as the harness writes it: one B_ort_graph trial of mvd from
    run 0 of the recorded profile, one A_ort trial whose tasks ran on the
    harness's engine threads (run 1's nodes, as if its thread were each engine)."""
    runs = _runs()
    lanes = ort_profile.thread_lanes({"graph:mvd": runs}, {CALLER: "graph"})

    def task(t, r, engine, lanes):
        iv = r["tasks"][t]
        return {
            "task": t,
            "engine": engine,
            "launch": r["begin"],
            "begin": iv["begin"],
            "end": iv["end"],
            "host_seen": r["end"],
            "checksum": "0",
            "cpu_ns": None,
            "cpu_begin": None,
            "cpu_end": None,
            "nodes": ort_profile.task_nodes(r, t, lanes),
        }

    def trial(group, r, tasks, waits=()):
        host = {
            "submit_begin": SUBMIT if group == "B_ort_graph" else r["begin"] - 1000,
            "submit_end": r["begin"],
            "wait_begin": r["begin"],
            "wait_end": r["end"],
            "submit_ns": 1000,
            "wait_ns": r["end"] - r["begin"],
            "requests": 1,
            "submits": [1000],
        }
        return {
            "record": "trial",
            "round": 0,
            "seq": 0,
            "warmup": False,
            "workload": "mvd",
            "group": group,
            "empty": False,
            "host": host,
            "device": None,
            "tasks": tasks,
            "waits": list(waits),
            "scratch_peak_bytes": None,
            "makespan_ns": r["end"] - host["submit_begin"],
            "checksums_ok": True,
        }

    r0, r1 = runs
    a_ort = [task(t, r1, ENGINE_OF[t], {POOL: ENGINE_OF[t]}) for t in "MVD"]
    recs = [
        {
            "record": "meta",
            "schema_version": 2,
            "target": "host",
            "backend": "onnxruntime 1.32.0 CPUExecutionProvider",
            "group_mapping": ort_records.GROUP_MAPPING,
            "emulated": False,
            "clock": {"source": "CLOCK_REALTIME"},
        },
        trial("B_ort_graph", r0, [task(t, r0, "graph", lanes) for t in "MVD"]),
        trial("A_ort", r1, a_ort, [{"who": "host", "on": "M", "begin": r1["begin"], "end": r1["end"]}]),
        {"record": "end", "status": "ok"},
    ]
    path = tmp_path / "ort0.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_ort_nodes_become_gantt_slices_on_thread_lanes(tmp_path):
    run = parse_records(_ort_file(tmp_path).read_text().splitlines())
    gi = tl.gantt_intervals(run)
    g = gi[gi["group"] == "B_ort_graph"]
    nodes = g[g["kind"] == "node"]
    # one slice per node, on the pool thread's lane, at the profile's times
    # relative to the host's submit; the nodes stand for the task slices
    assert sorted(zip(nodes["name"], nodes["task"], nodes["start_rel_ns"], nodes["end_rel_ns"])) == sorted(
        (n, t, b * 1000.0 - SUBMIT, e * 1000.0 - SUBMIT) for n, t, b, e in RUN0
    )
    assert set(nodes["lane"]) == {"ort1"} and not (g["kind"] == "task").any()
    # the calling thread: each task queued from the run() call to its first node
    q = g[g["kind"] == "queue"].set_index("task")
    assert set(q["lane"]) == {"graph"} and q.loc["M", "end_rel_ns"] == 34877000.0 - SUBMIT
    a = gi[(gi["group"] == "A_ort") & (gi["kind"] == "node")]
    assert a.groupby("lane")["task"].agg(set).to_dict() == {"mx": {"M"}, "vec": {"V"}, "dma": {"D"}}
    assert tl.improper_nesting(gi) == []  # the Loop holds its body's nodes


def test_ort_perfetto_trace_has_one_slice_per_node(tmp_path):
    path = _ort_file(tmp_path)
    trace = tl.write_perfetto(path, tmp_path / "t.json", info={"point_id": "host/external/x/mvd/p"})
    assert tl.trace_problems(trace) == []
    ev = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    assert sorted(procs.values()) == ["mvd A_ort", "mvd B_ort_graph"]
    assert min(procs, key=procs.get) < max(procs, key=procs.get)  # A_ort first: meta.group_mapping order
    graph = next(p for p, n in procs.items() if n == "mvd B_ort_graph")
    sl = [e for e in ev if e["ph"] == "X" and e["pid"] == graph and e["cat"] == "node"]
    assert len(sl) == len(RUN0)
    got = sorted((e["name"], e["args"]["task"], threads[(graph, e["tid"])], e["ts"], e["dur"]) for e in sl)
    want = sorted((n, t, "ort1", (b * 1000 - SUBMIT) / 1000.0, float(e - b)) for n, t, b, e in RUN0)
    assert got == want
    assert json.loads((tmp_path / "t.json").read_text())["otherData"]["point_id"] == "host/external/x/mvd/p"


def test_ort_timeline_figure_draws_the_ort_groups(tmp_path):
    from hxfuse.sweep import plots

    gi = plots.timeline_figure(_ort_file(tmp_path), None, "ort", [tmp_path / "t.png"])
    assert set(gi["group"]) == {"A_ort", "B_ort_graph"} and (gi["kind"] == "node").sum() == 2 * len(RUN0)
    assert (tmp_path / "t.png").stat().st_size > 10_000
