"""Helpers of the GPU tests: the nvcc to build with, and building
hxrun-cuda's pieces without a GPU (docs/gpu.md, "Tests")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hxfuse.config import gpu as hxgpu

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"
COMMON_C = ["json.c", "npy.c", "checksum.c", "cli.c", "record.c", "release.c"]
# the POSIX platform layer, one file per concern (kernels/Makefile, POSIX_PLATFORM_SRC)
COMMON_C += ["platform_posix.c", "platform_posix_clock.c", "platform_posix_thread.c", "platform_posix_machine.c"]
NO_NVCC = f"nvcc not found: {hxgpu.INSTALL_HINT} (or set NVCC)"


def nvcc() -> str:
    """The nvcc the gpu target would use, or skip the test naming how to get one."""
    found = hxgpu.find_nvcc({}, "gpu")
    if not found:
        pytest.skip(NO_NVCC)
    return found


def gpu_present() -> bool:
    p = hxgpu.probe_driver()
    return bool(p.get("driver") and not p.get("error") and p.get("gpus"))


def build_harness(out_dir: Path) -> Path:
    """tests/gpu/records_harness.cu (the runner's record writers on synthetic
    observations), compiled with nvcc together with the runner's C files."""
    exe = out_dir / "records_harness"
    cmd = [
        nvcc(),
        "-O1",
        "-std=c++17",
        "-arch=sm_90",
        '-DHX_PLATFORM_NAME="gpu"',
        f"-I{KERNELS / 'common'}",
        f"-I{KERNELS / 'cuda'}",
        "-o",
        str(exe),
        str(REPO / "tests" / "gpu" / "records_harness.cu"),
        *[str(KERNELS / "common" / c) for c in COMMON_C],
        "-ldl",
        "-lpthread",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ})
    assert r.returncode == 0, r.stderr[-4000:]
    return exe
