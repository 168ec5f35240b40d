"""The pipeline's reading of the self-test (hxfuse.runner.selftest, rule selftest):
device targets gate their runs on it, and a failing, hanging or crashed
ladder stops with the step named (driven with the real host runner)."""

from __future__ import annotations

import copy
import os
import re
import subprocess
from pathlib import Path

from hxfuse.runner import selftest
from pipeline_util import REPO, SNAKEFILE, TINY, copy_repo, snakemake, write_config
from runner_util import build_runner


def test_only_the_sdk_targets_gate_their_runs_on_the_ladder():
    assert selftest.gates_runs("hexagon") and selftest.gates_runs("hexagon-sim")
    assert not selftest.gates_runs("host") and not selftest.gates_runs("hexagon-qemu")


def test_a_passing_ladder_has_no_message(tmp_path):
    out = tmp_path / "st.jsonl"
    rc, _ = selftest.run("host", str(build_runner("host")), "", {}, out, 60)
    steps, summary = selftest.read_ladder(out)
    assert rc == 0 and summary["status"] == "ok" and steps
    assert selftest.verdict("host", steps, summary, rc, out) is None


def test_a_hang_is_named_with_the_watchdogs_words(tmp_path):
    out = tmp_path / "st.jsonl"
    exe = build_runner("host")
    r = subprocess.run(
        [str(exe), "--selftest", "--out", str(out), "--selftest-hang", "clock", "--selftest-step-timeout", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    steps, summary = selftest.read_ladder(out)
    msg = selftest.verdict("host", steps, summary, r.returncode, out)
    assert r.returncode == 5 and "step clock hangs (named by the watchdog)" in msg and "First day" in msg


def test_a_failed_step_and_a_crash_inside_a_step_are_named(tmp_path):
    steps = [
        {"record": "selftest_step", "step": "vtcm_full", "status": "running"},
        {"record": "selftest_step", "step": "vtcm_full", "status": "fail", "detail": "acquire failed"},
    ]
    summary = {"record": "selftest", "status": "failed", "first_failure": "vtcm_full", "hung": None}
    msg = selftest.verdict("hexagon", steps, summary, 1, tmp_path / "x")
    assert "step vtcm_full failed: acquire failed" in msg
    crashed = [{"record": "selftest_step", "step": "hmx_tile", "status": "running"}]
    msg = selftest.verdict("hexagon", crashed, None, 1, tmp_path / "x")
    assert "step hmx_tile did not finish: the runner ended (exit status 1) inside it" in msg


# The phone target of the tiny sweep plus a search (so the search's runner
# jobs are planned too), against the stub SDK tree and a stand-in adb.
def _device_workdir(tmp: Path) -> tuple[Path, dict]:
    subprocess.run([str(REPO / "kernels/hexagon/sdk_check.sh"), "fake-sdk", str(tmp / "fake")], check=True)
    (tmp / "bin").mkdir()
    (tmp / "bin/adb").write_text('#!/bin/sh\necho "stand-in adb $*"\n')
    (tmp / "bin/adb").chmod(0o755)
    cfg = {k: copy.deepcopy(v) for k, v in TINY.items() if k != "serve"}
    cfg["targets"] = ["hexagon"]
    cfg["target_settings"] = {"hexagon": {"device_serial": "phone1", "params": {"precision": "u8i8"}}}
    cfg["searches"] = {
        "place": {
            "workload": "mv",
            "space": {"v_workers": [1, 2]},
            "budget": {"candidates": 2, "rounds": 4, "warmup": 1},
            "confirm": {"pairs": 2, "rounds": 4, "warmup": 1},
            "seed": 2,
        }
    }
    write_config(tmp / "wd", cfg)
    env = {**os.environ, "PATH": f"{tmp / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env["HEXAGON_SDK_ROOT"] = str(tmp / "fake/sdk")
    return tmp / "wd", env


def _ungated_runner_jobs(workdir: Path, env: dict, snakefile: Path) -> tuple[set[str], list[str]]:
    """The rules of the planned jobs that use the deployed runner, and those
    of the jobs among them that do not wait for the self-test (from the
    job graph of a dry run, ``--dag``)."""
    r = snakemake(workdir, "--dag", "dot", "all", "searches", cores=1, snakefile=snakefile, env=env, timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    rule = {n: label for n, label in re.findall(r'(?m)^\s*(\d+)\[label = "(\w+)', r.stdout)}
    into: dict[str, set[str]] = {}
    for a, b in re.findall(r"(?m)^\s*(\d+) -> (\d+)", r.stdout):
        into.setdefault(b, set()).add(rule[a])
    users = {n for n, froms in into.items() if "deploy" in froms and rule[n] != "selftest_target"}
    return {rule[n] for n in users}, sorted(rule[n] for n in users if "selftest_target" not in into[n])


def test_on_an_sdk_target_every_runner_job_waits_for_the_self_test(tmp_path):
    workdir, env = _device_workdir(tmp_path)
    users, ungated = _ungated_runner_jobs(workdir, env, SNAKEFILE)
    assert {"run", "search_run", "search_confirm"} <= users and ungated == []
    # Known answer: a rule run without the gate is named, job by job.
    repo = copy_repo(tmp_path / "repo")
    sweep = repo / "workflow/rules/sweep.smk"
    text = sweep.read_text()
    assert text.count("selftest=selftest_gate,") == 1
    sweep.write_text(text.replace("selftest=selftest_gate,", ""))
    _, ungated = _ungated_runner_jobs(workdir, env, repo / "Snakefile")
    assert ungated == ["run"] * 12  # 2 points x 3 workloads x 2 replicates
