"""The Hexagon targets in the pipeline.

1. End to end: the real pipeline on a tiny ``hexagon-qemu`` config in a
   temporary directory: cross-compile with zig (``make -C kernels
   TARGET=hexagon-qemu``), stage, run A-D of every point under qemu-hexagon
   (RUN_PREFIX of kernels/targets/hexagon-qemu.mk), check every output
   exactly, and label everything EMULATED: summary (``emulated``, verdict
   "not assessed (emulated)"), LaTeX table (correctness only), figures
   (timelines marked EMULATED, no speedup/slowdown figures).  Skips only when
   zig or qemu-hexagon is truly absent (`pip install ziglang==0.17.1`,
   `apt-get install qemu-user`).
2. Fail fast: with the SDK targets (``hexagon``, ``hexagon-sim``) and no
   Hexagon SDK the workflow stops before any job, naming HEXAGON_SDK_ROOT,
   hexagon-clang, adb and the device serial and how to provide them.
"""

import copy
import json
import os

import pandas as pd
import pytest

from pipeline_util import TINY, TINY_QEMU, copy_repo, job_counts, snakemake, write_config, zig_and_qemu

HAVE_TOOLS, SKIP_MSG = zig_and_qemu()
POINTS = [f"tiny/{w}/{p}" for w in ("mv", "md", "mvd") for p in ("small", "big")]


@pytest.fixture(scope="module")
def qemu_work(tmp_path_factory):
    if not HAVE_TOOLS:
        pytest.skip(SKIP_MSG)
    wd = copy_repo(tmp_path_factory.mktemp("hexq"))
    write_config(wd, copy.deepcopy(TINY_QEMU))
    res = snakemake(wd, "all", snakefile=wd / "Snakefile")
    assert res.returncode == 0, res.stderr[-5000:]
    return wd, res.stdout + res.stderr


def test_qemu_builds_stages_runs_and_checks_every_point_exactly(qemu_work):
    wd, out = qemu_work
    counts = job_counts(out)
    assert counts.get("build") == 1 and counts.get("deploy") == 1 and counts.get("run") == 6, counts
    build_log = (wd / "logs/hexagon-qemu/build.log").read_text()
    assert "hexagon-linux-musl" in build_log
    manifest = json.loads((wd / "results/hexagon-qemu/stage/deploy.json").read_text())
    assert manifest["emulated"] is True and manifest["run_prefix"] == "qemu-hexagon"
    for pid in POINTS:
        log = (wd / "logs/hexagon-qemu/run" / f"{pid}/rep0.log").read_text()
        assert log.splitlines()[0].split()[1] == "qemu-hexagon", log.splitlines()[0]
        assert "--precision u8i8" in log.splitlines()[0]
        raw = (wd / "results/hexagon-qemu/raw" / f"{pid}/rep0.jsonl").read_text().splitlines()
        meta = json.loads(raw[0])
        assert meta["emulated"] is True and meta["target"] == "hexagon-qemu" and meta["kernels"] == "hvx"
        assert meta["args"]["m"] == 48 or meta["args"]["m"] == 64
        groups = {json.loads(line).get("group") for line in raw if '"trial"' in line}
        assert {"A", "B", "C", "D"} <= groups
        check = json.loads((wd / "results/hexagon-qemu/check" / f"{pid}/rep0.json").read_text())
        assert check["status"] == "ok", check["reasons"]
        assert check["exact"] is True and check["emulated"] is True
        assert check["trial_checksums"]["checked"] > 0 and check["trial_checksums"]["mismatches"] == 0
        prov = json.loads((wd / "results/hexagon-qemu/raw" / f"{pid}/rep0.provenance.json").read_text())
        assert prov["emulated"] is True and prov["run_prefix"] == "qemu-hexagon"
        assert "B" in prov["runner_env"]["group_mapping"]


def test_qemu_summary_is_labelled_emulated_without_verdicts(qemu_work):
    wd, _ = qemu_work
    s = pd.read_csv(wd / "results/hexagon-qemu/summary.csv")
    assert s["emulated"].all()
    d = s[s["group"] == "D"]
    assert sorted(d["point_id"]) == sorted(POINTS) and d["point_ok"].all()
    assert set(d["verdict"]) == {"not assessed (emulated)"}
    assert d["conclusion"].isna().all() or d["conclusion"].astype(str).isin(["", "nan"]).all()
    assert s.loc[s["group"] == "B", "group_mapping"].str.len().gt(0).all()
    doc = json.loads((wd / "results/hexagon-qemu/summary.json").read_text())
    assert doc["emulated"] is True and doc["failed_points"] == [] and doc["n_points"] == 6
    assert "EMULATED" in doc["target_status"]
    assert set(doc["group_mapping"]) == {"A", "B", "C", "D"}
    assert "dspqueue" in doc["group_b_backend"]
    assert {v["verdict"] for v in doc["verdicts"]} == {"not assessed (emulated)"}


def test_qemu_table_and_figures_show_correctness_only(qemu_work):
    wd, _ = qemu_work
    table = (wd / "paper/generated/results_table.tex").read_text()
    # each of the 6 points once in each of the two tables (speedups; overlap and slowdowns)
    assert table.count("correct (emulated, timings not performance)") == 2 * 6
    assert r"\hxspd{" not in table and "EMULATED" in table
    macros = (wd / "paper/generated/results_macros.tex").read_text()
    assert "hx@v@hexagon-qemu" not in macros and "MedianDA" not in macros
    assert not list((wd / "results/hexagon-qemu/figures").glob("speedup_*"))
    assert not list((wd / "results/hexagon-qemu/figures").glob("slowdown_*"))
    for pid in POINTS:
        assert (wd / f"results/hexagon-qemu/figures/timeline/{pid}.png").stat().st_size > 1000


def test_qemu_second_run_has_nothing_to_do(qemu_work):
    wd, _ = qemu_work
    res = snakemake(wd, "-n", "all", snakefile=wd / "Snakefile")
    assert res.returncode == 0 and "Nothing to be done" in res.stdout + res.stderr


def _no_sdk_env():
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "HEXAGON_SDK_ROOT",
            "HEXAGON_TOOLS_ROOT",
            "DEFAULT_HEXAGON_TOOLS_ROOT",
            "HX_DEVICE_SERIAL",
            "HEXKL_ROOT",
        )
    }
    # no adb either, whatever this machine has
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not os.path.exists(os.path.join(p, "adb"))
    )
    return env


def _u8i8(cfg, *targets):
    cfg["target_settings"] = {t: {"params": {"precision": "u8i8"}} for t in targets}
    return cfg


def test_device_target_without_sdk_fails_before_any_job(tmp_path):
    cfg = _u8i8(copy.deepcopy(TINY), "hexagon")
    cfg["targets"] = ["host", "hexagon"]
    write_config(tmp_path, cfg)
    res = snakemake(tmp_path, "all", env=_no_sdk_env())
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "target hexagon: needs the Qualcomm Hexagon SDK, and HEXAGON_SDK_ROOT is not set" in out
    assert "setup_sdk_env.source" in out and "target_settings.hexagon.sdk_root" in out
    assert "hexagon-clang not found" in out
    assert "target hexagon: adb is not installed: apt-get install adb" in out
    assert "HX_DEVICE_SERIAL" in out and "target_settings.hexagon.device_serial" in out
    assert not (tmp_path / "results").exists(), "nothing may run, not even the host"


def test_simulator_target_without_sdk_fails_fast_and_config_errors_come_too(tmp_path):
    cfg = copy.deepcopy(TINY)  # fp32: also a config error for hexagon-sim
    cfg["targets"] = ["hexagon-sim"]
    write_config(tmp_path, cfg)
    res = snakemake(tmp_path, "-n", "all", env=_no_sdk_env())
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "target hexagon-sim: needs the Qualcomm Hexagon SDK, and HEXAGON_SDK_ROOT is not set" in out
    assert "precision: target hexagon-sim runs integer kernels only" in out
    assert "adb is not installed" not in out  # the simulator needs no phone


def test_missing_emulator_is_named_with_its_install_command(tmp_path):
    cfg = _u8i8(copy.deepcopy(TINY), "hexagon-qemu")
    cfg["targets"] = ["hexagon-qemu"]
    cfg["target_settings"]["hexagon-qemu"]["qemu"] = "qemu-hexagon-not-installed"
    write_config(tmp_path, cfg)
    res = snakemake(tmp_path, "-n", "all")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert ("target hexagon-qemu: qemu-hexagon-not-installed is not installed: apt-get install qemu-user") in out
    assert not (tmp_path / "results").exists()
