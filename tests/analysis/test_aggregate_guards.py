"""Aggregation refuses what it must not read as a result: a damaged
intermediate (a sidecar or check cut short) and a stale replicate (measured
for other parameters than the point's current ones), each named with the
command that redoes it; and the target preflight never turns a refused
target list into a traceback."""

import copy

import pytest

from hxfuse.config import validate as hxvalidate
from hxfuse.config import points as hxpoints
from hxfuse.config import preflight as hxpreflight
from conftest import synthetic_run
from hxfuse.runner.integrity import IntegrityError
from pipeline_util import TINY, aggregate_synthetic


def tiny_config():
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["workloads"] = ["mv"]
    return hxvalidate.validate(cfg)


def records(p, rep, i):
    return synthetic_run({"M": 100_000, "V": 80_000}, workloads=("mv",), rounds=4, seed=i)


def cut_in_half(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_intact_files_aggregate(tmp_path):
    doc = aggregate_synthetic(tmp_path, tiny_config(), "host", records)
    assert doc["failed_points"] == []


@pytest.mark.parametrize(
    "kind, redo",
    [
        ("raw/tiny/mv/big/rep1.provenance.json", "raw/tiny/mv/big/rep1.jsonl"),
        ("check/tiny/mv/big/rep1.json", "check/tiny/mv/big/rep1.json"),
    ],
)
def test_damaged_intermediate_is_named_with_the_command_that_redoes_it(tmp_path, kind, redo):
    with pytest.raises(IntegrityError) as err:
        aggregate_synthetic(tmp_path, tiny_config(), "host", records, damage=lambda out: cut_in_half(out / kind))
    msg = str(err.value)
    assert f"{tmp_path / kind}: damaged (not valid JSON" in msg
    assert f"redo it with: snakemake --cores 4 -f {tmp_path / redo} all" in msg


def test_missing_sidecar_is_named(tmp_path):
    kind = "raw/tiny/mv/small/rep0.provenance.json"
    with pytest.raises(IntegrityError, match="rep0.provenance.json: damaged"):
        aggregate_synthetic(tmp_path, tiny_config(), "host", records, damage=lambda out: (out / kind).unlink())


def test_stale_replicate_is_refused_with_its_rerun_command(tmp_path):
    """A sidecar whose point_hash is not the point's current one: the
    replicate ran with other parameters (metadata lost, --touch, mtime
    triggers) and is refused, naming it and how to rerun it."""
    cfg = tiny_config()
    stale = "raw/tiny/mv/small/rep1.provenance.json"

    def make_stale(out):
        import json

        path = out / stale
        doc = json.loads(path.read_text())
        doc["point_hash"] = "0123456789ab"
        path.write_text(json.dumps(doc))

    with pytest.raises(IntegrityError) as err:
        aggregate_synthetic(tmp_path, cfg, "host", records, damage=make_stale)
    msg = str(err.value)
    raw = tmp_path / "raw/tiny/mv/small/rep1.jsonl"
    want = [p for p in hxpoints.aggregate_points(cfg, "host") if p["id"] == "tiny/mv/small"][0]["point_hashes"][1]
    assert f"{raw}: measured for point_hash 0123456789ab, the point is now {want}" in msg
    assert f"rerun it with: snakemake --cores 4 -f {raw} all" in msg
    assert "rep0" not in msg  # only the stale replicate is named


def test_point_hashes_follow_the_parameters():
    cfg = tiny_config()
    before = {p["id"]: p["point_hashes"] for p in hxpoints.aggregate_points(cfg, "host")}
    cfg["sweeps"]["tiny"]["points"][0]["v_passes"] = 2
    after = {p["id"]: p["point_hashes"] for p in hxpoints.aggregate_points(cfg, "host")}
    assert before["tiny/mv/small"] != after["tiny/mv/small"]
    assert before["tiny/mv/big"] == after["tiny/mv/big"]
    assert len(set(before["tiny/mv/small"])) == 2  # each replicate its own seed


@pytest.mark.parametrize(
    "cfg, error, ready",
    [
        ({"targets": ["host"]}, "", True),
        ({"targets": ["host", "gpu"]}, "config.targets[1]: 'gpu' is not one of", False),
        ({"targets": [3]}, "config.targets[0]: 3 is not of type 'string'", False),
        ({"targets": "host"}, "config.targets: 'host' is not of type 'array'", False),
        ({"targets": ["hexagon-sim"]}, "config.target_settings.hexagon-sim.tools_root: 5 is not", False),
        ({"targets": ["hexagon"]}, "config.run.rounds: 0 is less than the minimum of 1", True),
    ],
)
def test_preflight_runs_only_on_targets_the_validation_accepted(cfg, error, ready):
    assert hxpreflight.preflight_ready(cfg, error) is ready
