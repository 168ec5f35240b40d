"""The pipeline's reading of the self-test (hxfuse.runner.selftest, rule selftest):
device targets gate their runs on it, and a failing, hanging or crashed
ladder stops with the step named (driven with the real host runner)."""

from __future__ import annotations

import subprocess

from hxfuse.runner import selftest
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
