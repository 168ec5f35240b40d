"""hxrun-cuda's records, without a GPU: its own record writers (the runner's
code, through tests/gpu/records_harness.cu) on synthetic observations, read
by the pipeline's reader, integrity check and aggregation unchanged."""

from __future__ import annotations

import json
import subprocess

import pytest

from gpu_util import build_harness
from hxfuse.analysis import metrics
from hxfuse.runner import checks, integrity, jsonl, records

# the fields docs/runner.md gives every record kind (schema_version 2)
TRIAL = {
    "round", "seq", "warmup", "workload", "group", "empty", "host", "device", "tasks", "waits",
    "scratch_peak_bytes", "makespan_ns", "interference", "checksums_ok", "preempted",
}  # fmt: skip
HOST = {"submit_begin", "submit_end", "wait_begin", "wait_end", "submit_ns", "wait_ns", "requests", "submits", "cpu"}
TASK = {
    "task", "engine", "launch", "begin", "end", "host_seen", "cpu_ns", "cpu_begin", "cpu_end",
    "involuntary_switches", "workers", "checksum",
}  # fmt: skip
WORKER = {"engine", "begin", "end", "cpu_ns", "cpu_begin", "cpu_end", "checkpoints", "checkpoint_work"}
END = {
    "records", "digest", "status", "trials", "checksum_mismatches", "submit_outliers", "submit_outliers_by_group",
    "b_handover_outliers", "submit_outlier_ns", "wall_ns", "load_average_after", "other_busy_cores_after",
    "resources", "clock_drift", "preemption",
}  # fmt: skip
META = {
    "schema_version", "target", "emulated", "kernels", "compiler", "compiler_version", "cflags", "cpu_model",
    "online_cores", "cpu_governor", "load_average_before", "other_busy_cores_before", "engines", "group_mapping",
    "device_engines_used", "affinity", "engines_exceed_cores", "clock", "interference", "epoch", "args",
    "workloads", "tasks", "scratch", "calibration", "wait", "spin_ns", "early_completion", "v_release", "window",
    "checkpoints", "antagonist", "labels", "warnings", "warning_codes",
}  # fmt: skip
ARGS = ("--workloads", "mv,md,mvd", "--warmup", "1", "--rounds", "2", "--checkpoints", "4")


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    return build_harness(tmp_path_factory.mktemp("harness"))


@pytest.fixture(scope="module")
def run_file(harness, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run.jsonl"
    r = subprocess.run(
        [str(harness), "--out", str(out), "--npy-dir", str(out.parent / "npy"), *ARGS],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return out


def test_every_documented_field_is_there(run_file):
    recs = jsonl.read_records(run_file)
    assert META <= set(recs.meta), META - set(recs.meta)
    assert recs.meta["target"] == "gpu" and recs.meta["emulated"] is False
    assert END <= set(recs.end), END - set(recs.end)
    assert {v["workload"] for v in recs.of("verify")} == {"mv", "md", "mvd"}
    trials = recs.of("trial")
    assert trials
    for t in trials:
        assert TRIAL <= set(t), TRIAL - set(t)
        assert HOST <= set(t["host"])
        assert (t["device"] is not None) == (t["group"] in ("C", "D"))
        for task in t["tasks"]:
            assert TASK <= set(task), TASK - set(task)
            # a GPU has no per-thread CPU time: null, never a 0 that reads as idle
            assert task["cpu_ns"] is None
            for w in task["workers"]:
                assert WORKER <= set(w)
                assert len(w["checkpoints"]) == len(w["checkpoint_work"])


def test_digest_and_counts_hold(run_file):
    recs = jsonl.read_records(run_file)
    assert integrity.verify_end_record(run_file) == recs.end
    assert recs.end["records"] == len(recs.records) - 1
    assert recs.end["trials"] == len(recs.of("trial"))


def test_device_times_are_on_the_host_clock(run_file):
    # the harness's device clock runs 1 ms ahead; a task is launched 5 us
    # before its blocks start and begins 0.5 us after (records_harness.cu):
    # without the alignment offset begin - launch would be ~1 ms
    for t in jsonl.read_records(run_file).of("trial"):
        if t["group"] in ("A", "B", "alone"):
            for task in t["tasks"]:
                assert task["begin"] - task["launch"] == 5500, (t["group"], task["task"])


def test_blocks_are_workers_with_checkpoints(run_file):
    for t in jsonl.read_records(run_file).of("trial"):
        for task in t["tasks"]:
            names = [w["engine"] for w in task["workers"]]
            assert names == [f"{task['engine']}.b0", f"{task['engine']}.b1"]
            if t["empty"]:
                assert all(w["checkpoints"] == [] for w in task["workers"])
                assert task["checksum"] is None
            else:
                assert sum(w["checkpoint_work"][-1] for w in task["workers"]) == pytest.approx(1.0)
                assert task["checksum"] is not None


def test_the_aggregation_reads_it(run_file):
    run = records.read_run(run_file)
    tm = metrics.trial_metrics(run)
    assert len(tm) == len(jsonl.read_records(run_file).of("trial"))
    full = tm[(tm["group"] == "D") & ~tm["empty"].astype(bool) & ~tm["warmup"].astype(bool)]
    assert len(full) and full["makespan_ns"].gt(0).all()
    # progress comes from the blocks' checkpoints: defined for D's trials
    assert full["concurrent_progress_ns"].notna().all()


def test_the_numpy_check_passes(run_file):
    # the outputs are the runner's inputs through the CPU (records_harness.cu),
    # checksummed by the runner's code: the pipeline's check must accept them
    res = checks.check_point(run_file, run_file.parent / "npy")
    assert res["status"] == "ok", res["reasons"]
    assert set(res["outputs"]) == {"mv", "md", "mvd"}


@pytest.mark.parametrize(
    "args, says",
    [
        (["--precision", "u8i8"], "--precision u8i8 is not available on the gpu target"),
        (["--m-tile", "64"], "--m-tile is not available"),
        (["--window", "2"], "--window 1 or 2 is not available"),
        (["--d-buffers", "2"], "--d-buffers 2 is not available"),
        (["--affinity", "mx=0"], "no engine thread 'mx'"),
        (["--antagonist", "1"], "--antagonist is not available"),
        (["--v-workers", "9"], "--v-workers: '9' is not an integer in [1, 8]"),
        (["--b-mode", "both"], "--b-mode: 'both' is not streams or graph"),
        (["--calibrate", "X=5"], "--calibrate: 'X=5'"),
    ],
)
def test_bad_arguments_exit_2_naming_the_option(harness, tmp_path, args, says):
    r = subprocess.run(
        [str(harness), "--out", str(tmp_path / "x.jsonl"), *args], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2, r.stderr
    assert says in r.stderr
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "x.jsonl.tmp").exists()


def test_group_mapping_names_b(harness, tmp_path):
    for mode, word in (("streams", "stream per task"), ("graph", "CUDA graph")):
        out = tmp_path / f"{mode}.jsonl"
        r = subprocess.run(
            [str(harness), "--out", str(out), "--b-mode", mode, "--rounds", "1", "--warmup", "0"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 0, r.stderr
        meta = json.loads(out.read_text().splitlines()[0])
        assert word in meta["group_mapping"]["B"] and meta["gpu"]["b_mode"] == mode
