"""Correctness of ONNX Runtime's outputs: numpy's answer and the runner's check.

Owns :func:`numpy_reference` (what each task's outputs must be),
:func:`check_arrays` (hxfuse.runner.checks' comparison, the one every runner
point passes) and :func:`v_activation` (V's activation as hxrun names it).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from hxfuse.external.ort_point import Spec
from hxfuse.runner.checks import DEFAULT_F32_ATOL, DEFAULT_F32_RTOL, check_outputs


def numpy_reference(spec: Spec, inputs: Mapping[str, np.ndarray], task: str) -> dict[str, np.ndarray]:
    """What each task's outputs must be, from numpy (float64 for M and V)."""
    from hxfuse.runner.checks import hswish_passes_f32, silu_passes_f32

    if task == "M":
        return {"M_C": inputs["M_A"].astype(np.float64) @ inputs["M_B"].astype(np.float64)}
    if task == "V":
        act = hswish_passes_f32 if spec.v_variant == "stream" else silu_passes_f32
        y = act(inputs["V_X"], spec.v_passes)
        return {"V_Y": y, "V_rowsum": y.sum(axis=1), "V_rowmax": y.max(axis=1)}
    last = inputs["D_src"][(spec.d_repeat - 1) * spec.d_rows :]
    return {"D_dst": np.ascontiguousarray(last[:, : spec.d_row_bytes])}


def v_activation(spec: Spec) -> str:
    """V's activation as hxrun's meta.tasks.V.activation names it (fp32)."""
    return "hardswish" if spec.v_variant == "stream" else "silu"


def check_arrays(
    spec: Spec, arrays: Mapping[str, np.ndarray], rtol: float = DEFAULT_F32_RTOL, atol: float = DEFAULT_F32_ATOL
) -> list[str]:
    """hxfuse.runner.checks' comparison (same formulas and tolerances as every runner
    point) of the given inputs + outputs; returns the problems, empty when all pass."""
    arrs = dict(arrays)
    if "D_src" in arrs:
        # checks.check_outputs compares D against the last window (as hxrun saves it)
        arrs["D_src"] = arrs["D_src"][(spec.d_repeat - 1) * spec.d_rows :]
    meta = {
        "tasks": {
            "V": {"passes": spec.v_passes, "activation": v_activation(spec)},
            "D": {"row_bytes": spec.d_row_bytes},
        }
    }
    reasons, _ = check_outputs(meta, arrs, rtol, atol)
    return reasons
