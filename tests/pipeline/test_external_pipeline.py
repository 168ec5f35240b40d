"""The `external` target end to end on a tiny config: ONNX Runtime replicates
per point, the comparison per point, results/host/external.csv."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest

from pipeline_util import TINY, job_counts, snakemake, write_config


def test_external_target_on_a_tiny_config(tmp_path):
    pytest.importorskip("onnxruntime")
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"] = {"tiny": cfg["sweeps"]["tiny"] | {"workloads": ["mvd"], "points": [{"name": "small", "x": 1}]}}
    write_config(tmp_path, cfg)
    dry = snakemake(tmp_path, "-n", "external")
    assert dry.returncode == 0, dry.stderr[-3000:]
    reps = cfg["run"]["replicates"]
    assert job_counts(dry.stdout + dry.stderr).get("ort_run") == reps  # one per runner replicate
    r = snakemake(tmp_path, "external")
    assert r.returncode == 0, r.stderr[-3000:]
    df = pd.read_csv(tmp_path / "results/host/external.csv")
    assert len(df) == 1
    row = df.iloc[0]
    assert (row["sweep"], row["point"], row["workload"]) == ("tiny", "small", "mvd")
    assert row["replicates_ort"] == reps and row["replicates_runner"] == reps
    assert row["backend"].startswith("onnxruntime")
    for col in ("speedup_D_over_B_ort", "speedup_B_ort_over_A_ort", "kernel_ratio_M", "kernel_ratio_D"):
        assert row[f"{col}_lo"] <= row[col] <= row[f"{col}_hi"]
    # duration matching ran against the runner's replicates; the gate gave a
    # verdict or named what withheld it (never a blank)
    assert row["matching"].startswith("M m ") and "V v_passes" in row["matching"] and "D d_rows" in row["matching"]
    assert all(pd.notna(row[f"{t}_alone_error"]) for t in "MVD")
    assert row["verdict_withheld"] == "none" or set(row["verdict_withheld"].split(",")) <= {
        "duration_mismatch",
        "no_parallelism",
    }
    assert (row["verdict_vs_B_ort_key"] == "withheld") == (row["verdict_withheld"] != "none")
    assert row["gap_B_ort_ms"] >= 0 and row["gap_D_ms"] >= 0
    assert len(row["speedup_D_over_B_ort_pairs"].split()) == reps
    # replicates: same inputs (seed), different round orders
    orders, metas = [], []
    for rep in range(reps):
        recs = [
            json.loads(line)
            for line in (tmp_path / f"results/host/external/raw/tiny/mvd/small/ort{rep}.jsonl").read_text().splitlines()
        ]
        metas.append(recs[0]["args"])
        matching = recs[0]["matching"]
        assert set(matching) == {"M", "V", "D"} and recs[0]["point_tasks"]["M"]["m"] == matching["M"]["runner_size"]
        orders.append(tuple((t["group"], t["workload"]) for t in recs if t["record"] == "trial" and t["round"] == 0))
    assert len({m["seed"] for m in metas}) == 1 and len({m["order_seed"] for m in metas}) == reps
    assert len(set(orders)) > 1
    # ONNX Runtime's timelines of the point (part of `all`): a figure, and a
    # trace with one slice per profiled node of the representative trials
    tl = snakemake(
        tmp_path,
        "results/host/external/figures/timeline/tiny/mvd/small.png",
        "results/host/external/timeline/tiny/mvd/small.perfetto.json",
    )
    assert tl.returncode == 0, tl.stderr[-3000:]
    assert (tmp_path / "results/host/external/figures/timeline/tiny/mvd/small.png").stat().st_size > 10_000
    trace = json.loads((tmp_path / "results/host/external/timeline/tiny/mvd/small.perfetto.json").read_text())
    from hxfuse.analysis import timeline
    from hxfuse.runner.records import read_run

    assert timeline.trace_problems(trace) == [] and trace["otherData"]["check_status"] == "ok"
    run = read_run(tmp_path / "results/host/external/raw/tiny/mvd/small/ort0.jsonl")
    chosen = set(timeline.representative_trials(run)["trial_id"])
    nodes = run.nodes[run.nodes["trial_id"].isin(chosen)]
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] == "node"]
    assert len(slices) == len(nodes) > 0
    procs = {e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"}
    assert {"mvd A_ort", "mvd B_ort", "mvd B_ort_graph"} <= procs


def test_points_onnx_runtime_cannot_express_are_left_out_and_refused(tmp_path):
    """A point whose option changes the tasks' work in a way ONNX Runtime
    cannot express (here D double-buffered) is not among the external points,
    and asking for its ONNX Runtime run fails before any work, naming it."""
    pytest.importorskip("onnxruntime")
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"] = {
        "tiny": cfg["sweeps"]["tiny"]
        | {"workloads": ["mvd"], "points": [{"name": "small", "x": 1}, {"name": "buf2", "x": 2, "d_buffers": 2}]}
    }
    write_config(tmp_path, cfg)
    dry = snakemake(tmp_path, "-n", "external_full")
    assert dry.returncode == 0, dry.stderr[-3000:]
    out = dry.stdout + dry.stderr
    assert "raw/tiny/mvd/small/ort0.jsonl" in out and "raw/tiny/mvd/buf2/" not in out
    r = snakemake(tmp_path, "results/host/external/raw/tiny/mvd/buf2/ort0.jsonl")
    assert r.returncode != 0
    log = (tmp_path / "logs/host/external/tiny/mvd/buf2/ort0.log").read_text()
    assert "hxfuse.external.ort: error: --d-buffers 2: cannot be expressed under ONNX Runtime" in log
    assert not list((tmp_path / "results/host/external/raw").rglob("ort0.jsonl*"))
