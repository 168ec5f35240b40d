"""The graph runner (hxgraph) against known answers: the conflict check,
bad graph files, node outputs against numpy, and the semantics of groups
A-D read off the per-node timestamps (relations, not absolute times, so a
loaded machine cannot make them fail)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hxfuse.graph import build as graphs
from hxfuse.graph.check import check_graph
from hxfuse.graph.stats import node_table

REPO = Path(__file__).resolve().parents[2]
HXGRAPH = REPO / "kernels" / "build" / "host" / "hxgraph"


@pytest.fixture(scope="module")
def hxgraph() -> Path:
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "build/host/hxgraph"], check=True)
    return HXGRAPH


def run(binary, tmp: Path, graph: dict, *args: str, npy: bool = False):
    gpath, out = tmp / "g.json", tmp / "out.jsonl"
    gpath.write_text(json.dumps(graph))
    extra = []
    if npy:
        (tmp / "npy").mkdir(exist_ok=True)
        extra = ["--npy-dir", str(tmp / "npy")]
    proc = subprocess.run(
        [str(binary), "--graph", str(gpath), "--out", str(out), *extra, *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    recs = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else None
    return proc, recs


def two_writers(edge: bool, alias: bool = True) -> dict:
    """x -> [n1: relu6 -> t1] and x -> [n2: relu6 -> t2], t2 sharing t1's storage."""
    nb = 4 * 8 * 16
    bufs = [{"name": "x", "bytes": nb}, {"name": "t1", "bytes": nb}, {"name": "t2", "bytes": nb}]
    if alias:
        bufs[2]["alias"] = "t1"
    node = {"op": "relu6", "rows": 8, "cols": 16}
    return {
        "name": "reuse",
        "precision": "fp32",
        "buffers": bufs,
        "nodes": [
            {"name": "n1", **node, "inputs": {"x": "x"}, "outputs": {"y": "t1"}},
            {"name": "n2", **node, "inputs": {"x": "x"}, "outputs": {"y": "t2"}, "after": ["n1"] if edge else []},
        ],
    }


def test_reuse_without_a_dependency_is_refused_naming_both_nodes(hxgraph, tmp_path):
    proc, recs = run(hxgraph, tmp_path, two_writers(edge=False))
    assert proc.returncode == 2 and recs is None
    msg = proc.stderr
    assert "nodes 'n1' and 'n2'" in msg and "no dependency path" in msg, msg
    assert "'t1' and 't2' share storage" in msg, msg
    assert not (tmp_path / "out.jsonl.tmp").exists()


def test_reuse_with_the_edge_is_accepted_and_ordered(hxgraph, tmp_path):
    proc, recs = run(hxgraph, tmp_path, two_writers(edge=True), "--rounds", "3", "--warmup", "0")
    assert proc.returncode == 0, proc.stderr
    nodes = node_table(recs)
    for (_, _), t in nodes.groupby(["round", "group"]):
        n1, n2 = t.set_index("node").loc["n1"], t.set_index("node").loc["n2"]
        assert n2["begin"] >= n1["end"]


def test_read_write_overlap_without_path_is_refused(hxgraph, tmp_path):
    """One node reads what another writes (a copy into part of a buffer that
    a third node reads), no path: refused naming the reader and the writer."""
    g = {
        "name": "rw",
        "buffers": [{"name": "a", "bytes": 256}, {"name": "b", "bytes": 256}, {"name": "c", "bytes": 256}],
        "nodes": [
            {"name": "reader", "op": "relu6", "rows": 4, "cols": 16, "inputs": {"x": "b"}, "outputs": {"y": "c"}},
            {
                "name": "writer",
                "op": "copy",
                "rows": 2,
                "row_bytes": 16,
                "src_stride": 16,
                "dst_stride": 64,
                "dst_offset": 32,
                "inputs": {"src": "a"},
                "outputs": {"dst": "b"},
            },
        ],
    }
    proc, _ = run(hxgraph, tmp_path, g)
    assert proc.returncode == 2
    assert "'reader' and 'writer'" in proc.stderr and "'writer' writes 'b'" in proc.stderr, proc.stderr


def test_disjoint_strided_writes_are_not_a_conflict(hxgraph, tmp_path):
    """Two copies into interleaved but disjoint columns of one buffer (a
    concatenation) need no edge: the check compares rows, not spans."""
    g = {
        "name": "cat",
        "buffers": [{"name": "a", "bytes": 64}, {"name": "b", "bytes": 64}, {"name": "out", "bytes": 128}],
        "nodes": [
            {
                "name": f"c{i}",
                "op": "copy",
                "rows": 4,
                "row_bytes": 16,
                "src_stride": 16,
                "dst_stride": 32,
                "dst_offset": 16 * i,
                "inputs": {"src": s},
                "outputs": {"dst": "out"},
            }
            for i, s in enumerate("ab")
        ],
    }
    proc, recs = run(hxgraph, tmp_path, g, "--rounds", "2", "--warmup", "0", npy=True)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "g2.json").write_text(json.dumps(g))
    res = check_graph(tmp_path / "g2.json", tmp_path / "out.jsonl", tmp_path / "npy")
    assert res["status"] == "ok", res["reasons"]


BAD = {
    "cycle": (
        lambda g: g["nodes"][0].update(after=["n2"]) or g,
        "the dependencies form a cycle: these nodes can never become ready: 'n1', 'n2'",
    ),
    "unknown buffer": (
        lambda g: g["nodes"][0]["inputs"].update(x="nope") or g,
        "node 'n1': inputs 'x' is unknown buffer 'nope'",
    ),
    "size mismatch": (
        lambda g: g["buffers"][0].update(bytes=100) or g,
        "node 'n1' (relu6): role 'x' needs 512 bytes of buffer 'x', which has 100 (size mismatch)",
    ),
    "unknown op": (lambda g: g["nodes"][1].update(op="conv") or g, "node 'n2': unknown op 'conv'"),
    "unknown key": (lambda g: g["nodes"][1].update(colour=1) or g, "node 'n2' (relu6): unknown key 'colour'"),
    "missing param": (lambda g: g["nodes"][1].pop("rows") and g, "node 'n2' (relu6): missing parameter 'rows'"),
    "unknown after": (lambda g: g["nodes"][1].update(after=["n9"]) or g, "'after' names unknown node 'n9'"),
    "huge value": (
        lambda g: g["nodes"][0].update(rows=1e300) or g,
        "node 'n1': 'rows' must be an integer in [1, 1048576]",
    ),
    "fractional": (lambda g: g["buffers"][0].update(bytes=512.5) or g, "buffer 'x': 'bytes' must be an integer"),
    "in place stencil": (
        lambda g: (
            g.update(
                nodes=[
                    {"name": "p", "op": "maxpool3", "h": 8, "w": 4, "c": 4, "inputs": {"x": "x"}, "outputs": {"y": "x"}}
                ]
            )
            or g
        ),
        "node 'p' (maxpool3) writes 'x' over its own input 'x' (role x): this op cannot run in place",
    ),
    "alias too big": (
        lambda g: g["buffers"][2].update(bytes=4096) or g,
        "buffer 't2' (4096 bytes) is larger than the storage of 't1'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_graph_files_fail_before_any_work(hxgraph, tmp_path, case):
    make, message = BAD[case]
    g = make(two_writers(edge=True))
    proc, recs = run(hxgraph, tmp_path, g)
    assert proc.returncode == 2, (case, proc.stderr)
    assert message in proc.stderr, (case, proc.stderr)
    assert recs is None and not (tmp_path / "out.jsonl.tmp").exists()


def test_json_syntax_error_names_the_line(hxgraph, tmp_path):
    (tmp_path / "g.json").write_text('{"name": "x",\n "buffers": [,]}')
    proc = subprocess.run(
        [str(hxgraph), "--graph", str(tmp_path / "g.json"), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "JSON syntax error at line 2" in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def mobilenet_run(hxgraph, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mb")
    g = graphs.build("mobilenetv2", {"size": 8, "channels": 16, "expansion": 4, "images": 2})
    proc, recs = run(hxgraph, tmp, g, "--rounds", "6", "--warmup", "1", npy=True)
    assert proc.returncode == 0, proc.stderr
    (tmp / "graph.json").write_text(json.dumps(g))
    return tmp, g, recs


@pytest.mark.parametrize(
    "model,params",
    [
        ("mobilenetv2", {"size": 8, "channels": 16, "expansion": 4, "images": 2}),
        ("inception", {"size": 6, "c_in": 16, "c1": 8, "c3r": 8, "c3": 16, "c5r": 8, "c5": 8, "cp": 8}),
        ("decoder", {"tokens": 16, "d_model": 32, "heads": 2, "d_ff": 64, "micro_batches": 2}),
    ],
)
@pytest.mark.parametrize("reuse", [False, True])
def test_every_node_output_equals_numpy(hxgraph, tmp_path, model, params, reuse):
    g = graphs.build(model, params, reuse)
    proc, recs = run(hxgraph, tmp_path, g, "--rounds", "2", "--warmup", "0", npy=True)
    assert proc.returncode == 0, proc.stderr
    res = check_graph(tmp_path / "g.json", tmp_path / "out.jsonl", tmp_path / "npy")
    assert res["status"] == "ok", res["reasons"]
    assert res["nodes_checked"] == len(g["nodes"]) and res["checksums_tied"] > 0


def test_a_wrong_output_fails_the_check(mobilenet_run, tmp_path):
    """Known answer for the check itself: one changed value in one node's
    saved output is named."""
    src, g, _ = mobilenet_run
    import shutil

    shutil.copytree(src / "npy", tmp_path / "npy")
    p = tmp_path / "npy" / "i1_project__out_c.npy"
    a = np.load(p)
    a[5] += 0.5
    np.save(p, a)
    res = check_graph(src / "graph.json", src / "out.jsonl", tmp_path / "npy")
    assert res["status"] == "failed"
    assert any("node i1_project (gemm): 1 of" in r for r in res["reasons"]), res["reasons"]
    # and the consumer of that output no longer matches it
    assert any("i1_res read i1_p" in r for r in res["reasons"]), res["reasons"]


def test_a_missing_npy_fails_the_check(mobilenet_run, tmp_path):
    src, g, _ = mobilenet_run
    import shutil

    shutil.copytree(src / "npy", tmp_path / "npy")
    (tmp_path / "npy" / "i0_dw__in_w.npy").unlink()
    res = check_graph(src / "graph.json", src / "out.jsonl", tmp_path / "npy")
    assert res["status"] == "failed" and any("missing i0_dw__in_w.npy" in r for r in res["reasons"])


def _per_trial(recs):
    nodes = node_table(recs)
    return nodes, {k: t.set_index("node") for k, t in nodes.groupby(["round", "group"])}


def test_dependencies_hold_in_every_group(mobilenet_run):
    """A child begins after every parent ended, in every trial of every group."""
    _, g, recs = mobilenet_run
    _, trials = _per_trial(recs)
    assert {k[1] for k in trials} == {"A", "B", "C", "D"}
    for (rnd, grp), t in trials.items():
        for n in g["nodes"]:
            for p in n["after"]:
                assert t.loc[n["name"], "begin"] >= t.loc[p, "end"], (rnd, grp, p, n["name"])
                assert t.loc[n["name"], "launch"] >= t.loc[p, "end"], (rnd, grp, p, n["name"])


def test_group_a_runs_one_node_at_a_time_in_the_fixed_order(mobilenet_run):
    _, _, recs = mobilenet_run
    order = [n["name"] for n in recs[0]["graph"]["nodes"]]
    _, trials = _per_trial(recs)
    for (rnd, grp), t in trials.items():
        if grp not in ("A", "C"):
            continue
        t = t.loc[order]
        # serial: each node launched after the previous one ended
        assert (t["launch"].to_numpy()[1:] >= t["end"].to_numpy()[:-1]).all(), (rnd, grp)


def test_engines_and_fused_entry(mobilenet_run):
    """Nodes run on their class's engine; in C and D the V nodes run on the
    entry's thread (vec) inside the entry's span."""
    _, _, recs = mobilenet_run
    cls = {n["name"]: n["class"] for n in recs[0]["graph"]["nodes"]}
    want = {"M": "mx", "V": "vec", "D": "dma"}
    for r in recs:
        if r["record"] != "trial":
            continue
        for n in r["nodes"]:
            assert n["engine"] == want[cls[n["name"]]]
        if r["group"] in ("C", "D"):
            assert all(r["entry_begin"] <= n["launch"] and n["end"] <= r["entry_end"] for n in r["nodes"])


def test_group_d_launches_independent_nodes_on_different_engines_at_once(mobilenet_run):
    """D launches every ready M and D node in one pass, before it handles any
    completion: the ready nodes of step 0 on mx and dma (the expansions and
    the prefetches) are all launched before any node that depends on
    something, and all of them run.  In C the same nodes wait for each
    other (a barrier after each).  Relations of launch order only, so a
    descheduled thread cannot break them."""
    _, g, recs = mobilenet_run
    first = ["i0_expand", "i1_expand", "prefetch_We", "prefetch_Wd", "prefetch_Wp"]
    later = [n["name"] for n in g["nodes"] if n["after"]]
    _, trials = _per_trial(recs)
    seen = set()
    for (rnd, grp), t in trials.items():
        seen.add(grp)
        f = t.loc[first]
        assert (f["end"] > f["begin"]).all() and set(f["engine"]) == {"mx", "dma"}
        if grp == "D":
            assert f["launch"].max() <= t.loc[later, "launch"].min(), (rnd, f)
        if grp == "C":
            ordered = f.sort_values("launch")
            assert (ordered["launch"].to_numpy()[1:] >= ordered["end"].to_numpy()[:-1]).all(), (rnd, f)
    assert {"C", "D"} <= seen


def test_trials_carry_verified_checksums_and_times(mobilenet_run):
    _, _, recs = mobilenet_run
    assert recs[0]["record"] == "meta" and recs[-1]["record"] == "end" and recs[-1]["status"] == "ok"
    tr = [r for r in recs if r["record"] == "trial"]
    assert len(tr) == 4 * 7 and all(r["checksums_ok"] for r in tr)
    for r in tr:
        assert r["e2e_ns"] == r["alloc_ns"] + r["input_ns"] + r["device_ns"] + r["free_ns"]
        assert r["device_ns"] == r["host_end"] - r["host_begin"]
        assert all(r["host_begin"] <= n["launch"] <= n["begin"] <= n["end"] <= r["host_end"] for n in r["nodes"])


def test_in_place_elementwise_node_is_accepted_and_checked(hxgraph, tmp_path):
    g = {
        "name": "inplace",
        "buffers": [{"name": "x", "bytes": 4 * 64}, {"name": "y", "bytes": 4 * 64}],
        "nodes": [
            {"name": "a", "op": "add", "rows": 4, "cols": 16, "inputs": {"a": "x", "b": "y"}, "outputs": {"y": "x"}},
            {
                "name": "r",
                "op": "relu6",
                "rows": 4,
                "cols": 16,
                "inputs": {"x": "x"},
                "outputs": {"y": "x"},
                "after": ["a"],
            },
        ],
    }
    proc, recs = run(hxgraph, tmp_path, g, "--rounds", "2", "--warmup", "0", npy=True)
    assert proc.returncode == 0, proc.stderr
    res = check_graph(tmp_path / "g.json", tmp_path / "out.jsonl", tmp_path / "npy")
    assert res["status"] == "ok", res["reasons"]
