"""The workflow as other Snakemake users meet it: bad target settings refused
before any job without a traceback, every documented "off" value giving a
working `all`, imported as a module by a second workflow, and a finished
checkout copied elsewhere with its .snakemake/ having nothing to do."""

import copy
import shutil
import subprocess
import sys

import pytest
import yaml

from pipeline_util import REPO, TINY, job_counts, snakemake, write_config

pytestmark = pytest.mark.skipif(
    not shutil.which("make") or not shutil.which("cc"),
    reason="needs make and a C compiler: apt-get install build-essential",
)

# a traceback's frame lines, as Snakemake prints them for an exception raised
# below the workflow file itself
FRAME = 'File "'


def dry_run(tmp_path, cfg, *args):
    write_config(tmp_path, cfg)
    return snakemake(tmp_path, "-n", *args, "all")


def hxfuse_frames(out):
    """Frames of the traceback inside the package: the message should be the
    validation's, not an exception from code that read a refused value."""
    return [ln for ln in out.splitlines() if FRAME in ln and "/hxfuse/" in ln]


@pytest.mark.parametrize(
    "extra, key",
    [
        ({"targets": ["host", "tpu"]}, "config.targets[1]: 'tpu' is not one of"),
        ({"targets": [3]}, "config.targets[0]: 3 is not of type 'string'"),
        ({"targets": "host"}, "config.targets: 'host' is not of type 'array'"),
        ({"targets": []}, "config.targets: [] should be non-empty"),
        ({"targets": ["host", "host"]}, "config.targets: ['host', 'host'] has non-unique elements"),
        ({"target_settings": {"tpu": {}}}, "config.target_settings: unknown key(s) 'tpu'"),
        ({"target_settings": {"host": {"run": {"rounds": 0}}}}, "config.target_settings.host.run.rounds: 0 is less"),
        (
            {"targets": ["host", "gpu"], "target_settings": {"hexagon-sim": {"tools_root": 5}}},
            "config.target_settings.hexagon-sim.tools_root: 5 is not of type",
        ),
        (
            {"targets": ["hexagon-sim"], "target_settings": {"hexagon-sim": {"sdk_root": 5}}},
            "config.target_settings.hexagon-sim.sdk_root: 5 is not of type",
        ),
        (
            {"targets": ["hexagon"], "target_settings": {"hexagon": {"device_serials": [5]}}},
            "config.target_settings.hexagon.device_serials[0]: 5 is not of type 'string'",
        ),
    ],
)
def test_bad_targets_are_refused_naming_the_key_without_a_traceback(tmp_path, extra, key):
    r = dry_run(tmp_path, {**copy.deepcopy(TINY), **extra})
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert key in out, out[-3000:]
    assert "KeyError" not in out and "TypeError" not in out, out[-3000:]
    assert hxfuse_frames(out) == [], out[-3000:]
    assert "rule build" not in out  # before any job


def off_config():
    """The tiny study with every optional part off: no graph points, no
    service mode, no point ONNX Runtime can run (u8i8), no searches."""
    cfg = copy.deepcopy(TINY)
    cfg.pop("serve")
    cfg.update({"graph_study": None, "serve": None, "searches": {}})
    cfg["defaults"]["precision"] = "u8i8"
    # one workload, one replicate: what is tested is that the optional parts'
    # absence leaves a working `all`, not the sweep's size (a third of the jobs)
    cfg["run"]["replicates"] = 1
    cfg["sweeps"]["tiny"]["workloads"] = ["mv"]
    return cfg


@pytest.mark.parametrize(
    "change, absent",
    [
        ({"graph_study": None}, "graph_"),
        ({"serve": None}, "serve_"),
        ({"defaults": {**TINY["defaults"], "precision": "u8i8"}}, "external"),
    ],
)
def test_each_off_value_plans_none_of_its_jobs(tmp_path, change, absent):
    r = dry_run(tmp_path, {**copy.deepcopy(TINY), **change})
    assert r.returncode == 0, r.stderr[-3000:]
    jobs = job_counts(r.stdout)
    assert jobs.get("aggregate") == 1
    assert not [j for j in jobs if j.startswith(absent)], jobs


def test_everything_off_gives_a_working_all(tmp_path):
    r = snakemake(write_config(tmp_path, off_config()).parent, "all", timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert (tmp_path / "results/host/summary.json").is_file()
    assert not (tmp_path / "results/host/graph").exists()
    r = snakemake(tmp_path, "-n", "all")
    assert "Nothing to be done" in r.stdout + r.stderr


def test_imported_as_a_module_from_a_second_workflow(tmp_path):
    """`module hx: snakefile: ...; use rule * from hx as hx_*` in another
    directory: the schema, study files and kernels are found in this
    checkout, not in the importer's directory."""
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"study": "smoke"}))
    (tmp_path / "Snakefile").write_text(
        'configfile: "config.yaml"\n\n\n'
        f"module hx:\n    snakefile:\n        {str(REPO / 'Snakefile')!r}\n    config:\n        config\n\n\n"
        "use rule * from hx as hx_*\n\n\n"
        "rule all:\n    input:\n        rules.hx_all.input,\n    default_target: True\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "2", "all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    jobs = job_counts(r.stdout)
    assert jobs.get("hx_run") == 9 and jobs.get("hx_aggregate") == 1, jobs
    assert not (tmp_path / "workflow").exists()


def test_a_copied_finished_checkout_has_nothing_to_do(tiny_run, tmp_path):
    """Every input path is relative to the workflow: a finished checkout
    moved elsewhere with its results and .snakemake/ reruns nothing."""
    moved = tmp_path / "elsewhere" / "moved"
    shutil.copytree(tiny_run, moved, symlinks=True)
    r = snakemake(moved, "-n", "all", snakefile=moved / "Snakefile")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "Nothing to be done" in out, out[-4000:]
