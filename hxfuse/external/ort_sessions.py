"""ONNX Runtime sessions with their inputs and outputs bound once.

Owns :class:`BoundSession`: the session options of each run mode (one
intra-op thread per task session, V's worker quota, ``ORT_PARALLEL`` with
one inter-op thread per branch for the multi-branch graph), profiling on,
IOBinding so ``run()`` moves no tensors, hxrun's poisoning of the outputs
and the runner's checksum of a task's outputs (:data:`OUTPUTS`).
"""

from __future__ import annotations

import json
import os
from typing import Mapping, Sequence

import numpy as np

from hxfuse.external.ort_graphs import build_model
from hxfuse.external.ort_point import Spec
from hxfuse.model import TASKS
from hxfuse.runner.checks import checksum_hex, task_checksum

# The outputs of each task, in the runner's checksum order (kernels/hxrun/tasks.c).
OUTPUTS = {"M": ("M_C",), "V": ("V_Y", "V_rowsum", "V_rowmax"), "D": ("D_dst",)}

_NP_DTYPE = {"M_C": np.float32, "V_Y": np.float32, "V_rowsum": np.float32, "V_rowmax": np.float32, "D_dst": np.uint8}


def output_shapes(spec: Spec) -> dict[str, tuple[int, ...]]:
    return {
        "M_C": (spec.m, spec.n),
        "V_Y": (spec.v_rows, spec.v_cols),
        "V_rowsum": (spec.v_rows,),
        "V_rowmax": (spec.v_rows,),
        "D_dst": (spec.d_rows, spec.d_row_bytes),
    }


class BoundSession:
    """An InferenceSession with its inputs and outputs bound once (IOBinding):
    ``run()`` moves no tensors and allocates no outputs."""

    def __init__(
        self,
        spec: Spec,
        tasks: Sequence[str],
        inputs: Mapping[str, np.ndarray],
        *,
        intra_threads: int,
        parallel: bool,
        profile_prefix: str,
    ):
        import onnxruntime as ort

        self.tasks = tuple(t for t in TASKS if t in set(tasks))
        model = build_model(spec, self.tasks, inputs)
        so = ort.SessionOptions()
        # One intra-op thread per session: each of hxrun's engines is one
        # thread, so a task's kernel runs on the thread that called run(),
        # which is also the thread whose CPU time is measured (V with a
        # worker quota gets that many threads, as hxrun's V does).
        so.intra_op_num_threads = intra_threads
        so.inter_op_num_threads = len(self.tasks) if parallel else 1
        so.execution_mode = ort.ExecutionMode.ORT_PARALLEL if parallel else ort.ExecutionMode.ORT_SEQUENTIAL
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
        so.log_severity_level = 3
        self.session = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        self.profile_start_ns = int(self.session.get_profiling_start_time_ns())
        self.options = {
            "intra_op_num_threads": intra_threads,
            "inter_op_num_threads": so.inter_op_num_threads,
            "execution_mode": "ORT_PARALLEL" if parallel else "ORT_SEQUENTIAL",
            "graph_optimization_level": str(so.graph_optimization_level).split(".")[-1],
            "nodes": [n.name for n in model.graph.node],
        }
        self.binding = self.session.io_binding()
        self._inputs = {i.name: np.ascontiguousarray(inputs[i.name]) for i in self.session.get_inputs()}
        for name, arr in self._inputs.items():
            self.binding.bind_cpu_input(name, arr)
        shapes = output_shapes(spec)
        self.outputs: dict[str, np.ndarray] = {}
        for o in self.session.get_outputs():
            arr = np.empty(shapes[o.name], dtype=_NP_DTYPE[o.name])
            self.binding.bind_output(o.name, "cpu", 0, arr.dtype, list(arr.shape), arr.ctypes.data)
            self.outputs[o.name] = arr
        self.runs = 0  # run() calls so far: the index of the profile's model_run events

    def run(self) -> int:
        """One run; returns its index among this session's runs."""
        self.session.run_with_iobinding(self.binding)
        self.runs += 1
        return self.runs - 1

    def poison(self) -> None:
        # As hxrun does before every trial: a run that wrote nothing shows up
        # as a wrong checksum.
        for arr in self.outputs.values():
            arr.view(np.uint8).fill(0xA5)

    def checksum(self, task: str) -> str:
        return checksum_hex(task_checksum([self.outputs[n] for n in OUTPUTS[task]]))

    def end_profiling(self) -> list[dict]:
        path = self.session.end_profiling()
        try:
            with open(path) as fh:
                return json.load(fh)
        finally:
            os.unlink(path)
