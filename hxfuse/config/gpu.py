"""What the `gpu` targets need on this machine (docs/gpu.md): nvcc, the NVIDIA
driver and a GPU, each named when missing before any job runs.

- :func:`find_nvcc`: the CUDA compiler: ``target_settings.<target>.nvcc``,
  else the environment's ``NVCC``, else ``nvcc`` on PATH, else the one the
  PyPI packages install (``pip install nvidia-cuda-nvcc nvidia-cuda-runtime
  nvidia-cuda-crt nvidia-cuda-cccl``: ``<site-packages>/nvidia/cu13/bin/nvcc``).
- :func:`probe_driver`: the driver API through ``libcuda.so.1`` (ctypes:
  ``cuInit``, ``cuDriverGetVersion``, ``cuDeviceGetCount``, ``cuDeviceGetName``,
  ``cuDeviceGetAttribute`` for the compute capability; CUDA Driver API
  reference), so the preflight needs neither nvidia-smi nor a build.
- :func:`target_problems`: one line per missing thing; also a driver older
  than the compiler's CUDA major version (the runner would not start).
- :func:`make_vars`: ``NVCC=`` and ``CUDA_ARCH=`` for kernels/cuda/cuda.mk.

Standard library only.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from hxfuse.config.params import target_settings

PIP_PACKAGES = "nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl"
INSTALL_HINT = f"pip install {PIP_PACKAGES} (CUDA 13, about 350 MB), or install the CUDA toolkit"


def pip_nvcc(paths: list[str] | None = None) -> str | None:
    """The nvcc of the PyPI packages, if installed on *paths* (sys.path)."""
    for p in paths if paths is not None else sys.path:
        for sub in ("cu13", "cu12"):
            cand = Path(p or ".", "nvidia", sub, "bin", "nvcc")
            if cand.is_file() and os.access(cand, os.X_OK):
                return str(cand)
    return None


def find_nvcc(
    config: dict, target: str, environ: dict | None = None, which: Callable = shutil.which, paths=None
) -> str | None:
    """The nvcc the build will use (None: none found)."""
    environ = os.environ if environ is None else environ
    set_ = target_settings(config, target).get("nvcc") or environ.get("NVCC")
    if set_:
        return set_ if (os.path.isabs(set_) and Path(set_).is_file()) or which(set_) else None
    return which("nvcc") or pip_nvcc(paths)


def nvcc_release(nvcc: str) -> tuple[int, int] | None:
    """(major, minor) of ``nvcc --version``'s release line, None if unreadable."""
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"release (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


# once per process: cuInit can take a second, and the Snakefile asks for
# every gpu target's make variables and preflight
@functools.lru_cache(maxsize=1)
def probe_driver() -> dict[str, Any]:
    """What the driver says: {driver: bool, error, cuda_version (e.g. 12040),
    gpus: [{name, compute_capability}]}."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        return {"driver": False, "error": str(exc), "gpus": []}
    rc = lib.cuInit(0)
    ver = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(ver))
    if rc != 0:
        return {"driver": True, "error": f"cuInit returned {rc}", "cuda_version": ver.value, "gpus": []}
    count = ctypes.c_int(0)
    lib.cuDeviceGetCount(ctypes.byref(count))
    gpus = []
    for i in range(count.value):
        dev = ctypes.c_int(0)
        lib.cuDeviceGet(ctypes.byref(dev), i)
        name = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(name, 256, dev)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76
        lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)
        lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)
        gpus.append({"name": name.value.decode(errors="replace"), "compute_capability": f"{major.value}.{minor.value}"})
    return {"driver": True, "error": None, "cuda_version": ver.value, "gpus": gpus}


def cuda_arch(config: dict, target: str, probe: dict | None = None) -> str | None:
    """CUDA_ARCH of the build: target_settings.<target>.cuda_arch, else the
    first GPU's compute capability without the dot (90 on Hopper), else None
    (kernels/cuda/cuda.mk then asks nvidia-smi, or builds for 90)."""
    set_ = target_settings(config, target).get("cuda_arch")
    if set_:
        return str(set_)
    gpus = (probe or {}).get("gpus") or []
    return gpus[0]["compute_capability"].replace(".", "") if gpus else None


def target_problems(
    config: dict,
    target: str,
    environ: dict | None = None,
    which: Callable = shutil.which,
    probe: Callable[[], dict] | None = None,
    release: Callable[[str], tuple[int, int] | None] | None = None,
    paths=None,
) -> list[str]:
    """What target *target* (a gpu target) lacks here, one line each."""
    pre = f"target {target}: "
    key = f"target_settings.{target}.nvcc"
    problems = []
    nvcc = find_nvcc(config, target, environ, which, paths)
    if not nvcc:
        problems.append(pre + f"nvcc (the CUDA compiler) is not found: {INSTALL_HINT}, or set NVCC or {key}")
    # looked up at call time (not bound as defaults) so a caller can stand in for them
    p = (probe or probe_driver)()
    release = release or nvcc_release
    if not p.get("driver"):
        problems.append(
            pre + "no NVIDIA driver: libcuda.so.1 cannot be loaded "
            f"({p.get('error')}); the gpu targets run on a machine with an NVIDIA GPU and its driver"
        )
    elif p.get("error"):
        problems.append(pre + f"the NVIDIA driver does not start ({p['error']}); check nvidia-smi")
    elif not p.get("gpus"):
        problems.append(
            pre + "the NVIDIA driver sees no GPU (cuDeviceGetCount = 0; CUDA_VISIBLE_DEVICES="
            f"{(environ if environ is not None else os.environ).get('CUDA_VISIBLE_DEVICES', 'unset')})"
        )
    if nvcc and p.get("driver") and p.get("cuda_version"):
        rel = release(nvcc)
        drv = (p["cuda_version"] // 1000, p["cuda_version"] % 1000 // 10)
        if rel and rel[0] > drv[0]:
            problems.append(
                pre + f"{nvcc} is CUDA {rel[0]}.{rel[1]} but the driver supports CUDA {drv[0]}.{drv[1]}: "
                f"the runner would not start; use the machine's own CUDA toolkit (NVCC or {key}) or a newer driver"
            )
    return problems


def make_vars(
    config: dict,
    target: str,
    environ: dict | None = None,
    which: Callable = shutil.which,
    probe: Callable[[], dict] | None = None,
) -> list[str]:
    """make VAR=value of a gpu target's build (kernels/cuda/cuda.mk): NVCC,
    and CUDA_ARCH from the settings or the GPU the driver reports (none:
    cuda.mk asks nvidia-smi, else builds for 90)."""
    out = []
    nvcc = find_nvcc(config, target, environ, which)
    if nvcc:
        out.append(f"NVCC={nvcc}")
    arch = cuda_arch(
        config, target, None if target_settings(config, target).get("cuda_arch") else (probe or probe_driver)()
    )
    if arch:
        out.append(f"CUDA_ARCH={arch}")
    return out
