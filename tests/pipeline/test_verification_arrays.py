"""The verification round's arrays live only as long as their check needs
them, and the check keeps its strength (docs/outputs.md, "The verification
arrays").

The runner saves every input and output of its verification round as .npy
files; the check is their only reader.  They are ``temp()`` outputs of the
run: Snakemake deletes them once the check has run, and their SHA-256 stay in
the provenance sidecar.  A default ``all`` kept 2.2 GB of them (540 files);
now it keeps none.  Known answer: a wrong output planted in one replicate's
arrays before its check (the sidecar resealed, as if the runner itself had
written it, so that only the numpy reference can tell) fails that point,
named, and its arrays are gone afterwards all the same.  Snakemake's
``--notemp`` is the switch that keeps them for debugging.
"""

import copy
import json
import shutil

import numpy as np
import pytest

from hxfuse.runner import integrity
from pipeline_util import TINY, copy_repo, job_counts, snakemake, write_config

pytestmark = pytest.mark.skipif(
    not shutil.which("make") or not shutil.which("cc"),
    reason="needs make and a C compiler: apt-get install build-essential",
)

POINT = "tiny/mv/small"
RAW = "results/host/raw/" + POINT
NPY = "results/host/npy/" + POINT
SUMMARY = "results/host/summary.json"


def _config() -> dict:
    cfg = copy.deepcopy(TINY)
    sweep = cfg["sweeps"]["tiny"]
    cfg["sweeps"] = {"tiny": sweep | {"workloads": ["mv"], "points": [{"name": "small", "x": 1}]}}
    return cfg  # 2 replicates


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    wd = copy_repo(tmp_path_factory.mktemp("arrays"))
    write_config(wd, _config())
    # Both replicates' runs only, with --notemp: their arrays stay for the
    # wrong output to be planted in (and --notemp is shown to keep them).
    res = snakemake(wd, "--notemp", f"{RAW}/rep0.jsonl", f"{RAW}/rep1.jsonl")
    assert res.returncode == 0, res.stderr[-4000:]
    for rep in (0, 1):
        assert list((wd / NPY / f"rep{rep}").rglob("*.npy")), "--notemp kept no arrays"
    # the planted wrong output: one element of M's result in replicate 0
    verify = next(
        json.loads(line) for line in (wd / f"{RAW}/rep0.jsonl").read_text().splitlines() if '"verify"' in line
    )
    path = wd / NPY / "rep0" / verify["files"]["M_C"]
    c = np.load(path)
    c[2, 7] += 0.5
    np.save(path, c)
    side = wd / f"{RAW}/rep0.provenance.json"
    doc = json.loads(side.read_text())
    doc["raw_sha256"] = integrity.raw_hashes(wd / f"{RAW}/rep0.jsonl", wd / NPY / "rep0")
    side.write_text(json.dumps(doc))
    # then the checks and the aggregation, as `all` runs them (no --notemp)
    res = snakemake(wd, SUMMARY)
    assert res.returncode == 0, res.stderr[-4000:]
    return wd, res


def test_the_planted_wrong_output_fails_its_point_naming_it(work):
    wd, res = work
    bad = json.loads((wd / f"results/host/check/{POINT}/rep0.json").read_text())
    assert bad["status"] == "failed" and bad["sidecar_sha256"] == "ok", bad
    assert any("mv: M.C: 1 of" in r and "(2, 7)" in r for r in bad["reasons"]), bad["reasons"]
    good = json.loads((wd / f"results/host/check/{POINT}/rep1.json").read_text())
    assert good["status"] == "ok" and good["sidecar_sha256"] == "ok", good["reasons"]
    failed = json.loads((wd / SUMMARY).read_text())["failed_points"]
    assert [f["point_id"] for f in failed] == [POINT] and "M.C" in failed[0]["reason"], failed
    assert f"point host/{POINT}/rep0 marked FAILED by its check" in res.stderr


def test_the_arrays_are_gone_after_their_check_and_their_hashes_stay(work):
    wd, _ = work
    assert not list((wd / "results").rglob("*.npy")), "arrays kept after their check"
    for rep in (0, 1):
        side = json.loads((wd / f"{RAW}/rep{rep}.provenance.json").read_text())
        assert any(k.startswith("npy/mv/") for k in side["raw_sha256"]), side["raw_sha256"]


def test_deleted_arrays_rerun_nothing_and_notemp_keeps_a_forced_replicates(work):
    wd, _ = work
    res = snakemake(wd, "-n", SUMMARY)
    assert "Nothing to be done" in res.stdout + res.stderr, res.stdout[-2000:]
    res = snakemake(wd, "--notemp", "-f", f"{RAW}/rep1.jsonl", SUMMARY)
    assert res.returncode == 0, res.stderr[-4000:]
    assert {"run", "check", "aggregate"} <= set(job_counts(res.stdout + res.stderr))
    assert list((wd / NPY / "rep1").rglob("*.npy")), "--notemp did not keep the forced replicate's arrays"
