"""``hxrun --selftest`` on the host build: the ladder's POSIX steps pass, the
device steps are reported as not available (never as passed), every step is
flushed to the output file before the next, and a planted hang is named by
the watchdog within its timeout.  (The hexagon-qemu run of the same ladder is
in test_hexagon_qemu.py.)"""

from __future__ import annotations

import json
import subprocess
import time

from runner_util import build_runner

HOST_STEPS = {"arch", "hw_threads", "clock", "thread_cpu_time", "threads", "affinity", "file_io"}


def _selftest(out, *args, timeout=60):
    exe = build_runner("host")
    t0 = time.monotonic()
    r = subprocess.run(
        [str(exe), "--selftest", "--out", str(out), *args], capture_output=True, text=True, timeout=timeout
    )
    recs = [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()]
    return r, recs, time.monotonic() - t0


def test_host_ladder_passes_its_steps_and_names_the_rest_not_available(tmp_path):
    r, recs, _ = _selftest(tmp_path / "st.jsonl")
    assert r.returncode == 0, r.stderr
    summary = recs[-1]
    assert summary["record"] == "selftest" and summary["status"] == "ok"
    assert set(summary["passed"]) == HOST_STEPS
    assert {"vtcm_full", "hvx_vrmpy", "dma_4k", "hmx_tile"} <= set(summary["not_available"])
    assert not summary["failed"] and not summary["not_run"] and summary["hung"] is None
    steps = [x for x in recs if x["record"] == "selftest_step"]
    # a "running" record precedes the result of every step that runs
    for name in HOST_STEPS:
        kinds = [x["status"] for x in steps if x["step"] == name]
        assert kinds == ["running", "pass"], (name, kinds)
    na = [x for x in steps if x["step"] == "vtcm_full"]
    assert na == [{"record": "selftest_step", "index": na[0]["index"], "step": "vtcm_full",
                   "status": "not available on this target"}]  # fmt: skip
    assert "selftest: file_io" in r.stderr


def test_planted_hang_is_named_by_the_watchdog_within_its_timeout(tmp_path):
    r, recs, wall = _selftest(tmp_path / "st.jsonl", "--selftest-hang", "threads", "--selftest-step-timeout", "1")
    assert r.returncode == 5, r.stderr
    assert wall < 5, wall
    assert "threads" in r.stderr and "hangs" in r.stderr
    summary = recs[-1]
    assert summary["status"] == "hang" and summary["hung"] == "threads"
    assert "threads" not in summary["passed"] and "file_io" in summary["not_run"]
    assert {"arch", "clock"} <= set(summary["passed"])
    assert recs[-2]["step"] == "threads" and recs[-2]["status"] == "hang"


def test_bad_selftest_arguments_exit_2(tmp_path):
    exe = build_runner("host")
    r = subprocess.run([str(exe), "--selftest"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--selftest --out FILE" in r.stderr
