"""The gpu target through the whole pipeline without a GPU: in a copy of the
repository, the build compiles tests/gpu/records_harness.cu (hxrun-cuda's
own record writers, synthetic timings, real CPU outputs) in place of the
runner, and the driver probe answers as an H200 would.  Every rule after the
build then meets GPU-shaped records: run, check against numpy, aggregate,
verdicts, timelines, Perfetto traces, figures and the LaTeX tables.  The
timings are made up, so nothing here is a result; what is tested is that the
pipeline reads the GPU runner's records unchanged."""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

from gpu_util import REPO, nvcc

sys.path.insert(0, str(REPO / "tests"))
from pipeline_util import copy_repo, snakemake, write_config  # noqa: E402

pytestmark = pytest.mark.slow

H200 = repr(
    {
        "driver": True,
        "error": None,
        "cuda_version": 13000,
        "gpus": [{"name": "NVIDIA H200", "compute_capability": "9.0"}],
    }
)
CONFIG = {
    "targets": ["gpu"],
    "run": {"warmup": 1, "rounds": 6, "replicates": 2, "timeout_s": 120},
    "graph_study": None,
    "serve": None,
    "sweeps": {
        "gpu_tiny": {
            "title": "GPU records through the pipeline",
            "variable": "point",
            "log_x": False,
            "workloads": ["mv", "mvd"],
            "base": {
                "m_shape": [32, 32, 32],
                "v_shape": [16, 64],
                "v_passes": 2,
                "d_shape": [16, 256],
                "d_repeat": 2,
                "d_desc_rows": 8,
                "affinity": "none",
            },
            "points": [{"name": "tiny", "x": 1, "label": "tiny"}],
        }
    },
}


def _stand_in(root: Path) -> None:
    """The copy builds the harness as its runner and probes an H200."""
    shutil.copy2(REPO / "tests" / "gpu" / "records_harness.cu", root / "kernels" / "cuda" / "records_harness.cu")
    mk = root / "kernels" / "cuda" / "cuda.mk"
    text = mk.read_text()
    assert "CUDA_SRC := cuda/hxrun_cuda.cu" in text
    mk.write_text(text.replace("CUDA_SRC := cuda/hxrun_cuda.cu", "CUDA_SRC := cuda/records_harness.cu"))
    gpu = root / "hxfuse" / "config" / "gpu.py"
    gpu.write_text(gpu.read_text() + f"\n\ndef probe_driver():\n    return {H200}\n")


def test_gpu_records_through_the_pipeline(tmp_path):
    compiler = nvcc()
    root = copy_repo(tmp_path / "repo")
    _stand_in(root)
    cfg = dict(CONFIG, target_settings={"gpu": {"nvcc": compiler, "cuda_arch": "90"}})
    write_config(root, cfg)
    r = snakemake(root, "all", cores=2, timeout=1500)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-6000:]
    res = root / "results" / "gpu"
    for f in ("summary.json", "summary.csv", "trials.csv.gz", "verdicts.csv", "report/verdicts.html"):
        assert (res / f).is_file(), f
    for wl in ("mv", "mvd"):
        assert (res / "figures" / "timeline" / "gpu_tiny" / wl / "tiny.png").is_file()
        check = (res / "check" / "gpu_tiny" / wl / "tiny" / "rep0.json").read_text()
        assert '"status": "ok"' in check
    assert (root / "paper" / "generated" / "results_table.tex").is_file()
    rows = list(csv.DictReader((res / "summary.csv").open()))
    assert {r["group"] for r in rows} >= {"A", "B", "C", "D"}
