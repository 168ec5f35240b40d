"""Known answers for the graph side of workload 4 without the C runner: ready
profiles, derived edges and the reuse planner, the study validation, and the
summary's paired speedups."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hxfuse.graph import profile as graphprofile
from hxfuse.graph import build as graphs
from hxfuse.graph import stats as graphstats
from hxfuse.graph import study as graphstudy
from hxfuse.config.load import ConfigError

REPO = Path(__file__).resolve().parents[2]


def hand_graph() -> dict:
    """a (M) -> c (V), b (D) -> c; a -> d (M); c, d -> e (V); f (D) alone."""

    def n(name, op, after=()):
        return {"name": name, "op": op, "after": list(after), "inputs": {}, "outputs": {}}

    return {
        "name": "hand",
        "buffers": [],
        "nodes": [
            n("a", "gemm"),
            n("b", "copy"),
            n("c", "relu6", ["a", "b"]),
            n("d", "gemm", ["a"]),
            n("e", "add", ["c", "d"]),
            n("f", "copy"),
        ],
    }


def test_ready_profile_of_a_hand_made_graph():
    prof = graphprofile.ready_profile(hand_graph())
    got = {(r.step, r["class"]): r.ready for _, r in prof.iterrows()}
    want = {
        (0, "M"): 1,
        (0, "V"): 0,
        (0, "D"): 2,
        (1, "M"): 1,
        (1, "V"): 1,
        (1, "D"): 0,
        (2, "M"): 0,
        (2, "V"): 1,
        (2, "D"): 0,
    }
    assert got == want
    s = graphprofile.profile_summary(hand_graph())
    assert (s["nodes"], s["steps"], s["max_ready"], s["mixed_steps"], s["edges"]) == (6, 3, 3, 2, 5)
    assert (s["n_M"], s["n_V"], s["n_D"]) == (2, 2, 2)


def test_levels_refuse_a_cycle_and_an_unknown_node():
    g = hand_graph()
    g["nodes"][0]["after"] = ["e"]
    with pytest.raises(ValueError, match="cycle"):
        graphprofile.levels(g)
    g = hand_graph()
    g["nodes"][1]["after"] = ["zz"]
    with pytest.raises(ValueError, match="unknown node 'zz'"):
        graphprofile.levels(g)


def chain(reuse: bool) -> dict:
    """Two independent chains x_i -> relu6 -> t_i -> relu6 -> y_i (graph
    outputs y_i).  A serial plan lets chain 1's t reuse chain 0's t."""
    b = graphs.Builder("chain")
    for i in range(2):
        b.buf(f"x{i}", 4, 8), b.buf(f"t{i}", 4, 8), b.buf(f"y{i}", 4, 8)
    for i in range(2):
        b.node(f"r{i}", "relu6", {"x": f"x{i}"}, {"y": f"t{i}"}, rows=4, cols=8)
        b.node(f"s{i}", "relu6", {"x": f"t{i}"}, {"y": f"y{i}"}, rows=4, cols=8)
    return b.graph(reuse=reuse)


def test_derived_edges_without_reuse_are_the_data_flow():
    g = chain(False)
    assert {n["name"]: n["after"] for n in g["nodes"]} == {"r0": [], "s0": ["r0"], "r1": [], "s1": ["r1"]}
    assert not any("alias" in b for b in g["buffers"])
    assert graphprofile.profile_summary(g)["steps"] == 2


def test_reuse_shares_storage_and_adds_the_ordering_it_implies():
    g = chain(True)
    alias = {b["name"]: b.get("alias") for b in g["buffers"]}
    assert alias == {"x0": None, "t0": None, "y0": None, "x1": None, "t1": "t0", "y1": None}
    after = {n["name"]: n["after"] for n in g["nodes"]}
    # r1 overwrites t0's storage: after s0 read it (write after read) and r0 wrote it
    assert set(after["r1"]) == {"r0", "s0"} and after["s1"] == ["r1"]
    assert graphprofile.profile_summary(g)["steps"] == 4  # the two chains now run one after the other


def test_partial_writers_of_one_destination_need_no_edge_between_them():
    g = graphs.build("inception", {"size": 4, "c_in": 8, "c1": 4, "c3r": 4, "c3": 4, "c5r": 4, "c5": 4, "cp": 4})
    cats = {n["name"]: n["after"] for n in g["nodes"] if n["op"] == "copy"}
    assert len(cats) == 4
    for name, after in cats.items():
        assert not set(after) & set(cats), (name, after)


def test_builders_give_the_published_structure():
    dec = graphprofile.profile_summary(graphs.build("decoder"))
    # per micro-batch and head: q, k, v, score, ctx, o projections (6 M) and a softmax;
    # per micro-batch: 1 head sum + 2 residual adds + swiglu (V) and gate, up, down (3 M)
    assert (dec["n_M"], dec["n_V"], dec["n_D"]) == (2 * (2 * 6 + 3), 2 * (2 + 1 + 2 + 1), 0)
    inc = graphprofile.profile_summary(graphs.build("inception", {"images": 1}))
    assert (inc["n_M"], inc["n_V"], inc["n_D"]) == (6, 9, 4)
    mb = graphprofile.profile_summary(graphs.build("mobilenetv2"))
    assert (mb["n_M"], mb["n_V"], mb["n_D"]) == (4, 6, 3)
    # step 0: both images' expansions and the three prefetches
    prof = graphprofile.ready_profile(graphs.build("mobilenetv2"))
    assert prof[prof.step == 0].set_index("class")["ready"].to_dict() == {"M": 2, "V": 0, "D": 3}


def test_decoder_checks_its_heads():
    with pytest.raises(ValueError, match="not a multiple of heads"):
        graphs.build("decoder", {"d_model": 100, "heads": 3})


# -- the study ----------------------------------------------------------------


def write_study(tmp_path, text: str) -> str:
    p = tmp_path / "study.yaml"
    p.write_text(text)
    return str(p)


def test_default_and_named_studies_load():
    d = graphstudy.load_study("graphs-default")
    assert [p["name"] for p in d["points"]] == ["mobilenetv2"]
    full = graphstudy.load_study("graphs")
    assert {p["model"] for p in full["points"]} == {"decoder", "inception", "mobilenetv2"}
    assert any(p["reuse"] for p in full["points"])
    assert graphstudy.load_study(None)["points"] == []


@pytest.mark.parametrize(
    "text,message",
    [
        ("graphs: {points: [{name: a, model: resnet}]}", "model: 'resnet' is not a graph model"),
        ("graphs: {points: [{name: a, model: decoder, params: {layers: 2}}]}", "decoder has no parameter 'layers'"),
        ("graphs: {points: [{name: a, model: decoder, params: {tokens: 0}}]}", "params.tokens: 0 is not an integer"),
        ("graphs: {points: [{name: a, model: decoder, params: {d_model: 100, heads: 3}}]}", "not a multiple of heads"),
        ("graphs: {points: [{name: a, model: decoder}, {name: a, model: inception}]}", "name 'a' given twice"),
        ("graphs: {points: [{name: a, model: decoder, colour: red}]}", "unknown key 'colour'"),
        ("graphs: {run: {rounds: 0}, points: [{name: a, model: decoder}]}", "run.rounds: 0 is not an integer"),
        ("graphs: {points: [{name: 1a, model: decoder}]}", "is not a name"),
        ("graphs: {points: [{name: a, model: decoder, reuse: 1}]}", "reuse: 1 is not true or false"),
        ("sweeps: {}", "a graph study is a mapping with `graphs`"),
    ],
)
def test_bad_studies_are_refused_with_a_clear_line(tmp_path, text, message):
    with pytest.raises(ConfigError) as exc:
        graphstudy.load_study(write_study(tmp_path, text))
    assert message in str(exc.value), str(exc.value)


def test_bad_graph_study_stops_the_workflow_before_any_job(tmp_path):
    path = write_study(tmp_path, "graphs: {points: [{name: a, model: resnet}]}")
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "graphs", "--config", f"graph_study={path}"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert res.returncode != 0
    assert "model: 'resnet' is not a graph model" in res.stdout + res.stderr


# -- the summary ----------------------------------------------------------------


def synthetic_trials(
    ta: float, tb: float, tc: float, td: float, reps: int = 3, rounds: int = 10, noise: float = 0.0
) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for rep in range(reps):
        for rnd in range(rounds):
            f = 1.0 + noise * rng.standard_normal()
            for g, t in zip("ABCD", (ta, tb, tc, td)):
                rows.append(
                    {
                        "point": "p",
                        "replicate": rep,
                        "round": rnd,
                        "group": g,
                        "device_ns": t * f,
                        "e2e_ns": t * f + 100.0,
                        "prep_ns": 100.0,
                        "parallelism": 1.0,
                    }
                )
    return pd.DataFrame(rows)


def test_paired_speedups_have_the_known_values():
    tr = synthetic_trials(2000.0, 1000.0, 1500.0, 1000.0, noise=0.05)
    s = graphstats.summarize_point(tr, failed=False, n_resamples=200)
    # a common per-round factor cancels in a paired ratio: exact, zero-width intervals
    assert s["DA_device"] == pytest.approx(2.0) and s["DA_device_lo"] == pytest.approx(2.0)
    assert s["DA_device_hi"] == pytest.approx(2.0)
    assert s["DB_device"] == pytest.approx(1.0) and s["DC_device"] == pytest.approx(1.5)
    # end to end: (2000f + 100) / (1000f + 100), about 1.91 near f = 1
    assert 1.85 < s["DA_e2e"] < 1.95
    assert s["D_prep_share"] == pytest.approx(100.0 / 1100.0, rel=0.1)


def test_a_failed_point_gets_no_speedup_but_keeps_its_medians():
    tr = synthetic_trials(2000.0, 1000.0, 1500.0, 1000.0)
    s = graphstats.summarize_point(tr, failed=True, n_resamples=50)
    assert math.isnan(s["DA_device"]) and math.isnan(s["DB_e2e_hi"])
    assert s["A_device_ns"] == pytest.approx(2000.0)


def test_summary_marks_failed_points_with_reasons():
    tr = synthetic_trials(2000.0, 1000.0, 1500.0, 1000.0)
    points = [{"name": "p", "model": "mobilenetv2", "label": "p", "reuse": False}]
    prof = {"p": graphprofile.profile_summary(hand_graph())}
    checks = {
        "p": [
            {"status": "ok", "reasons": [], "replicate": 0},
            {"status": "failed", "reasons": ["node x: wrong"], "replicate": 1},
        ]
    }
    s = graphstats.summarize(tr, points, checks, prof, {"bootstrap": 50})
    assert bool(s.loc[0, "failed"]) and "rep1: node x: wrong" in s.loc[0, "failed_reasons"]
    assert math.isnan(s.loc[0, "DA_device"]) and s.loc[0, "DA_device_verdict"] == "none"


@pytest.mark.parametrize(
    "lo,hi,v",
    [
        (1.05, 1.2, "faster"),
        (0.8, 0.9, "slower"),
        (0.98, 1.02, "no difference"),
        (0.99, 1.1, "undetermined"),
        (math.nan, 1.0, "none"),
    ],
)
def test_verdict_against_the_minimum_effect(lo, hi, v):
    assert graphstats.verdict(lo, hi, 0.03) == v


def test_paired_ratios_pair_within_replicate_and_round():
    tr = pd.DataFrame(
        [
            {"replicate": 0, "round": 0, "group": "A", "device_ns": 30.0},
            {"replicate": 0, "round": 0, "group": "D", "device_ns": 10.0},
            {"replicate": 1, "round": 0, "group": "A", "device_ns": 40.0},
            {"replicate": 1, "round": 0, "group": "D", "device_ns": 20.0},
            {"replicate": 1, "round": 1, "group": "A", "device_ns": 50.0},  # no D: not paired
        ]
    )
    r = graphstats.paired_ratios(tr, "A", "D")
    assert sorted(r["ratio"]) == [2.0, 3.0]


def test_trial_table_metrics_from_a_synthetic_record():
    meta = {"record": "meta", "graph": {"nodes": [{"name": "a", "class": "M"}, {"name": "b", "class": "V"}]}}
    trial = {
        "record": "trial",
        "warmup": False,
        "round": 0,
        "group": "D",
        "host_begin": 0,
        "host_end": 1000,
        "device_ns": 1000,
        "e2e_ns": 1300,
        "alloc_ns": 100,
        "input_ns": 150,
        "free_ns": 50,
        "checksums_ok": True,
        "nodes": [
            {"name": "a", "engine": "mx", "launch": 0, "begin": 10, "end": 810, "cpu_ns": 800, "pack_ns": 30},
            {"name": "b", "engine": "vec", "launch": 0, "begin": 20, "end": 620, "cpu_ns": 600, "pack_ns": 0},
        ],
    }
    warm = {**trial, "warmup": True, "round": -1}
    t = graphstats.trial_table([meta, warm, trial], "p", 2)
    assert len(t) == 1
    row = t.iloc[0]
    assert row["prep_ns"] == 300 and row["node_busy_ns"] == 1400 and row["node_cpu_ns"] == 1400
    assert row["parallelism"] == pytest.approx(1.4) and row["pack_ns"] == 30 and row["replicate"] == 2
    nodes = graphstats.node_table([meta, warm, trial])
    assert list(nodes["class"]) == ["M", "V"] and set(nodes["round"]) == {0}


def test_machine_load_takes_the_larger_readable_value():
    got = graphstats.machine_load(
        [{"other_busy_cores_before": 0.2, "load_average_before": 1.5}, {"other_busy_cores_after": 0.9}]
    )
    assert got["other_busy_cores"] == 0.9 and got["load_average_before"] == 1.5
    assert math.isnan(got["online_cores"])  # not in these records
    got = graphstats.machine_load([{"other_busy_cores_before": -1}, {"other_busy_cores_after": -1}])
    assert math.isnan(got["other_busy_cores"])


def test_a_loaded_replicate_makes_the_verdict_inconclusive():
    tr = synthetic_trials(2000.0, 1000.0, 1500.0, 1000.0)
    points = [{"name": "p", "model": "mobilenetv2", "label": "p", "reuse": False}]
    prof = {"p": graphprofile.profile_summary(hand_graph())}
    checks = {"p": [{"status": "ok", "reasons": [], "replicate": r} for r in range(3)]}
    idle = {"p": [{"other_busy_cores": 0.1, "online_cores": 2}] * 3}
    busy = {"p": [{"other_busy_cores": 0.1, "online_cores": 2}, {"other_busy_cores": 0.9, "online_cores": 2}]}
    s = graphstats.summarize(tr, points, checks, prof, {"bootstrap": 50}, idle)
    assert not s.loc[0, "loaded"] and s.loc[0, "DA_device_verdict"] == "faster"
    s = graphstats.summarize(tr, points, checks, prof, {"bootstrap": 50}, busy)
    assert s.loc[0, "loaded"] and s.loc[0, "DA_device_verdict"] == "inconclusive (loaded)"
    assert s.loc[0, "DA_device"] == pytest.approx(2.0) and s.loc[0, "other_busy_cores_max"] == 0.9


def test_graph_table_rows(tmp_path):
    from hxfuse.graph import table as graphtable

    tr = synthetic_trials(2000.0, 1000.0, 1500.0, 1000.0)
    points = [
        {"name": "p", "model": "mobilenetv2", "label": "ok_point", "reuse": False},
        {"name": "q", "model": "mobilenetv2", "label": "bad", "reuse": True},
    ]
    prof = {n: graphprofile.profile_summary(hand_graph()) for n in "pq"}
    checks = {
        "p": [{"status": "ok", "reasons": [], "replicate": 0}],
        "q": [{"status": "failed", "reasons": ["wrong"], "replicate": 0}],
    }
    load = {"p": [{"other_busy_cores": 1.9, "online_cores": 2}], "q": []}
    s = graphstats.summarize(pd.concat([tr, tr.assign(point="q")]), points, checks, prof, {"bootstrap": 50}, load)
    s.to_csv(tmp_path / "s.csv", index=False)
    out = tmp_path / "t.tex"
    graphtable.write_table({"host": tmp_path / "s.csv"}, REPO / "workflow/templates/graph_table.tex.j2", out)
    text = out.read_text()
    row_p = next(ln for ln in text.splitlines() if "ok\\_point" in ln)
    assert "$^\\dagger$" in row_p and "\\hxspd{2.00}{2.00}{2.00}" in row_p and "6 (2/2/2)" in row_p
    row_q = next(ln for ln in text.splitlines() if ln.startswith("host & bad"))
    assert "failed correctness check" in row_q and "hxspd" not in row_q
