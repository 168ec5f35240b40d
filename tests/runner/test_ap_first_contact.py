"""hxrun-ap --selftest against the loopback stand-in with each first-contact
fault injected (HX_LOOPBACK_FAULT, kernels/loopback/cdsprpc_loopback.c): the
ladder stops at the step where a phone would fail, and that step's detail
carries the AEE code in hex, decoded (DSP codes with their 0x80000400
offset), and a hint saying what to do (kernels/ap/rpc_dl.c).  The faults
are the stand-in's, not observations of a phone: these tests check that
each failure explains itself, not what a phone returns."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AP = REPO / "kernels" / "build" / "host" / "ap"
LADDER = ["library", "session", "setup", "queues", "ping", "threads", "request", "fused", "teardown"]


@pytest.fixture(scope="module")
def built() -> Path:
    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("needs make and a C compiler: apt-get install build-essential")
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "TARGET=host", "ap-loopback"], check=True)
    return AP


def selftest(built: Path, tmp_path: Path, fault: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HX_LOOPBACK_", "ADSP_LIBRARY_PATH"))}
    env.update(HX_LOOPBACK_FAULT=fault, HX_LOOPBACK_DSP_LOG=str(tmp_path / "dsp.log"))
    out = tmp_path / "st.jsonl"
    cmd = [str(built / "hxrun-ap"), "--selftest", "--out", str(out), "--cdsprpc", str(built / "libcdsprpc.so")]
    proc = subprocess.run([*cmd, "--selftest-step-timeout", "4"], capture_output=True, text=True, timeout=120, env=env)
    return proc, [json.loads(x) for x in out.read_text().splitlines()]


@pytest.mark.parametrize(
    "fault,step,code,hint",
    [
        ("no-skel", "session", "AEE_EUNABLETOLOAD (0x80000406, from the DSP)", "';'-separated"),
        ("unsigned-refused", "session", "AEE_EUNSIGNEDMOD (0x80000481, from the DSP)", "test signature"),
        ("no-unsigned-pd", "session", "AEE_EUNSUPPORTED (0x14)", "refuses unsigned PDs"),
        ("no-vtcm", "setup", "cannot allocate a scratch arena", "could not get its scratch memory (VTCM"),
        ("dsp-crash:2", "setup", "AEE_ECONNRESET (0x68)", "the DSP process (the skel's PD) died"),
        ("dsp-crash:3", "queues", "AEE_ECONNRESET (0x68)", "adb logcat -s adsprpc"),
        ("hang:5", "teardown", "stuck in hxfuse STOP", "a DSP thread does not finish"),
        ("hang:1", "teardown", "stuck in remote_handle64_close", "restart the cDSP session"),
    ],
)
def test_each_first_contact_fault_is_named_by_step_with_a_decoded_code_and_a_hint(
    built: Path, tmp_path: Path, fault: str, step: str, code: str, hint: str
) -> None:
    proc, recs = selftest(built, tmp_path, fault)
    assert proc.returncode == 1, proc.stderr
    s = recs[-1]
    assert s["record"] == "selftest" and s["status"] == "failed" and s["first_failure"] == step
    assert s["passed"] == LADDER[: LADDER.index(step)]
    detail = next(r["detail"] for r in recs if r.get("step") == step and r["status"] == "fail")
    assert code in detail and "hint: " in detail and hint in detail, detail
    # what the DSP said for itself went to its log (logcat's role), not to the AP's output
    assert "loopback DSP" not in proc.stderr


def test_without_a_fault_every_step_passes_including_teardown(built: Path, tmp_path: Path) -> None:
    proc, recs = selftest(built, tmp_path, "")
    assert proc.returncode == 0, proc.stderr
    assert recs[-1]["status"] == "ok" and recs[-1]["passed"] == LADDER


def test_the_dsp_log_holds_the_dsps_reasons(built: Path, tmp_path: Path) -> None:
    """The loader's reason for a missing skel is in the DSP log (where a phone
    puts it: logcat), with every path it searched."""
    proc, _ = selftest(built, tmp_path, "no-skel")
    log = (tmp_path / "dsp.log").read_text()
    assert "libhxfuse_skel.so not found (HX_LOOPBACK_FAULT=no-skel)" in log
    assert str(built / "libhxfuse_skel.so") in log
    assert "not found" not in proc.stderr
