"""The QNN HTP emulation check: a functional check, never a timing.

Owns :func:`qnn_check`: each task's graph and the workloads' multi-branch
graphs run on ONNX Runtime's QNN execution provider (Qualcomm's x86
emulation of the HTP backend, fp16, no CPU fallback), outputs compared with
numpy within fp16 tolerance; :func:`qnn_problems` says what the machine
lacks for it (the optional onnxruntime-qnn package, :data:`QNN_PIN`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from hxfuse.external.ort_checks import check_arrays, numpy_reference
from hxfuse.external.ort_graphs import build_model
from hxfuse.external.ort_inputs import runner_inputs
from hxfuse.external.ort_point import OrtHarnessError, Spec
from hxfuse.model import WORKLOAD_TASKS

QNN_PIN = "onnxruntime-qnn==2.7.0"
# fp16 on the HTP: about ten fp16 ulps (2^-10 each) on the scales of
# hxfuse.runner.checks' formulas; a wrong element, row or window is off by O(1).
F16_RTOL = 1e-2
F16_ATOL = 1e-2


def qnn_problems() -> list[str]:
    """What the QNN check lacks on this machine (empty: it can run)."""
    try:
        import onnxruntime_qnn  # noqa: F401
    except ImportError:
        return [
            f"onnxruntime-qnn is not installed: pip install '{QNN_PIN}' (Linux x86_64 wheel: "
            "ONNX Runtime's QNN plugin with Qualcomm's x86 emulation of the HTP backend)"
        ]
    import onnxruntime_qnn as oq

    missing = [p for p in (oq.get_library_path(), oq.get_qnn_htp_path()) if not os.path.isfile(p)]
    return [f"onnxruntime-qnn is installed but lacks {p}" for p in missing]


def qnn_check(
    spec: Spec, soc_model: str = "43", htp_arch: str = "73", rtol: float = F16_RTOL, atol: float = F16_ATOL
) -> dict[str, Any]:
    """Run each task's graph and the workloads' multi-branch graphs on the QNN
    HTP backend (x86 emulation, fp16, CPU fallback disabled so every node runs
    on the HTP) and compare the outputs with numpy within fp16 tolerance.
    Returns a JSON-serialisable result with ``status`` ok/failed; no timings."""
    problems = qnn_problems()
    if problems:
        raise OrtHarnessError("; ".join(problems))
    import onnxruntime as ort
    import onnxruntime_qnn as oq

    try:
        ort.register_execution_provider_library("QNNExecutionProvider", oq.get_library_path())
    except Exception as exc:  # registered twice in one process: keep the first
        if "already registered" not in str(exc):
            raise
    devices = [d for d in ort.get_ep_devices() if d.ep_name == "QNNExecutionProvider"]
    if not devices:
        raise OrtHarnessError("the QNN execution provider registered no device")
    inputs = runner_inputs(spec)
    result: dict[str, Any] = {
        "record": "qnn_check",
        "emulated": True,
        "backend": f"onnxruntime {ort.__version__} + onnxruntime-qnn {oq.__version__} QNN HTP "
        f"(x86 emulation, soc_model {soc_model}, htp_arch {htp_arch}, fp16)",
        "note": "EMULATED: correctness only; no timing is recorded",
        "tolerance": {"rtol": rtol, "atol": atol},
        "graphs": {},
        "status": "ok",
        "reasons": [],
    }
    graphs = [[t] for t in spec.tasks] + [list(WORKLOAD_TASKS[w]) for w in spec.workloads]
    for tasks in graphs:
        key = "".join(tasks)
        if key in result["graphs"]:
            continue
        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        so.add_provider_for_devices(
            devices,
            {
                "backend_path": oq.get_qnn_htp_path(),
                "soc_model": soc_model,
                "htp_arch": htp_arch,
                "enable_htp_fp16_precision": "1",
            },
        )
        entry: dict[str, Any] = {"tasks": tasks}
        try:
            sess = ort.InferenceSession(build_model(spec, tasks, inputs, loop=False).SerializeToString(), so)
            names = [o.name for o in sess.get_outputs()]
            outs = dict(zip(names, sess.run(None, {i.name: inputs[i.name] for i in sess.get_inputs()})))
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            result["reasons"].append(f"{key}: {entry['error']}")
        else:
            arrays = {k: v for k, v in inputs.items() if k[0] in tasks} | outs
            bad = check_arrays(spec, arrays, rtol, atol)
            entry["reasons"] = bad
            entry["max_abs_err"] = {
                n: float(np.max(np.abs(outs[n].astype(np.float64) - ref)))
                for t in tasks
                for n, ref in numpy_reference(spec, inputs, t).items()
            }
            result["reasons"] += [f"{key}: {b}" for b in bad]
        result["graphs"][key] = entry
    if result["reasons"]:
        result["status"] = "failed"
    return result
