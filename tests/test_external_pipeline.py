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
    cfg["sweeps"] = {"tiny": cfg["sweeps"]["tiny"] | {"workloads": ["mvd"],
                                                      "points": [{"name": "small", "x": 1}]}}
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
    # replicates: same inputs (seed), different round orders
    orders, metas = [], []
    for rep in range(reps):
        recs = [json.loads(line) for line in
                (tmp_path / f"results/host/external/raw/tiny/mvd/small/ort{rep}.jsonl").read_text().splitlines()]
        metas.append(recs[0]["args"])
        orders.append(tuple((t["group"], t["workload"]) for t in recs if t["record"] == "trial" and t["round"] == 0))
    assert len({m["seed"] for m in metas}) == 1 and len({m["order_seed"] for m in metas}) == reps
    assert len(set(orders)) > 1
