"""The gpu targets in the config: point limits refused before any job, the
preflight naming nvcc, the driver and the GPU, the build's make variables,
and config/gpu.yaml (docs/gpu.md)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path


from hxfuse.config import gpu as hxgpu
from hxfuse.config import preflight
from hxfuse.config import targets as tg

REPO = Path(__file__).resolve().parents[2]
H200 = {
    "driver": True,
    "error": None,
    "cuda_version": 13000,
    "gpus": [{"name": "NVIDIA H200", "compute_capability": "9.0"}],
}


def _fake_nvcc(tmp_path: Path) -> str:
    exe = tmp_path / "nvcc"
    exe.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def _problems(tmp_path, probe, nvcc=True, release=(13, 0), settings=None):
    config = {"targets": ["gpu"], "target_settings": {"gpu": settings or {}}}
    env = {"NVCC": _fake_nvcc(tmp_path)} if nvcc else {}
    return hxgpu.target_problems(
        config, "gpu", environ=env, which=lambda n: None, probe=lambda: probe, release=lambda _: release, paths=[]
    )


def test_the_gpu_targets():
    assert tg.GPU_TARGETS == ("gpu", "gpu-graph")
    for name in tg.GPU_TARGETS:
        t = tg.get(name)
        assert not t.emulated and t.toolchain == "nvcc" and t.gpu
        assert not tg.emulated_results(name)
    assert "stream" in tg.get("gpu").group_b and "graph" in tg.get("gpu-graph").group_b


def test_point_limits_name_the_key():
    assert tg.point_limit_problems("gpu", {"precision": "fp32", "window": "all"}, "p") == []
    got = tg.point_limit_problems("gpu", {"precision": "u8i8", "m_tile": 64, "window": 2}, "sweeps.s.points[0]")
    assert len(got) == 3
    assert got[0].startswith("sweeps.s.points[0].precision: target gpu takes only precision: fp32")
    assert "target_settings.gpu.params.m_tile: null" in got[1]
    assert tg.point_limit_problems("host", {"precision": "u8i8"}, "p") == []


def test_a_gpu_ready_machine_has_no_problems(tmp_path):
    assert _problems(tmp_path, H200) == []


def test_missing_nvcc_is_named_with_the_install_command(tmp_path):
    (msg,) = _problems(tmp_path, H200, nvcc=False)
    assert msg.startswith("target gpu: nvcc (the CUDA compiler) is not found")
    assert "pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl" in msg


def test_missing_driver_and_gpu_are_named(tmp_path):
    (msg,) = _problems(tmp_path, {"driver": False, "error": "libcuda.so.1: cannot open", "gpus": []})
    assert "no NVIDIA driver: libcuda.so.1 cannot be loaded" in msg
    (msg,) = _problems(tmp_path, {"driver": True, "error": None, "cuda_version": 13000, "gpus": []})
    assert "sees no GPU" in msg
    (msg,) = _problems(tmp_path, {"driver": True, "error": "cuInit returned 100", "cuda_version": 13000, "gpus": []})
    assert "does not start (cuInit returned 100)" in msg


def test_a_driver_older_than_nvcc_is_named(tmp_path):
    old = {**H200, "cuda_version": 12040}
    (msg,) = _problems(tmp_path, old, release=(13, 5))
    assert "is CUDA 13.5 but the driver supports CUDA 12.4" in msg
    assert _problems(tmp_path, old, release=(12, 6)) == []


def test_the_preflight_asks_the_gpu_module(monkeypatch):
    monkeypatch.setattr(hxgpu, "probe_driver", lambda: {"driver": False, "error": "x", "gpus": []})
    monkeypatch.setattr(hxgpu, "target_problems", lambda c, t, e=None, which=None, **kw: [f"{t}: checked"])
    got = preflight.target_problems({"targets": ["host", "gpu", "gpu-graph"]}, environ={}, which=lambda n: "/bin/x")
    assert got == ["gpu: checked", "gpu-graph: checked"]


def test_make_vars_pass_nvcc_and_the_arch(tmp_path, monkeypatch):
    nvcc = _fake_nvcc(tmp_path)
    config = {"build": {}, "target_settings": {"gpu": {"nvcc": nvcc, "cuda_arch": "90a"}}}
    assert preflight.make_vars(config, "gpu") == [f"NVCC={nvcc}", "CUDA_ARCH=90a"]
    # not set: the arch of the GPU the driver reports (sm_90 for an H200), none without one
    config["target_settings"]["gpu"].pop("cuda_arch")
    monkeypatch.setattr(hxgpu, "probe_driver", lambda: H200)
    assert preflight.make_vars(config, "gpu") == [f"NVCC={nvcc}", "CUDA_ARCH=90"]
    monkeypatch.setattr(hxgpu, "probe_driver", lambda: {"driver": False, "error": "x", "gpus": []})
    assert preflight.make_vars(config, "gpu") == [f"NVCC={nvcc}"]


def test_the_pypi_nvcc_is_found(tmp_path):
    exe = tmp_path / "nvidia" / "cu13" / "bin" / "nvcc"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\n")
    assert hxgpu.pip_nvcc([str(tmp_path)]) is None  # not executable
    exe.chmod(0o755)
    assert hxgpu.pip_nvcc([str(tmp_path)]) == str(exe)
    assert hxgpu.find_nvcc({}, "gpu", environ={}, which=lambda n: None, paths=[str(tmp_path)]) == str(exe)


def _check(cfg: Path):
    return subprocess.run(
        [sys.executable, "-m", "hxfuse.config", str(cfg)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )


def test_the_gpu_study_validates():
    r = _check(REPO / "config" / "gpu.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "16 points" in r.stdout and "gpu-graph/gpu_share/mvd/v6" in r.stdout


def test_the_schema_refuses_a_u8i8_gpu_point(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(
        (REPO / "config" / "gpu.yaml").read_text() + "target_settings:\n  gpu:\n    params: {precision: u8i8}\n"
    )
    r = _check(cfg)
    assert r.returncode != 0
    assert "precision: target gpu takes only precision: fp32" in r.stdout + r.stderr
