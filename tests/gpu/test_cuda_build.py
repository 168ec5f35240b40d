"""hxrun-cuda builds with nvcc (the PyPI one in CI) for sm_90 through the
gpu target's make, its sources are what the pipeline's build rule watches,
and without a GPU it fails naming what is missing.  The GPU tests proper
are tests/gpu/device_check.sh (they need a GPU; skipped here, with why)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from gpu_util import KERNELS, gpu_present, nvcc

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    compiler = nvcc()
    # a copy of kernels/ so the test never races the developer's own build
    work = tmp_path_factory.mktemp("k") / "kernels"
    shutil.copytree(KERNELS, work, ignore=shutil.ignore_patterns("build"))
    r = subprocess.run(
        ["make", "-C", str(work), "TARGET=gpu", f"NVCC={compiler}", "CUDA_ARCH=90", "-j2"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return work


def test_make_builds_the_runner_for_sm90(built):
    exe = built / "build" / "gpu" / "hxrun"
    assert exe.is_file() and os.access(exe, os.X_OK)
    assert (built / "build" / "gpu" / "hxrun-cuda").read_bytes() == exe.read_bytes()
    flags = (built / "build" / "gpu" / "cuda-flags").read_text()
    assert "code=sm_90" in flags and "HX_GPU_B_DEFAULT" in flags


def test_sources_listed_for_the_build_rule():
    got = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(KERNELS), "TARGET=gpu", "print-SOURCES-hxrun"],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout.split()
    assert {"cuda/hxrun_cuda.cu", "cuda/roles.cuh", "common/json.c", "common/platform_posix.c"} <= set(got)
    assert "hxrun/exec.c" not in got


def test_help_and_bad_arguments(built):
    exe = built / "build" / "gpu" / "hxrun"
    r = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--b-mode streams|graph" in r.stdout
    r = subprocess.run([str(exe), "--out", "/tmp/never.jsonl", "--precision", "u8i8"], capture_output=True, text=True)
    assert r.returncode == 2 and "u8i8 is not available on the gpu target" in r.stderr


def test_without_a_gpu_it_names_what_is_missing(built, tmp_path):
    if gpu_present():
        pytest.skip("this machine has a GPU: tests/gpu/device_check.sh runs the runner here")
    out = tmp_path / "run.jsonl"
    r = subprocess.run([str(built / "build" / "gpu" / "hxrun"), "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "no NVIDIA driver" in r.stderr or "no usable NVIDIA GPU" in r.stderr
    assert not out.exists() and not out.with_suffix(".jsonl.tmp").exists()


@pytest.mark.skipif(not gpu_present(), reason="needs an NVIDIA GPU and its driver: run tests/gpu/device_check.sh there")
def test_device_check_on_a_gpu():
    r = subprocess.run(["bash", str(KERNELS.parent / "tests" / "gpu" / "device_check.sh")], timeout=900)
    assert r.returncode == 0
