"""The same M, V and D tasks run by ONNX Runtime: a real backend's own concurrency as group B.

On the host the runner's group B is the project's own executor, so it differs
from D only in who pushes the jobs.  This module runs the *same* tasks (same
shapes, same fp32 precision, bit-identical inputs) as ONNX graphs under ONNX
Runtime's CPU execution provider and records them in the runner's raw schema
(docs/runner.md), so that :func:`hxfuse.runner.records.read_run` and the metrics read them
like any runner output.  Groups (see docs/ort.md):

``A_ort``        one session per task, run back to back (the host hands one
                 task to its thread, waits, then the next);
``B_ort``        the same sessions' ``run`` called from three threads at once:
                 ONNX Runtime's real concurrency for independent models;
``B_ort_graph``  one graph holding the independent branches, executed with
                 ``ExecutionMode.ORT_PARALLEL`` (negative control: on the CPU
                 provider it runs the branches one after another);
``alone``        each task's session alone.

Timing: ``launch`` is when ``run`` was called, ``begin``/``end`` of each task
come from ONNX Runtime's per-node profile (the first node's start, the last
node's end within that run), aligned on the harness clock with
``get_profiling_start_time_ns``.  :func:`profile_runs` is that conversion, a
pure function of the profile's events.

Usage::

    python -m hxfuse.external.ort --out FILE.jsonl [--npy-dir DIR] [hxrun options]

The point options are hxrun's (``hxfuse.config.runner_args``).  Each is
either honoured (the tasks' sizes, the V variant, fp32, V's workers, the
placement, rounds and seeds), recorded because it only shapes how hxrun
schedules its own groups (:data:`SCHEDULING_ONLY`), or, where it changes the
tasks' work in a way no ONNX graph or session option can express, refused
before any work unless it has hxrun's default (:data:`NOT_EXPRESSIBLE`).
:func:`point_problems` says which of a point's options are refused.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import queue
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from hxfuse.runner.checks import DEFAULT_F32_ATOL, DEFAULT_F32_RTOL, check_outputs, checksum_hex, task_checksum
from hxfuse.model import ENGINE_OF, ORT_GROUPS, TASKS, V_VARIANT_DEFAULTS, WORKLOAD_TASKS

OPSET = 17
IR_VERSION = 8
GROUPS = ORT_GROUPS
# hxrun options that only shape how hxrun schedules its own groups (its
# engines' waits, group D's fused entry and concurrency window) or bound its
# scratch arena: ONNX Runtime's groups schedule themselves and the tasks' work
# is the same, so these are recorded, not refused.
SCHEDULING_ONLY = {
    "scratch_bytes": "the capacity of hxrun's scratch arena (a bound it checks; the tasks' work is the same)",
    "wait": "how hxrun's host and engines wait",
    "spin_ns": "how long hxrun's waits spin",
    "early_completion": "when group D's fused entry publishes a task",
    "groups": "which of hxrun's groups A-D run",
    "window": "group D's concurrency window inside the fused entry",
    "v_release": "when group D's fused entry frees V's scratch",
}
# hxrun options that change the tasks' own work in a way the harness cannot
# express: accepted at hxrun's default (kernels/hxrun/args.c), refused otherwise
# (before any work) rather than silently measuring a different point.
NOT_EXPRESSIBLE = {
    "m_tile": (
        None,
        "--m-tile",
        "M's k-block is hxrun's GEMM blocking; ONNX Runtime's MatMul (MLAS) "
        "chooses its own and has no option to set it",
    ),
    "d_desc_rows": (
        64,
        "--d-desc-rows",
        "D's descriptor chain is hxrun's copy engine; the ONNX graph's "
        "Slice copies a window in one kernel, with no descriptors",
    ),
    "d_buffers": (
        1,
        "--d-buffers",
        "D's scratch windows are hxrun's buffer plan; ONNX Runtime's memory planner owns the graph's buffers",
    ),
    "antagonist": (
        0,
        "--antagonist",
        "the harness starts no bandwidth antagonists, so ONNX Runtime would run on an uncontended machine",
    ),
    "antagonist_bytes": (1 << 26, "--antagonist-bytes", "the harness starts no bandwidth antagonists"),
}
# The outputs of each task, in the runner's checksum order (kernels/hxrun/tasks.c).
OUTPUTS = {"M": ("M_C",), "V": ("V_Y", "V_rowsum", "V_rowmax"), "D": ("D_dst",)}
SCHEMA_VERSION = 2


class OrtHarnessError(ValueError):
    """Bad arguments or an unsupported point: raised before any work."""


# --------------------------------------------------------------------------
# the point


@dataclass(frozen=True)
class Spec:
    """One point, in hxrun's terms (docs/runner.md)."""

    workloads: tuple[str, ...] = ("mvd",)
    precision: str = "fp32"
    m: int = 256
    n: int = 256
    k: int = 256
    v_variant: str = "onchip"
    v_rows: int = 512
    v_cols: int = 1024
    v_passes: int = 1
    v_workers: int = 1
    d_rows: int = 1024
    d_row_bytes: int = 2048
    d_src_stride: int = 4096
    d_repeat: int = 1
    warmup: int = 5
    rounds: int = 30
    seed: int = 1
    order_seed: int | None = None  # None: seed
    affinity: str | None = None
    # recorded for provenance; they describe hxrun's engines, not ORT's
    ignored: dict = field(default_factory=dict)

    @property
    def tasks(self) -> tuple[str, ...]:
        used = set().union(*(WORKLOAD_TASKS[w] for w in self.workloads))
        return tuple(t for t in TASKS if t in used)


def _ints(text: str, n: int, opt: str, lo: int = 1) -> list[int]:
    try:
        vals = [int(x, 0) for x in text.split(",")]
    except ValueError:
        vals = []
    if len(vals) != n or any(v < lo for v in vals):
        raise OrtHarnessError(f"{opt}: expected {n} comma-separated integers >= {lo} (got {text!r})")
    return vals


def _int(text: str, opt: str, lo: int) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise OrtHarnessError(f"{opt}: expected an integer (got {text!r})") from None
    if v < lo:
        raise OrtHarnessError(f"{opt}: must be >= {lo} (got {v})")
    return v


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m hxfuse.external.ort",
        description="Run one point's M/V/D tasks under ONNX Runtime (groups A_ort, B_ort, "
        "B_ort_graph, alone) and write the runner's JSON Lines schema.",
    )
    p.add_argument("--out", required=True, help="JSON Lines output (written to FILE.tmp, renamed on success)")
    p.add_argument("--npy-dir", help="write the verification run's inputs and outputs as .npy")
    p.add_argument("--workloads", default="mvd")
    p.add_argument("--precision", default="fp32")
    p.add_argument("--m-shape", default="256,256,256")
    p.add_argument("--v-variant", default="onchip")
    p.add_argument("--v-shape")
    p.add_argument("--v-passes")
    p.add_argument("--v-workers", default="1")
    p.add_argument("--d-shape", default="1024,2048")
    p.add_argument("--d-src-stride")
    p.add_argument("--d-repeat", default="1")
    p.add_argument("--warmup", default="5")
    p.add_argument("--rounds", default="30")
    p.add_argument("--seed", default="1", help="input data (hxrun's generator) and, by default, the round order")
    p.add_argument("--order-seed", help="seed of the round order only (replicates: same inputs, new order)")
    p.add_argument("--affinity", help="spread, or engine=core pairs (mx, vec, dma, host)")
    p.add_argument("--calibrate", help="not supported: ONNX Runtime runs the real kernels")
    p.add_argument("--label", action="append", default=[], help="KEY=VALUE, copied into meta.labels")
    p.add_argument(
        "--qnn-check",
        action="store_true",
        help="instead of timing: run the graphs on the QNN HTP x86 emulation (fp16) and write "
        "a JSON correctness result to --out (needs onnxruntime-qnn)",
    )
    p.add_argument("--qnn-soc-model", default="43", help="QNN soc_model of the emulated HTP (43: SM8550)")
    p.add_argument("--qnn-htp-arch", default="73", help="QNN htp_arch of the emulated HTP")
    for key in SCHEDULING_ONLY:
        p.add_argument("--" + key.replace("_", "-"), help=f"hxrun option ({SCHEDULING_ONLY[key]}), recorded only")
    for default, opt, why in NOT_EXPRESSIBLE.values():
        p.add_argument(opt, help=f"hxrun option; only its default ({default}) is accepted: {why}")
    return p


def _same_value(text: str, default: Any) -> bool:
    """Whether an option's text is hxrun's default (numbers in any base)."""
    if default is None:
        return False
    try:
        return int(text, 0) == default
    except ValueError:
        return False


def point_problems(ns: argparse.Namespace) -> list[str]:
    """The point options the harness cannot express, each naming the option
    (empty: the point can run).  Checked by :func:`spec_from_args` before any
    work; the pipeline uses it to choose the points ONNX Runtime runs."""
    out = []
    if ns.precision != "fp32":
        out.append(
            f"--precision: {ns.precision!r} is not supported by the ONNX Runtime harness "
            "(fp32 only: the u8 x i8 -> i32 GEMM and the int16 activation have no matching "
            "ONNX graph with the runner's exact integer semantics)"
        )
    if ns.calibrate:
        out.append("--calibrate: calibration busy-waits exist only in hxrun; ONNX Runtime runs the real kernels")
    if ns.v_variant not in V_VARIANT_DEFAULTS:
        out.append(f"--v-variant: {ns.v_variant!r} is not one of {', '.join(V_VARIANT_DEFAULTS)}")
    for key, (default, opt, why) in NOT_EXPRESSIBLE.items():
        v = getattr(ns, key)
        if v is not None and not _same_value(v, default):
            out.append(
                f"{opt} {v}: cannot be expressed under ONNX Runtime ({why}); "
                f"only hxrun's default ({default if default is not None else 'unset'}) is accepted"
            )
    aff = ns.affinity
    if aff and aff not in ("spread", "none"):
        extra = [
            p.partition("=")[0]
            for p in aff.split(",")
            if p.partition("=")[0] not in ENGINE_OF.values()
            and p.partition("=")[0] != "host"
            and p.partition("=")[0].rstrip("0123456789") in ("vec", "bw")
        ]
        if extra:
            out.append(
                f"--affinity {aff}: {', '.join(extra)} cannot be pinned under ONNX Runtime (V's extra "
                "workers are its session's intra-op pool threads; there are no antagonists)"
            )
    return out


def args_problems(args: Sequence[str]) -> list[str]:
    """:func:`point_problems` of hxrun's options for a point (the list of
    ``hxfuse.config.runner_args``); an option the harness does not know at
    all is a problem too."""
    ns, unknown = parser().parse_known_args(["--out", "-", *map(str, args)])
    return ([f"{' '.join(unknown)}: not an option the ONNX Runtime harness knows"] if unknown else []) + point_problems(
        ns
    )


def spec_from_args(ns: argparse.Namespace) -> Spec:
    """Validate parsed options; every problem is an OrtHarnessError naming the option."""
    problems = point_problems(ns)
    if problems:
        raise OrtHarnessError("; ".join(problems))
    workloads = tuple(ns.workloads.split(","))
    bad = [w for w in workloads if w not in WORKLOAD_TASKS]
    if not workloads or bad or len(set(workloads)) != len(workloads):
        raise OrtHarnessError(f"--workloads: expected a comma list of distinct mv, md, mvd (got {ns.workloads!r})")
    m, n, k = _ints(ns.m_shape, 3, "--m-shape")
    rows, cols, passes = V_VARIANT_DEFAULTS[ns.v_variant]
    if ns.v_shape:
        rows, cols = _ints(ns.v_shape, 2, "--v-shape")
    if ns.v_passes:
        passes = _int(ns.v_passes, "--v-passes", 1)
    workers = _int(ns.v_workers, "--v-workers", 1)
    if workers > rows:
        raise OrtHarnessError(f"--v-workers: {workers} workers for {rows} rows")
    d_rows, d_row_bytes = _ints(ns.d_shape, 2, "--d-shape")
    stride = _int(ns.d_src_stride, "--d-src-stride", 1) if ns.d_src_stride else 2 * d_row_bytes
    if stride < d_row_bytes:
        raise OrtHarnessError(f"--d-src-stride: {stride} is smaller than the row bytes {d_row_bytes}")
    repeat = _int(ns.d_repeat, "--d-repeat", 1)
    if d_rows * stride * repeat > 8 << 30:
        raise OrtHarnessError("--d-repeat: the DDR source of D would exceed 8 GiB")
    affinity = None if ns.affinity == "none" else ns.affinity
    if affinity:
        engine_cores(affinity, workloads, os.cpu_count() or 1)  # validates
    for lab in ns.label:
        if "=" not in lab or lab.startswith("="):
            raise OrtHarnessError(f"--label: expected KEY=VALUE (got {lab!r})")
    ignored = {o: getattr(ns, o) for o in [*SCHEDULING_ONLY, *NOT_EXPRESSIBLE] if getattr(ns, o) is not None}
    return Spec(
        workloads,
        "fp32",
        m,
        n,
        k,
        ns.v_variant,
        rows,
        cols,
        passes,
        workers,
        d_rows,
        d_row_bytes,
        stride,
        repeat,
        _int(ns.warmup, "--warmup", 0),
        _int(ns.rounds, "--rounds", 1),
        _int(ns.seed, "--seed", 0),
        _int(ns.order_seed, "--order-seed", 0) if ns.order_seed is not None else None,
        affinity,
        ignored,
    )


def engine_cores(affinity: str | None, workloads: Sequence[str], cores: int) -> dict[str, int]:
    """Core of each engine thread (-1: floats), by hxrun's rule (kernels/hxrun/args.c):
    ``spread`` gives the engines of the tasks used one core each in the order mx,
    vec, dma, wrapping; pairs ``mx=0,vec=1`` pin the engines named."""
    out = {"host": -1, "mx": -1, "vec": -1, "dma": -1}
    if not affinity:
        return out
    if affinity == "spread":
        used = set().union(*(WORKLOAD_TASKS[w] for w in workloads))
        nxt = 0
        for t in TASKS:
            if t in used:
                out[ENGINE_OF[t]] = nxt % cores
                nxt += 1
        return out
    for pair in affinity.split(","):
        name, _, core = pair.partition("=")
        if name not in out or not core.strip().isdigit():
            raise OrtHarnessError(
                f"--affinity: expected 'spread' or engine=core pairs with engines host, vec, mx, dma (got {affinity!r})"
            )
        if int(core) >= cores:
            raise OrtHarnessError(
                f"--affinity: {name}={core}: core does not exist on this machine (online cores: 0..{cores - 1})"
            )
        out[name] = int(core)
    return out


# --------------------------------------------------------------------------
# inputs: hxrun's own generator, so both backends compute on the same data

_GOLDEN = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


def splitmix64(state: int, n: int) -> tuple[np.ndarray, int]:
    """n outputs of kernels/common/rng.h's splitmix64 from *state*, and the next state."""
    with np.errstate(over="ignore"):
        z = np.uint64(state) + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(_GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z, (state + n * _GOLDEN) & _MASK


def _uniform(r: np.ndarray, lo: float, hi: float) -> np.ndarray:
    # kernels/hxrun/tasks.c: lo + (hi - lo) * (float)((r >> 40) * 2^-24), in float
    x = ((r >> np.uint64(40)).astype(np.float64) * (1.0 / 16777216.0)).astype(np.float32)
    return np.float32(lo) + np.float32(hi - lo) * x


def _bytes(state: int, nbytes: int, chunk_words: int = 1 << 22) -> tuple[np.ndarray, int]:
    out = np.empty(((nbytes + 7) // 8) * 8, dtype=np.uint8)
    words = out.view(np.uint64)
    for i in range(0, len(words), chunk_words):
        w, state = splitmix64(state, min(chunk_words, len(words) - i))
        words[i : i + len(w)] = w
    return out[:nbytes], state


def runner_inputs(spec: Spec) -> dict[str, np.ndarray]:
    """Inputs exactly as hxrun generates them for the same seed (kernels/hxrun/tasks.c:
    M.A, M.B, then D's whole DDR source, then V.x).  fp32 only.

    ``D_src`` is the whole source, ``d_repeat * d_rows`` rows of ``d_src_stride`` bytes.
    """
    s = spec.seed & _MASK
    r, s = splitmix64(s, spec.m * spec.k)
    A = _uniform(r, -1.0, 1.0).reshape(spec.m, spec.k)
    r, s = splitmix64(s, spec.k * spec.n)
    B = _uniform(r, -1.0, 1.0).reshape(spec.k, spec.n)
    src, s = _bytes(s, spec.d_rows * spec.d_src_stride * spec.d_repeat)
    r, s = splitmix64(s, spec.v_rows * spec.v_cols)
    X = _uniform(r, -6.0, 6.0).reshape(spec.v_rows, spec.v_cols)
    return {"M_A": A, "M_B": B, "D_src": src.reshape(spec.d_repeat * spec.d_rows, spec.d_src_stride), "V_X": X}


# --------------------------------------------------------------------------
# graphs (onnx.helper; nothing downloaded).  Every node name starts with its
# task letter and "_" so that the profile of a graph holding several branches
# can be split by task.


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


# --------------------------------------------------------------------------
# sessions with pre-bound inputs and outputs

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


# --------------------------------------------------------------------------
# profile -> per-task intervals (pure)


def _node_name(event_name: str) -> str:
    return event_name[: -len("_kernel_time")] if event_name.endswith("_kernel_time") else event_name


def profile_runs(
    events: Sequence[Mapping[str, Any]],
    start_ns: int,
    epoch_ns: int = 0,
    task_of: Callable[[str], str | None] | None = None,
) -> list[dict[str, Any]]:
    """Per run of one session (in call order): its span and each task's interval.

    *events* is ONNX Runtime's profile (a list of Chrome trace events, ``ts``
    and ``dur`` in microseconds since the profiler's start ``start_ns``, which
    ``get_profiling_start_time_ns`` reports on the system clock).  Every
    ``model_run`` session event is one ``run()`` call, in order; each node's
    ``*_kernel_time`` event belongs to the run whose span contains it (nodes
    of a Loop body included).  A task's interval is its first node's start to
    its last node's end.  ``task_of`` maps a node name to its task (default:
    the name's first letter, since every node is named ``<task>_...``);
    nodes it maps to None are skipped.

    Returns dicts ``{"run", "begin", "end", "tasks": {task: {"begin", "end",
    "nodes", "tids"}}, "nodes": [{"name", "task", "begin", "end", "tid"}]}``
    with times in ns relative to ``epoch_ns``; ``nodes`` lists every node of
    a task in start order (``name`` without the ``_kernel_time`` suffix,
    ``tid`` the thread ORT ran it on).
    """
    task_of = task_of or (lambda name: name[0] if len(name) > 1 and name[1] == "_" and name[0] in TASKS else None)
    runs = sorted(
        (e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"), key=lambda e: e["ts"]
    )
    nodes = sorted(
        (e for e in events if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")),
        key=lambda e: e["ts"],
    )

    def ns(us: float) -> int:
        return int(start_ns + round(us * 1000) - epoch_ns)

    out: list[dict[str, Any]] = []
    j = 0
    for i, r in enumerate(runs):
        r0, r1 = r["ts"], r["ts"] + r["dur"]
        tasks: dict[str, dict[str, Any]] = {}
        node_list: list[dict[str, Any]] = []
        while j < len(nodes) and nodes[j]["ts"] < r0:
            j += 1  # nodes outside any run (none expected): skipped
        while j < len(nodes) and nodes[j]["ts"] <= r1:
            e = nodes[j]
            j += 1
            if e["ts"] + e["dur"] > r1:
                raise ValueError(f"profile: node {e['name']} at {e['ts']} us ends after its run ({r1} us)")
            name = _node_name(str(e["name"]))
            task = task_of(name)
            if task is None:
                continue
            node_list.append(
                {"name": name, "task": task, "begin": ns(e["ts"]), "end": ns(e["ts"] + e["dur"]), "tid": e.get("tid")}
            )
            t = tasks.setdefault(task, {"begin": e["ts"], "end": e["ts"] + e["dur"], "nodes": 0, "tids": []})
            t["begin"] = min(t["begin"], e["ts"])
            t["end"] = max(t["end"], e["ts"] + e["dur"])
            t["nodes"] += 1
            if e.get("tid") not in t["tids"]:
                t["tids"].append(e.get("tid"))
        for t in tasks.values():
            t["begin"], t["end"] = ns(t["begin"]), ns(t["end"])
        out.append({"run": i, "begin": ns(r0), "end": ns(r1), "tasks": tasks, "nodes": node_list})
    return out


def thread_lanes(
    runs_by_session: Mapping[str, Sequence[Mapping[str, Any]]], known: Mapping[Any, str]
) -> dict[Any, str]:
    """Lane name of every thread that ran a profiled node: the harness's own
    thread's name where ``known`` (OS thread id -> ``mx``, ``vec``, ``dma``,
    ``graph``) has it, else ``ort1``, ``ort2``, ... (ONNX Runtime's pool
    threads) in the order they first ran a node, sessions in the given order."""
    lanes: dict[Any, str] = {}
    k = 0
    for runs in runs_by_session.values():
        for r in runs:
            for n in sorted(r.get("nodes", ()), key=lambda n: n["begin"]):
                if n["tid"] in lanes:
                    continue
                if n["tid"] in known:
                    lanes[n["tid"]] = known[n["tid"]]
                else:
                    k += 1
                    lanes[n["tid"]] = f"ort{k}"
    return lanes


def task_nodes(run: Mapping[str, Any], task: str, lanes: Mapping[Any, str]) -> list[list]:
    """One task's profiled nodes in one run (an item of :func:`profile_runs`)
    as the raw file's ``tasks[].nodes``: ``[name, lane, begin, end]``, lane =
    the thread the node ran on (:func:`thread_lanes`), in start order."""
    return [[n["name"], lanes[n["tid"]], n["begin"], n["end"]] for n in run["nodes"] if n["task"] == task]


# --------------------------------------------------------------------------
# engine threads


def _sched_getcpu() -> Callable[[], int | None]:
    try:
        f = ctypes.CDLL(None, use_errno=True).sched_getcpu
        f.restype = ctypes.c_int
        return lambda: (lambda c: c if c >= 0 else None)(f())
    except (OSError, AttributeError):
        return lambda: None


_getcpu = _sched_getcpu()


class Engine:
    """A persistent thread that calls one session's run() when the host hands
    it a job (hxrun's engine threads, with ONNX Runtime doing the work)."""

    def __init__(self, name: str, core: int, completions: queue.SimpleQueue | None = None):
        self.name, self.core = name, core
        # Every engine posts its name here when a run ends, so the host sees
        # completions in the order they happen (hxrun's host observes each
        # task's completion event), not in the order it asks.
        self.completions = completions if completions is not None else queue.SimpleQueue()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._done = threading.Event()
        self.result: dict[str, Any] = {}
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name=f"hx-{name}", daemon=True)
        self._thread.start()
        # the OS thread id, which ONNX Runtime's profile records as each node's tid
        self.native_id = self._thread.native_id

    def _loop(self) -> None:
        if self.core >= 0 and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {self.core})  # 0: this thread
        while True:
            sess = self._jobs.get()
            if sess is None:
                return
            try:
                cpu0 = _getcpu()
                t_cpu = time.thread_time_ns()
                launch = time.time_ns()
                idx = sess.run()
                t_end = time.time_ns()
                cpu_ns = time.thread_time_ns() - t_cpu
                self.result = {
                    "run": idx,
                    "launch": launch,
                    "returned": t_end,
                    "cpu_ns": cpu_ns,
                    "cpu_begin": cpu0,
                    "cpu_end": _getcpu(),
                }
            except BaseException as exc:  # reported to the host, which stops the run
                self.error = exc
            self._done.set()
            self.completions.put(self.name)

    def submit(self, sess: BoundSession) -> None:
        self._done.clear()
        self._jobs.put(sess)

    def wait(self) -> dict[str, Any]:
        self._done.wait()
        if self.error is not None:
            raise RuntimeError(f"engine {self.name}: session run failed: {self.error}") from self.error
        return self.result

    def stop(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=30)


# --------------------------------------------------------------------------
# the harness


def _load_average() -> float:
    try:
        return float(os.getloadavg()[0])
    except (OSError, AttributeError):
        return -1.0


def _cpu_times() -> dict[str, tuple[int, int]] | None:
    try:
        out = {}
        with open("/proc/stat") as fh:
            for line in fh:
                f = line.split()
                if f and f[0].startswith("cpu") and f[0] != "cpu":
                    vals = list(map(int, f[1:]))
                    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
                    out[f[0]] = (sum(vals), idle)
        return out
    except OSError:
        return None


def other_busy_cores(sample_s: float = 0.2) -> float:
    """Cores kept busy by others over *sample_s* while the harness idles (as
    hxrun's ``other_busy_cores_*``): the summed busy fraction; -1 where unreadable."""
    a = _cpu_times()
    time.sleep(sample_s)
    b = _cpu_times()
    if not a or not b:
        return -1.0
    busy = 0.0
    for cpu, (tot, idle) in b.items():
        if cpu in a:
            dt, di = tot - a[cpu][0], idle - a[cpu][1]
            busy += (dt - di) / dt if dt > 0 else 0.0
    return round(busy, 3)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def round_order(seed: int, rnd: int, items: Sequence[Any]) -> list[Any]:
    """The round's shuffled order: seeded by (seed, round) only, so reruns repeat it."""
    rng = np.random.default_rng([seed & _MASK, rnd & _MASK, 0x0A7])
    return [items[i] for i in rng.permutation(len(items))]


def task_meta(spec: Spec) -> dict[str, Any]:
    """meta.tasks in the runner's shape (docs/runner.md)."""
    v_bytes = spec.v_rows * spec.v_cols * 4
    window = spec.d_rows * spec.d_row_bytes
    return {
        "M": {
            "precision": "fp32",
            "m": spec.m,
            "n": spec.n,
            "k": spec.k,
            "flops": 2 * spec.m * spec.n * spec.k,
            "bytes_in": 4 * (spec.m * spec.k + spec.k * spec.n),
            "bytes_out": 4 * spec.m * spec.n,
            "prep_ns": 0,
        },
        "V": {
            "precision": "fp32",
            "activation": v_activation(spec),
            "rows": spec.v_rows,
            "cols": spec.v_cols,
            "passes": spec.v_passes,
            "variant": spec.v_variant,
            "workers": spec.v_workers,
            "bytes_in": v_bytes,
            "bytes_out": v_bytes + 8 * spec.v_rows,
            "in_scratch": False,
        },
        "D": {
            "rows": spec.d_rows,
            "row_bytes": spec.d_row_bytes,
            "src_stride": spec.d_src_stride,
            "dst_stride": spec.d_row_bytes,
            "descriptors": None,
            "repeat": spec.d_repeat,
            "window_bytes": window,
            "bytes": window * spec.d_repeat,
        },
    }


GROUP_MAPPING = {
    "A_ort": "ONNX Runtime (CPU EP): one InferenceSession per task, each run() called by its own "
    "thread, the host waits for each before handing over the next (back to back)",
    "B_ort": "ONNX Runtime (CPU EP): the same three sessions' run() called from three threads at "
    "once; ONNX Runtime's own concurrency for independent models",
    "B_ort_graph": "ONNX Runtime (CPU EP): one graph with the independent branches, "
    "ExecutionMode.ORT_PARALLEL, inter_op_num_threads = branches; a negative control "
    "(an all-CPU graph executes as one stream)",
    "alone": "each task's session run alone by its thread",
}


class Harness:
    def __init__(self, spec: Spec, rtol: float = DEFAULT_F32_RTOL, atol: float = DEFAULT_F32_ATOL):
        import onnxruntime as ort

        self.spec, self.rtol, self.atol = spec, rtol, atol
        self.ort_version = ort.__version__
        self.cores = engine_cores(spec.affinity, spec.workloads, os.cpu_count() or 1)
        self.inputs = runner_inputs(spec)
        self._tmp = tempfile.TemporaryDirectory(prefix="hxort-")
        pref = lambda name: str(Path(self._tmp.name, name))  # noqa: E731
        self.sessions = {
            t: BoundSession(
                spec,
                [t],
                self.inputs,
                intra_threads=spec.v_workers if t == "V" else 1,
                parallel=False,
                profile_prefix=pref(t),
            )
            for t in spec.tasks
        }
        self.graphs = {
            w: BoundSession(
                spec, WORKLOAD_TASKS[w], self.inputs, intra_threads=1, parallel=True, profile_prefix=pref("graph_" + w)
            )
            for w in spec.workloads
        }
        self.completions: queue.SimpleQueue = queue.SimpleQueue()
        self.engines = {t: Engine(ENGINE_OF[t], self.cores[ENGINE_OF[t]], self.completions) for t in spec.tasks}
        self.graph_engine = Engine("graph", -1)
        if self.cores["host"] >= 0:
            os.sched_setaffinity(0, {self.cores["host"]})

    def close(self) -> None:
        for e in [*self.engines.values(), self.graph_engine]:
            e.stop()
        self._tmp.cleanup()

    def _await(self, task: str) -> dict[str, Any]:
        """Wait for the one task in flight (A_ort, alone, verification)."""
        name = self.completions.get()
        if name != ENGINE_OF[task]:
            raise RuntimeError(f"completion of engine {name} while waiting for {ENGINE_OF[task]}")
        return self.engines[task].wait()

    # one trial -----------------------------------------------------------
    def _trial(self, group: str, workload: str) -> dict[str, Any]:
        """Run one group; returns the trial record with run indices in place of intervals."""
        host: dict[str, Any] = {"submits": []}
        tasks = WORKLOAD_TASKS.get(workload, (workload,))
        rec: dict[str, Any] = {"group": group, "workload": workload, "tasks": []}
        if group == "B_ort_graph":
            return self._graph_trial(workload, tasks, rec, host)
        for t in tasks:
            self.sessions[t].poison()
        order = list(tasks)
        if group in ("A_ort", "alone"):
            results, seen = self._serial_trial(order, host)
        else:  # B_ort: hand every task over, then wait for all
            results, seen = self._handover_trial(order, host)
        rec["_runs"] = [(t, results[t]["run"]) for t in order]
        for t in order:
            r = results[t]
            rec["tasks"].append(
                {
                    "task": t,
                    "engine": ENGINE_OF[t],
                    "launch": r["launch"],
                    "host_seen": seen[t],
                    "checksum": self.sessions[t].checksum(t),
                    "cpu_ns": r["cpu_ns"],
                    "cpu_begin": r["cpu_begin"],
                    "cpu_end": r["cpu_end"],
                }
            )
        rec["_host"] = host
        return rec

    def _graph_trial(self, workload: str, tasks: Sequence[str], rec: dict[str, Any], host: dict[str, Any]) -> dict:
        """B_ort_graph: one session run of the whole graph, ONNX Runtime's own
        inter-op threads running its independent branches."""
        sess = self.graphs[workload]
        sess.poison()
        t0 = time.time_ns()
        self.graph_engine.submit(sess)
        t1 = time.time_ns()
        self.graph_engine.completions.get()
        r = self.graph_engine.wait()
        t2 = time.time_ns()
        host.update(submit_begin=t0, submit_end=t1, wait_begin=t1, wait_end=t2, requests=1)
        host["submits"].append(t1 - t0)
        rec["_runs"] = [("graph:" + workload, r["run"])]
        for t in tasks:
            # the calling thread's CPU time cannot be split between the
            # branches (nor does it include ORT's inter-op threads): null
            rec["tasks"].append(
                {
                    "task": t,
                    "engine": "graph",
                    "launch": r["launch"],
                    "host_seen": t2,
                    "checksum": sess.checksum(t),
                    "cpu_ns": None,
                    "cpu_begin": r["cpu_begin"],
                    "cpu_end": r["cpu_end"],
                }
            )
        rec["_host"] = host
        return rec

    def _serial_trial(self, order: list[str], host: dict[str, Any]) -> tuple[dict[str, dict], dict[str, int]]:
        """A_ort and alone: one task at a time, the host waiting for each."""
        results: dict[str, dict] = {}
        seen: dict[str, int] = {}
        sb = None
        wait_total = sub_total = 0
        for t in order:
            a = time.time_ns()
            sb = a if sb is None else sb
            self.engines[t].submit(self.sessions[t])
            b = time.time_ns()
            results[t] = self._await(t)
            c = time.time_ns()
            seen[t] = c
            # the host's wait for this task (as hxrun's host records it in A
            # and alone: on the task letter)
            host.setdefault("waits", []).append((t, b, c))
            host["submits"].append(b - a)
            sub_total += b - a
            wait_total += c - b
        host.update(
            submit_begin=sb,
            submit_end=b,
            wait_begin=b,
            wait_end=c,
            requests=len(order),
            submit_ns=sub_total,
            wait_ns=wait_total,
        )
        return results, seen

    def _handover_trial(self, order: list[str], host: dict[str, Any]) -> tuple[dict[str, dict], dict[str, int]]:
        """B_ort: every task handed to its own engine thread at once, then
        the host waits for all of them."""
        results: dict[str, dict] = {}
        seen: dict[str, int] = {}
        a = time.time_ns()
        for t in order:
            s0 = time.time_ns()
            self.engines[t].submit(self.sessions[t])
            host["submits"].append(time.time_ns() - s0)
        b = time.time_ns()
        task_of_engine = {ENGINE_OF[t]: t for t in order}
        for _ in order:
            t = task_of_engine[self.completions.get()]
            seen[t] = time.time_ns()
            results[t] = self.engines[t].wait()  # already done: returns at once
        c = time.time_ns()
        host.update(
            submit_begin=a,
            submit_end=b,
            wait_begin=b,
            wait_end=c,
            requests=len(order),
            submit_ns=b - a,
            wait_ns=c - b,
        )
        return results, seen

    # verification --------------------------------------------------------
    def verify(self, npy_dir: str | None) -> tuple[list[dict], dict[str, dict[str, str]], list[str]]:
        """One run of every session, outputs checked against numpy.  Returns the
        verify records, the verified checksums per session key, and problems."""
        problems: list[str] = []
        verified: dict[str, dict[str, str]] = {}
        for t, sess in self.sessions.items():
            sess.poison()
            self.engines[t].submit(sess)
            self._await(t)
            arrays = {k: v for k, v in self.inputs.items() if k.startswith(t + "_")} | dict(sess.outputs)
            problems += [f"{t} session: {p}" for p in check_arrays(self.spec, arrays, self.rtol, self.atol)]
            verified[t] = {t: sess.checksum(t)}
        records = []
        for w, sess in self.graphs.items():
            sess.poison()
            self.graph_engine.submit(sess)
            self.graph_engine.completions.get()
            self.graph_engine.wait()
            arrays = {k: v for k, v in self.inputs.items() if k[0] in WORKLOAD_TASKS[w]} | dict(sess.outputs)
            problems += [f"{w} graph: {p}" for p in check_arrays(self.spec, arrays, self.rtol, self.atol)]
            verified["graph:" + w] = {t: sess.checksum(t) for t in WORKLOAD_TASKS[w]}
            files = {}
            if npy_dir:
                d = Path(npy_dir, w)
                d.mkdir(parents=True, exist_ok=True)
                for t in WORKLOAD_TASKS[w]:
                    s = self.sessions[t]
                    save = {k: v for k, v in self.inputs.items() if k.startswith(t + "_")} | dict(s.outputs)
                    if "D_src" in save:  # the last window, as hxrun saves it
                        save["D_src"] = save["D_src"][(self.spec.d_repeat - 1) * self.spec.d_rows :]
                    for name, arr in save.items():
                        np.save(d / f"{name}.npy", arr)
                        files[name] = f"{w}/{name}.npy"
            records.append(
                {
                    "record": "verify",
                    "workload": w,
                    "group": "B_ort",
                    "checksums": {t: verified[t][t] for t in WORKLOAD_TASKS[w]},
                    "graph_checksums": verified["graph:" + w],
                    "files": files,
                }
            )
        return records, verified, problems

    # the whole run -------------------------------------------------------
    def run(self, out: str, npy_dir: str | None = None, labels: Mapping[str, str] | None = None) -> int:
        spec = self.spec
        load_before = _load_average()
        busy_before = other_busy_cores()
        epoch = time.time_ns()
        t_start = time.monotonic_ns()
        verify_records, verified, problems = self.verify(npy_dir)
        items = [(g, w) for w in spec.workloads for g in GROUPS] + [("alone", t) for t in spec.tasks]
        trials: list[dict[str, Any]] = []
        for rnd in range(-spec.warmup, spec.rounds):
            order_seed = spec.seed if spec.order_seed is None else spec.order_seed
            for seq, (g, w) in enumerate(round_order(order_seed, rnd, items)):
                rec = self._trial(g, w)
                rec.update(round=rnd, seq=seq, warmup=rnd < 0)
                trials.append(rec)
        # profiles -> intervals
        intervals: dict[str, list[dict]] = {}
        for key, sess in [*self.sessions.items(), *(("graph:" + w, s) for w, s in self.graphs.items())]:
            runs = profile_runs(sess.end_profiling(), sess.profile_start_ns, epoch)
            if len(runs) != sess.runs:
                raise RuntimeError(
                    f"session {key}: {sess.runs} run() calls but {len(runs)} model_run events in its profile"
                )
            intervals[key] = runs
        known = {e.native_id: e.name for e in [*self.engines.values(), self.graph_engine]}
        self._thread_lanes = thread_lanes(intervals, known)
        mismatches = 0
        lines = [json.dumps(self._meta(epoch, load_before, busy_before, problems, labels or {}))]
        for rec in trials:
            done = self._finish(rec, intervals, verified, epoch)
            mismatches += not done["checksums_ok"]
            lines.append(json.dumps(done))
        lines += [json.dumps(v) for v in verify_records]
        status = "check_failed" if problems else ("ok" if mismatches == 0 else "checksum_mismatch")
        # the runner's integrity fields (hxfuse.runner.integrity): the record count and
        # the FNV-1a 64 of every byte before the end record, newlines included
        from hxfuse.runner.integrity import fnv1a64

        head = ("\n".join(lines) + "\n").encode("utf-8")
        lines.append(
            json.dumps(
                {
                    "record": "end",
                    "records": len(lines),
                    "digest": f"fnv1a64:{fnv1a64(head):016x}",
                    "status": status,
                    "trials": len(trials),
                    "checksum_mismatches": mismatches,
                    "check_problems": problems,
                    "wall_ns": time.monotonic_ns() - t_start,
                    "load_average_after": _load_average(),
                    "other_busy_cores_after": other_busy_cores(),
                }
            )
        )
        tmp = out + ".tmp"
        with open(tmp, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        os.replace(tmp, out)
        for p in problems:
            print(f"hxfuse.external.ort: check failed: {p}", file=sys.stderr)
        return 4 if (problems or mismatches) else 0

    def _finish(
        self, rec: dict, intervals: Mapping[str, list[dict]], verified: Mapping[str, Mapping[str, str]], epoch: int
    ) -> dict[str, Any]:
        host = rec.pop("_host")
        runs = rec.pop("_runs")
        rel = lambda v: None if v is None else int(v - epoch)  # noqa: E731
        ok = True
        tasks_out = []
        for t in rec["tasks"]:
            key, idx = next((k, i) for k, i in runs if k == t["task"] or k.startswith("graph:"))
            iv = intervals[key][idx]["tasks"].get(t["task"])
            if iv is None:
                raise RuntimeError(f"session {key} run {idx}: no profiled node of task {t['task']}")
            ok &= t["checksum"] == verified[key][t["task"]]
            # engine: the thread that called run() (for B_ort_graph the graph
            # thread, whichever pool threads ran the nodes: tasks[].nodes says)
            nodes = task_nodes(intervals[key][idx], t["task"], self._thread_lanes)
            tasks_out.append(
                {
                    "task": t["task"],
                    "engine": t["engine"],
                    "launch": rel(t["launch"]),
                    "begin": iv["begin"],
                    "end": iv["end"],
                    "host_seen": rel(t["host_seen"]),
                    "checksum": t["checksum"],
                    "cpu_ns": t["cpu_ns"],
                    "cpu_begin": t["cpu_begin"],
                    "cpu_end": t["cpu_end"],
                    "profile_nodes": iv["nodes"],
                    "nodes": nodes,
                }
            )
        h = {k: rel(host[k]) for k in ("submit_begin", "submit_end", "wait_begin", "wait_end")}
        h.update(
            submit_ns=host.get("submit_ns", host["submit_end"] - host["submit_begin"]),
            wait_ns=host.get("wait_ns", host["wait_end"] - host["wait_begin"]),
            requests=host["requests"],
            submits=host["submits"],
        )
        return {
            "record": "trial",
            "round": rec["round"],
            "seq": rec["seq"],
            "warmup": rec["warmup"],
            "workload": rec["workload"],
            "group": rec["group"],
            "empty": False,
            "host": h,
            "device": None,
            "tasks": tasks_out,
            "scratch_peak_bytes": None,
            "waits": [{"who": "host", "on": t, "begin": rel(b), "end": rel(c)} for t, b, c in host.get("waits", ())],
            "makespan_ns": h["wait_end"] - h["submit_begin"],
            "checksums_ok": bool(ok),
        }

    def _meta(
        self, epoch: int, load_before: float, busy_before: float, problems: list[str], labels: Mapping[str, str]
    ) -> dict[str, Any]:
        spec = self.spec
        backend = f"onnxruntime {self.ort_version} CPUExecutionProvider"
        res = time.get_clock_info("time")
        warnings = [
            f"hxrun option {k.replace('_', '-')}={v} has no ONNX Runtime counterpart (recorded only)"
            for k, v in spec.ignored.items()
        ]
        if spec.v_workers > 1:
            warnings.append(
                f"V runs with intra_op_num_threads={spec.v_workers}: its cpu_ns counts only the "
                "calling thread, not ONNX Runtime's intra-op pool threads"
            )
        engines = [ENGINE_OF[t] for t in spec.tasks] + ["graph"]
        return {
            "record": "meta",
            "schema_version": SCHEMA_VERSION,
            "target": "host",
            "backend": backend,
            "kernels": backend,
            "harness": "hxfuse.external.ort",
            "onnxruntime": self.ort_version,
            "onnx_opset": OPSET,
            "compiler": None,
            "cflags": None,
            "cpu_model": _cpu_model(),
            "online_cores": os.cpu_count(),
            "cpu_governor": None,
            "load_average_before": load_before,
            "other_busy_cores_before": busy_before,
            "engines": ["host", *engines],
            "group_mapping": GROUP_MAPPING,
            "affinity": self.cores,
            "engines_exceed_cores": len(spec.tasks) > (os.cpu_count() or 1),
            "clock": {
                "source": "CLOCK_REALTIME (time.time_ns): the clock of ONNX Runtime's profiler",
                "resolution_ns": int(res.resolution * 1e9) or 1,
                "profile_resolution_ns": 1000,
            },
            "args": {k: v for k, v in asdict(spec).items() if k != "ignored"} | {"ignored": spec.ignored},
            "workloads": list(spec.workloads),
            "tasks": task_meta(spec),
            "sessions": {
                k: s.options for k, s in [*self.sessions.items(), *(("graph:" + w, g) for w, g in self.graphs.items())]
            },
            "scratch": None,
            "calibration": None,
            "wait": None,
            "spin_ns": None,
            "early_completion": None,
            "labels": dict(labels),
            "warnings": warnings,
            "emulated": False,
        }


# --------------------------------------------------------------------------
# QNN HTP emulation: a functional check, never a timing

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


def main(argv: Sequence[str] | None = None) -> int:
    ns = parser().parse_args(argv)
    try:
        spec = spec_from_args(ns)
        try:
            import onnx  # noqa: F401
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise OrtHarnessError(f"{exc.name} is not installed: pip install -e . (pyproject.toml pins it)") from None
    except OrtHarnessError as exc:
        print(f"hxfuse.external.ort: error: {exc}", file=sys.stderr)
        return 2
    labels = dict(lab.split("=", 1) for lab in ns.label)
    if ns.qnn_check:
        try:
            res = qnn_check(spec, ns.qnn_soc_model, ns.qnn_htp_arch)
        except OrtHarnessError as exc:
            print(f"hxfuse.external.ort: error: {exc}", file=sys.stderr)
            return 2
        res["labels"] = labels
        with open(ns.out + ".tmp", "w") as fh:
            json.dump(res, fh, indent=1)
        os.replace(ns.out + ".tmp", ns.out)
        for r in res["reasons"]:
            print(f"hxfuse.external.ort: QNN check failed: {r}", file=sys.stderr)
        return 0 if res["status"] == "ok" else 4
    h = Harness(spec)
    try:
        return h.run(ns.out, ns.npy_dir, labels)
    finally:
        h.close()


if __name__ == "__main__":
    sys.exit(main())
