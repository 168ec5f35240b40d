"""The point parameters and each target's settings.

Every runner option is a point parameter (:data:`POINT_KEYS`; the options
themselves: ``hxfuse.runner.cli``).  A point's effective parameters are the
config's defaults < its sweep's base < the point < the target's params
(:func:`point_params`); a target's run settings are ``run`` with
``target_settings.<target>.run`` on top (:func:`run_settings`).
"""

from __future__ import annotations

import copy

from hxfuse.config.targets import SDK_TARGETS

POINT_KEYS = (
    "precision",
    "m_shape",
    "v_variant",
    "v_shape",
    "v_passes",
    "v_workers",
    "d_shape",
    "d_src_stride",
    "d_desc_rows",
    "d_repeat",
    "scratch_bytes",
    "calibrate",
    "affinity",
    # every other runner option is a point parameter too, so any sweep can
    # vary it (docs/runner.md): M's tile, D's buffers, V's scratch release,
    # the fused entry's concurrency window, bandwidth antagonists and the
    # host's wait policy
    "m_tile",
    "d_buffers",
    "v_release",
    "window",
    "antagonist",
    "antagonist_bytes",
    "wait",
    "spin_ns",
    "early_completion",
)
# cores an affinity map may name (the runner also refuses a core the machine
# does not have; check_semantics does that for the host target)
AFFINITY_MAX_CORE = 1023
# VTCM of the SDK targets (target_settings.<target>.vtcm_bytes, 8 MiB on v73
# phones) and the HMX tile region a HexKL build keeps beside the scratch arena
# (HX_HMX_REGION_BYTES, kernels/hexagon/vtcm_qurt.h); the arena is rounded up
# to VTCM_ALIGN (kernels/hexagon/vtcm_qurt.c).
VTCM_BYTES_DEFAULT = 8 << 20
HMX_REGION_BYTES = 1 << 20
VTCM_ALIGN = 4096


def target_settings(config: dict, target: str) -> dict:
    """config.target_settings.<target> (empty when absent)."""
    ts = config.get("target_settings")
    ts = ts.get(target) if isinstance(ts, dict) else None
    return ts if isinstance(ts, dict) else {}


# How the host reaches the engines on the phone (target_settings.hexagon.mode;
# kernels/targets/hexagon.mk): "ap", the AP driver hxrun-ap on the phone's CPU
# with the skel libhxfuse_skel.so on the cDSP (FastRPC + dspqueue), or
# "dsp-only", the whole runner hxrun on the cDSP (the "host" is a DSP thread,
# so only C vs D is answered).  The simulator has no AP: always dsp-only.
DEVICE_MODES = ("ap", "dsp-only")
DEVICE_MODE_DEFAULT = "ap"
# the runner binary of each mode (kernels/build/<target>/<name>)
RUNNER_OF_MODE = {"ap": "hxrun-ap", "dsp-only": "hxrun"}


def device_mode(config: dict, target: str) -> str | None:
    """The SDK target's mode ("ap" or "dsp-only"); None where the host and
    the engines are one process by construction (host, hexagon-qemu)."""
    if target == "hexagon":
        return target_settings(config, target).get("mode", DEVICE_MODE_DEFAULT)
    return "dsp-only" if target in SDK_TARGETS else None


def runner_name(config: dict, target: str) -> str:
    """The binary the target's measurement jobs run: hxrun-ap in mode ap,
    hxrun otherwise (the self-test always runs hxrun: the AP driver has no
    --selftest yet)."""
    return RUNNER_OF_MODE.get(device_mode(config, target) or "dsp-only")


def point_params(config: dict, sweep: str, point: dict, target: str | None = None) -> dict:
    """The effective parameters of one point:
    defaults < sweep.base < point < target_settings.<target>.params."""
    params = {k: copy.deepcopy(config["defaults"][k]) for k in POINT_KEYS}
    if target in SDK_TARGETS:
        # the global default is sized for the host; on the cDSP the scratch
        # arena is VTCM, and by default it leaves room for HexKL's HMX region
        # (a sweep, point or target value above the VTCM is refused instead)
        params["scratch_bytes"] = min(params["scratch_bytes"], default_scratch_bytes(config, target))
    params.update(copy.deepcopy(config["sweeps"][sweep].get("base", {})))
    params.update({k: copy.deepcopy(v) for k, v in point.items() if k in POINT_KEYS})
    if target is not None:
        params.update(copy.deepcopy(target_settings(config, target).get("params") or {}))
    return params


def run_settings(config: dict, target: str) -> dict:
    """config.run with target_settings.<target>.run on top."""
    run = dict(config["run"])
    run.update(target_settings(config, target).get("run") or {})
    return run


def replicates(config: dict, target: str) -> int:
    """Independent runner invocations per point on *target* (run.replicates)."""
    return int(run_settings(config, target)["replicates"])


def vtcm_bytes(config: dict, target: str) -> int:
    """VTCM of an SDK target's cDSP (target_settings.<target>.vtcm_bytes)."""
    return int(target_settings(config, target).get("vtcm_bytes") or VTCM_BYTES_DEFAULT)


def default_scratch_bytes(config: dict, target: str) -> int:
    """scratch_bytes of an SDK target's points unless a sweep, point or the
    target's params say otherwise: the VTCM minus HexKL's HMX tile region
    (7 MiB of 8 MiB), whether or not this build uses HexKL, so that a point's
    parameters (and hash) do not depend on the environment."""
    return vtcm_bytes(config, target) - HMX_REGION_BYTES
