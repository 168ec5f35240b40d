"""HVX and HMX locks on the threads that use them, against the QuRT/HAP/HexKL
stand-in (kernels/hexagon/standin_qurt.c), cross-compiled with zig and run
under qemu-hexagon (kernels/hexagon/test_qurt_locks.c).

The stand-in stops the process (exit 70, "VIOLATION" and the rule) where a
cDSP would fault: an HVX call from a thread without an HVX context
(qurt_hvx.h), an HMX call from a thread that does not hold the HMX lock, an
unlock from another thread, a context released with HMX still locked
(HAP_compute_res.h).  M must be prepared on the set-up thread and run on the
``mx`` engine thread, which takes HMX after its HVX context and gives both
back itself; the ladder's ``hmx_tile`` step runs its tile the same way.
It also checks that more ready threads than hardware threads (QuRT does not
time-slice them) and ``--wait spin`` are refused before any work.
Untested on hardware: the stand-in plays QuRT, HAP and HexKL."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

KERNELS = Path(__file__).resolve().parents[2] / "kernels"
HEX = KERNELS / "hexagon"
QEMU = shutil.which(os.environ.get("QEMU_HEXAGON") or "qemu-hexagon")
SOURCES = [
    "hexagon/test_qurt_locks.c", "hexagon/standin_qurt.c", "hexagon/platform_qurt.c", "hexagon/vtcm_qurt.c",
    "hexagon/power_qurt.c", "hexagon/clock_qurt.c", "hexagon/kernels_hmx.c", "hexagon/kernels_hvx.c",
    "hexagon/kernels_device.c", "hexagon/device_fatal.c", "hexagon/dma_hexagon.c",
    "hexagon/dma_plan.c", "hexagon/selftest_qurt.c",
    "hexagon/selftest_hvx.c", "common/kernels_ref.c", "common/engine.c", "common/event.c", "common/json.c",
    "common/release.c",
]  # fmt: skip


def _zig() -> list[str] | None:
    cmd = [sys.executable, "-m", "ziglang"]
    try:
        if subprocess.run(cmd + ["version"], capture_output=True, timeout=60).returncode == 0:
            return cmd
    except (OSError, subprocess.TimeoutExpired):
        pass
    return ["zig"] if shutil.which("zig") else None


def _has_v73() -> bool:
    r = subprocess.run([QEMU, "-cpu", "help"], capture_output=True, text=True)
    return "v73" in r.stdout.split() or "v73" in r.stderr.split()


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    zig = _zig()
    if zig is None or QEMU is None:
        pytest.skip("needs zig (pip install ziglang==0.17.1) and qemu-hexagon (qemu-user)")
    if not _has_v73():
        pytest.skip("needs a qemu-hexagon that emulates v73 (user DMA code builds for v68+ only)")
    out = tmp_path_factory.mktemp("locks") / "test_qurt_locks"
    cmd = [
        *zig, "cc", "-target", "hexagon-linux-musl", "-mcpu=hexagonv73+hvxv73+hvx_length128b", "-O1",
        "-std=gnu11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-pthread", "-static", "-DHX_WITH_HEXKL=1",
        "-DHX_HVX_NO_FAST_ENTRY", f"-I{HEX / 'sdk_decls'}", *(str(KERNELS / s) for s in SOURCES), "-lm",
        "-o", str(out),
    ]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return out


def _run(exe: Path, case: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [QEMU, str(exe), case], capture_output=True, text=True, timeout=300, env={**os.environ, **env}
    )


@pytest.mark.parametrize("case", ["ladder", "runner", "teardown", "nonresident"])
def test_hmx_runs_on_the_mx_engine_thread_that_holds_hvx_then_hmx(exe, case):
    r = _run(exe, case)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
    assert "VIOLATION" not in r.stderr


def test_the_ladders_hmx_tile_step_reports_the_engine_thread(exe):
    r = _run(exe, "ladder")
    line = next(ln for ln in r.stdout.splitlines() if "hmx_tile" in ln)
    assert line.startswith("PASS") and "mx engine thread" in line and "ladder thread: no" in line, line


def test_the_stand_in_refuses_hmx_code_on_a_thread_without_hvx(exe):
    """The control: the stand-in must be able to fail (M run on the set-up
    thread, which holds no HVX context)."""
    r = _run(exe, "host_run")
    assert r.returncode == 70, r.stdout + r.stderr
    assert "VIOLATION" in r.stderr and "holds no HVX context" in r.stderr and "qurt_hvx.h" in r.stderr


def test_ready_threads_beyond_the_hardware_threads_and_spin_waits_are_refused(exe):
    """QuRT does not time-slice ready threads of one priority: with 5 hardware
    threads, host + vec + mx + dma + one antagonist start, a V worker more is
    refused before it starts (naming the count), the antagonist runs one
    priority below the engines, and --wait spin is refused."""
    r = _run(exe, "threads", HX_STANDIN_HW_THREADS="5")
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
    assert "has 5 hardware threads" in r.stdout and "qurt_sysenv_get_max_hw_threads" in r.stdout


def test_a_refused_hmx_power_vote_is_recorded_with_its_code(exe):
    """Every vote made and every vote refused (with HAP_power_set's code) is
    kept for the run's resources record; v73 builds power HMX with
    HAP_power_set_HMX (request type 8 in the declarations the stand-in is
    built with), v75+ with HAP_power_set_HMX_v2 and the HMX clock."""
    r = _run(exe, "power", HX_STANDIN_REFUSE_POWER="8")
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
    assert "refused 1: hmx=on" in r.stdout


def test_a_hexkl_error_on_the_mx_thread_is_reported_not_exit(exe):
    """A fatal engine error is a status, not exit() from a worker (which kills
    the PD, loses the reason and skips the releases): logged with FARF,
    recorded for the end record, later runs issue nothing, HMX and VTCM are
    given back."""
    r = _run(exe, "fatal", HX_STANDIN_HEXKL_FAIL="1")
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
    assert "FARF: hxrun: error: M: a HexKL HMX call failed" in r.stderr
