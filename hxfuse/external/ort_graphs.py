"""The ONNX graphs of the M, V and D tasks (onnx.helper; nothing downloaded).

Owns :func:`build_model`: one model holding the given tasks as independent
branches (one task: that task's own model), and the opset and IR version
the records name.  Every node name starts with its task letter and "_" so
that the profile of a graph holding several branches can be split by task
(:mod:`hxfuse.external.ort_profile`).  onnx is imported inside the
functions: parsing and refusing a point needs no onnx.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from hxfuse.external.ort_point import OrtHarnessError, Spec
from hxfuse.model import TASKS

OPSET = 17
IR_VERSION = 8


def _model(graph):
    from onnx import helper

    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="hxfuse.external.ort")
    m.ir_version = IR_VERSION
    return m


def _m_parts(spec: Spec, B: np.ndarray):
    from onnx import TensorProto as TP, helper, numpy_helper

    # B is a constant of the model (a weight), so ONNX Runtime packs it once at
    # session creation, as hxrun prepares its layout outside the timed region.
    # A stays a bound input: with both constant the whole product would be
    # folded away at load time.
    nodes = [helper.make_node("MatMul", ["M_A", "M_B"], ["M_C"], name="M_matmul")]
    inputs = [helper.make_tensor_value_info("M_A", TP.FLOAT, [spec.m, spec.k])]
    outputs = [helper.make_tensor_value_info("M_C", TP.FLOAT, [spec.m, spec.n])]
    inits = [numpy_helper.from_array(np.ascontiguousarray(B, dtype=np.float32), "M_B")]
    return nodes, inputs, outputs, inits


def _v_parts(spec: Spec):
    from onnx import TensorProto as TP, helper, numpy_helper

    # kernels_ref.c: v <- v / (1 + exp(-v)) `passes` times per element, then
    # the row sum and row max of the result.  As a graph each pass is
    # x * Sigmoid(x) over the whole array (ONNX Runtime may fuse the pair).
    # The stream variant's activation is hard-swish, x * min(max(x + 3, 0), 6) / 6
    # (docs/runner.md, Bandwidth): ONNX's HardSwish, x * max(0, min(1, x / 6 + 1/2)).
    nodes, cur = [], "V_X"
    for p in range(spec.v_passes):
        out = "V_Y" if p == spec.v_passes - 1 else f"V_a{p}"
        if spec.v_variant == "stream":
            nodes.append(helper.make_node("HardSwish", [cur], [out], name=f"V_hswish{p}"))
        else:
            nodes.append(helper.make_node("Sigmoid", [cur], [f"V_s{p}"], name=f"V_sigmoid{p}"))
            nodes.append(helper.make_node("Mul", [cur, f"V_s{p}"], [out], name=f"V_mul{p}"))
        cur = out
    nodes.append(helper.make_node("ReduceSum", ["V_Y", "V_axis"], ["V_rowsum"], keepdims=0, name="V_rowsum"))
    nodes.append(helper.make_node("ReduceMax", ["V_Y"], ["V_rowmax"], axes=[1], keepdims=0, name="V_rowmax"))
    inputs = [helper.make_tensor_value_info("V_X", TP.FLOAT, [spec.v_rows, spec.v_cols])]
    outputs = [
        helper.make_tensor_value_info("V_Y", TP.FLOAT, [spec.v_rows, spec.v_cols]),
        helper.make_tensor_value_info("V_rowsum", TP.FLOAT, [spec.v_rows]),
        helper.make_tensor_value_info("V_rowmax", TP.FLOAT, [spec.v_rows]),
    ]
    inits = [numpy_helper.from_array(np.array([1], np.int64), "V_axis")]
    return nodes, inputs, outputs, inits


def _d_parts(spec: Spec, loop: bool = True):
    from onnx import TensorProto as TP, helper, numpy_helper

    rows, rb, stride, rep = spec.d_rows, spec.d_row_bytes, spec.d_src_stride, spec.d_repeat
    inputs = [helper.make_tensor_value_info("D_src", TP.UINT8, [rep * rows, stride])]
    outputs = [helper.make_tensor_value_info("D_dst", TP.UINT8, [rows, rb])]
    if rep > 1 and not loop:
        # QNN has no Loop: the row bytes of every window, then the last window
        # (the same output; only for the QNN functional check)
        nodes = [
            helper.make_node("Slice", ["D_src", "D_starts0", "D_ends0"], ["D_all"], name="D_rows"),
            helper.make_node("Slice", ["D_all", "D_starts1", "D_ends1"], ["D_dst"], name="D_last"),
        ]
        inits = [
            numpy_helper.from_array(np.array([0, 0], np.int64), "D_starts0"),
            numpy_helper.from_array(np.array([rep * rows, rb], np.int64), "D_ends0"),
            numpy_helper.from_array(np.array([(rep - 1) * rows, 0], np.int64), "D_starts1"),
            numpy_helper.from_array(np.array([rep * rows, rb], np.int64), "D_ends1"),
        ]
        return nodes, inputs, outputs, inits
    if rep == 1:
        nodes = [helper.make_node("Slice", ["D_src", "D_starts0", "D_ends0"], ["D_dst"], name="D_slice")]
        inits = [
            numpy_helper.from_array(np.array([0, 0], np.int64), "D_starts0"),
            numpy_helper.from_array(np.array([rows, rb], np.int64), "D_ends0"),
        ]
        return nodes, inputs, outputs, inits
    # hxrun streams `repeat` source windows through one scratch window (the
    # last one stays).  A Loop whose carried value is the window does the
    # same: each iteration copies window w (rows x row_bytes out of rows x
    # stride) into a window-sized buffer that replaces the previous one, so D
    # reads every window and writes one window's worth of memory per window,
    # not a repeat-times larger destination.
    body = helper.make_graph(
        [
            helper.make_node("Gather", ["D_starts", "D_it"], ["D_st"], axis=0, name="D_gather"),
            helper.make_node("Add", ["D_st", "D_win"], ["D_en"], name="D_end"),
            helper.make_node("Slice", ["D_src", "D_st", "D_en"], ["D_out"], name="D_slice"),
            helper.make_node("Identity", ["D_cond_in"], ["D_cond_out"], name="D_cond"),
        ],
        "D_body",
        [
            helper.make_tensor_value_info("D_it", TP.INT64, []),
            helper.make_tensor_value_info("D_cond_in", TP.BOOL, []),
            helper.make_tensor_value_info("D_win_in", TP.UINT8, [rows, rb]),
        ],
        [
            helper.make_tensor_value_info("D_cond_out", TP.BOOL, []),
            helper.make_tensor_value_info("D_out", TP.UINT8, [rows, rb]),
        ],
    )
    nodes = [helper.make_node("Loop", ["D_trips", "D_true", "D_init"], ["D_dst"], body=body, name="D_loop")]
    starts = np.array([[w * rows, 0] for w in range(rep)], np.int64)
    inits = [
        numpy_helper.from_array(np.array(rep, np.int64), "D_trips"),
        numpy_helper.from_array(np.array(True), "D_true"),
        numpy_helper.from_array(np.zeros((rows, rb), np.uint8), "D_init"),
        numpy_helper.from_array(starts, "D_starts"),
        numpy_helper.from_array(np.array([rows, rb], np.int64), "D_win"),
    ]
    return nodes, inputs, outputs, inits


def build_model(spec: Spec, tasks: Iterable[str], inputs: Mapping[str, np.ndarray], loop: bool = True):
    """One ONNX model holding the given tasks as independent branches (one task:
    that task's own model).  *inputs* supplies M's constant B.  ``loop=False``
    builds D without a Loop (for QNN, which has none)."""
    from onnx import checker, helper

    nodes, ins, outs, inits = [], [], [], []
    tasks = [t for t in TASKS if t in set(tasks)]
    if not tasks:
        raise OrtHarnessError("build_model: no task")
    for t in tasks:
        parts = _m_parts(spec, inputs["M_B"]) if t == "M" else _v_parts(spec) if t == "V" else _d_parts(spec, loop)
        for acc, part in zip((nodes, ins, outs, inits), parts):
            acc.extend(part)
    model = _model(helper.make_graph(nodes, "hx_" + "".join(tasks), ins, outs, initializer=inits))
    checker.check_model(model)
    return model
