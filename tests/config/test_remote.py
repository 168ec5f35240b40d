"""A job's own Snakemake skips the preflight and make (hxfuse/config/remote.py)."""

from __future__ import annotations

import json

from hxfuse.config import remote

CFG = {"targets": ["host", "hexagon-qemu"]}


def _asker(calls):
    def ask(config, target, kernels):
        calls.append(target)
        return f"prefix-of-{target}"

    return ask


def test_the_main_process_asks_make_and_exports_the_answers():
    calls, env = [], {remote.PREFIX_ENV: json.dumps({"host": "stale"})}
    prefixes, asked = remote.target_prefixes(CFG, "k", True, _asker(calls), env)
    assert asked and calls == ["host", "hexagon-qemu"]
    assert prefixes == {"host": "prefix-of-host", "hexagon-qemu": "prefix-of-hexagon-qemu"}
    # the stale value is replaced: jobs get what this process found
    assert json.loads(env[remote.PREFIX_ENV]) == prefixes


def test_a_job_takes_the_exported_prefixes_without_make():
    calls = []
    env = {remote.PREFIX_ENV: json.dumps({"host": "", "hexagon-qemu": "qemu-hexagon -cpu v73", "x": "y"})}
    prefixes, asked = remote.target_prefixes(CFG, "k", False, _asker(calls), env)
    assert (prefixes, asked, calls) == ({"host": "", "hexagon-qemu": "qemu-hexagon -cpu v73"}, False, [])


def test_a_job_without_them_asks_make_itself():
    for env in ({}, {remote.PREFIX_ENV: "not json"}, {remote.PREFIX_ENV: json.dumps({"host": ""})}):
        calls = []
        prefixes, asked = remote.target_prefixes(CFG, "k", False, _asker(calls), env)
        assert asked and calls == ["host", "hexagon-qemu"], env


def test_note_appends_one_line_per_read_only_when_asked(tmp_path):
    log = tmp_path / "reads.log"
    remote.note("default", True, True, {})
    assert not log.exists()
    env = {remote.LOG_ENV: str(log), "SLURM_JOB_ID": "7"}
    remote.note("default", True, True, env)
    remote.note("remote", False, False, env)
    lines = [dict(w.split("=", 1) for w in line.split()) for line in log.read_text().splitlines()]
    assert [(r["mode"], r["preflight"], r["make"], r["SLURM_JOB_ID"], r["SLURM_STEP_ID"]) for r in lines] == [
        ("default", "ran", "ran", "7", "-"),
        ("remote", "skipped", "skipped", "7", "-"),
    ]
    assert all(int(r["cpus"]) >= 1 for r in lines)


def test_a_value_from_the_main_process_is_computed_once():
    calls = []

    def compute():
        calls.append(1)
        return {"check": ["hxfuse/runner/checks.py"]}

    env = {remote.CODE_ENV: json.dumps({"check": ["stale.py"]})}
    assert remote.from_main(remote.CODE_ENV, True, compute, env) == {"check": ["hxfuse/runner/checks.py"]}
    assert len(calls) == 1  # the main process computes, whatever was exported before
    job_env = dict(env)
    assert remote.from_main(remote.CODE_ENV, False, compute, job_env) == {"check": ["hxfuse/runner/checks.py"]}
    assert len(calls) == 1  # a job takes it from the environment
    assert remote.from_main(remote.CODE_ENV, False, compute, {remote.CODE_ENV: "[1]"}) == compute()
    assert len(calls) == 3  # not a mapping: computed again
