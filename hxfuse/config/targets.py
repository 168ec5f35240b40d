"""The targets and what they mean: the one place that knows them.

A *target* is where the runner is built and run (README, "Targets";
kernels/hexagon/README.md).  :data:`TARGETS` says, per target,

- ``emulated``: its timings come from an emulator (QEMU, a functional model)
  and are never presented as performance: no speedup, efficiency, verdict,
  macro or speedup/slowdown figure is drawn from them;
- ``simulated``: a cycle model (the Hexagon SDK simulator), not a phone;
- ``native``: it runs on this machine's own cores (the config checks a
  placement's core ids against them);
- ``needs_sdk``: it builds only with the Qualcomm Hexagon SDK;
- ``hexagon``: it runs the Hexagon kernels (integer kernels only, a GEMM with
  a fixed blocking), and ``integer_only`` says why fp32 is refused there;
- ``toolchain``: what compiles its runner (``cc``, ``zig``,
  ``hexagon-clang`` or ``nvcc``); ``make_target``: the ``TARGET=`` of kernels/Makefile
  (kernels/targets/<make_target>.mk, which also gives the run prefix);
- ``defaults``: per-target defaults of ``target_settings.<target>`` keys;
- ``status`` and ``group_b``: what the target is, and what group B (existing
  best concurrency) maps to on its backend, recorded with its results;
- ``gpu``: it runs hxrun-cuda on an NVIDIA GPU (docs/gpu.md), and
  ``point_limits`` the point parameters its runner takes one value of
  ({key: (the value, why)}), refused before any job otherwise.

Whether results are emulated is decided here and only here:
:func:`is_emulated` by the target's name, :func:`emulated_results` for what a
target produced (its name, ``summary.json``'s ``emulated``, or a table's
``emulated`` or ``target`` column).  Other modules ask these functions.

Standard library only, and no other hxfuse import: the analysis, the figure
and table code and the Snakefile all import this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class Target:
    name: str
    emulated: bool
    status: str
    group_b: str
    simulated: bool = False
    native: bool = False
    needs_sdk: bool = False
    hexagon: bool = False
    integer_only: str | None = None
    toolchain: str = "cc"
    defaults: Mapping[str, Any] = field(default_factory=dict)
    gpu: bool = False
    point_limits: Mapping[str, tuple[Any, str]] = field(default_factory=dict)

    @property
    def make_target(self) -> str:
        """``make -C kernels TARGET=<this>`` (kernels/targets/<this>.mk)."""
        return self.name


# What group B (existing best concurrency) maps to on a Hexagon backend, or
# its limitation, as the plan requires it be recorded with B's results (the
# runner's own meta.group_mapping says what B is in the runner on that
# target).
_B_HEXAGON = (
    "separate requests on independent queues (one dspqueue / FastRPC session per task kind, "
    "each served by its own DSP thread). Limitations: each task pays its own message and "
    "completion signal and the host waits on each; VTCM and the HMX lock are acquired per "
    "request (HAP_compute_res), so requests needing them serialise unless given disjoint "
    "pre-reserved shares; FastRPC calls on one handle serialise; QNN/HTP graphs run one after "
    "another. In the runner (run_main_on_hexagon, one process) B is the executor's request-queue "
    "path with one queue per engine thread; the FastRPC transport cost is not included."
)
_SDK_DEFAULTS = {"arch": "v73"}

# The GPU runner (kernels/cuda/hxrun_cuda.cu) takes one value of these; the
# reasons are its own error messages' (docs/gpu.md, "Options").
_GPU_LIMITS = {
    "precision": ("fp32", "M runs fp16/bf16 operands with fp32 accumulation on the tensor cores"),
    "m_tile": (None, "the tensor-core GEMM's k-step is fixed at 16 (wmma m16n16k16)"),
    "window": ("all", "the fused kernel launches every role at once"),
    "d_buffers": (1, "D's destination is one buffer in device memory"),
    "antagonist": (0, "no bandwidth antagonist threads: the memory is the GPU's"),
}
_GPU_STATUS = "NVIDIA GPU (CUDA): real engines (tensor cores, SMs, TMA / copy engine); untested on a GPU"

TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            "host",
            emulated=False,
            native=True,
            status="native: real timings",
            group_b="one request per task, pushed at once to each task's own engine queue "
            "(threads mx, vec, dma); the host waits for all",
        ),
        Target(
            "hexagon-qemu",
            emulated=True,
            status="EMULATED under qemu-hexagon: correctness only, timings are not performance",
            group_b="the runner's request-queue path (one queue per engine thread) under emulation: "
            "correctness only. On the device: " + _B_HEXAGON,
            hexagon=True,
            integer_only="QEMU has no HVX floating point",
            toolchain="zig",
            defaults={"qemu": "qemu-hexagon"},
        ),
        Target(
            "hexagon",
            emulated=False,
            status="Hexagon cDSP over adb (Hexagon SDK): written against the documented API, not yet run on hardware",
            group_b=_B_HEXAGON,
            needs_sdk=True,
            hexagon=True,
            integer_only="its fp32 path is scalar reference code, not HVX/HMX",
            toolchain="hexagon-clang",
            defaults={**_SDK_DEFAULTS, "device_dir": "/data/local/tmp/hxfuse"},
        ),
        # Its runner is built with HX_EMULATED=1 (kernels/targets/hexagon-sim.mk),
        # so its records say emulated and emulated_results() treats what it
        # produced as emulated; by name it is not (the paper lists it, not run,
        # as an untested device path).
        Target(
            "hexagon-sim",
            emulated=False,
            simulated=True,
            status="Hexagon SDK simulator: written against the documented API, not yet run; "
            "timings are a cycle model, not a phone",
            group_b=_B_HEXAGON,
            needs_sdk=True,
            hexagon=True,
            integer_only="its fp32 path is scalar reference code, not HVX/HMX",
            toolchain="hexagon-clang",
            defaults=dict(_SDK_DEFAULTS),
        ),
        Target(
            "gpu",
            emulated=False,
            native=True,
            status=_GPU_STATUS,
            group_b="one CUDA stream per task, the three launches issued together (M, D, V; D on the copy "
            "engine by cudaMemcpy2DAsync); the host polls each stream's event",
            toolchain="nvcc",
            gpu=True,
            point_limits=_GPU_LIMITS,
        ),
        Target(
            "gpu-graph",
            emulated=False,
            native=True,
            status=_GPU_STATUS,
            group_b="one CUDA graph with a parallel branch per task (fork-join, captured once), one "
            "cudaGraphLaunch; the host polls each branch's event record node",
            toolchain="nvcc",
            gpu=True,
            point_limits=_GPU_LIMITS,
        ),
    )
}
NAMES = tuple(TARGETS)
EMULATED_TARGETS = frozenset(t for t, info in TARGETS.items() if info.emulated)
SDK_TARGETS = tuple(t for t, info in TARGETS.items() if info.needs_sdk)
HEXAGON_TARGETS = tuple(t for t, info in TARGETS.items() if info.hexagon)
GPU_TARGETS = tuple(t for t, info in TARGETS.items() if info.gpu)
# the zig of the hexagon-qemu toolchain (pip install ziglang==ZIG_PIN)
ZIG_PIN = "0.17.1"


def get(name: str) -> Target:
    """The target called *name* (KeyError naming the known ones otherwise)."""
    try:
        return TARGETS[name]
    except KeyError:
        raise KeyError(f"unknown target {name!r} (targets: {', '.join(NAMES)})") from None


def is_emulated(name: str | None) -> bool:
    """Whether *name* is an emulated target: its timings are not performance.
    False for a name that is no target (e.g. ``external``)."""
    info = TARGETS.get(name) if isinstance(name, str) else None
    return bool(info and info.emulated)


def emulated_flag(value: Any) -> bool:
    """A recorded ``emulated`` value as a bool: True, 1, "true" or "1" (any
    case, as a CSV column or a JSON field may hold it) are true; False, 0,
    None, NaN, "" and anything else are not."""
    if isinstance(value, float):
        if math.isnan(value):
            return False
        if value.is_integer():
            value = int(value)
    return str(value).strip().lower() in ("true", "1")


def emulated_results(target: str | None = None, table: Any = None, doc: Mapping[str, Any] | None = None) -> bool:
    """Whether results are emulated (their timings are not performance): the
    target *target* is, or *doc* (a ``summary.json``) says ``emulated``, or
    any row of *table* (a pandas DataFrame: a summary or trial table) has a
    true ``emulated`` (the runner's meta.emulated as aggregated) or names an
    emulated target in its ``target`` column."""
    if is_emulated(target) or (doc is not None and emulated_flag(doc.get("emulated"))):
        return True
    if table is None or not len(table):
        return False
    if "emulated" in table and any(emulated_flag(v) for v in table["emulated"]):
        return True
    return "target" in table and any(is_emulated(t) for t in table["target"])


def info(name: str) -> dict:
    """What a target is (emulated, status, group B), as a job parameter."""
    t = get(name)
    return {"emulated": bool(t.emulated), "status": t.status, "group_b": t.group_b, "hexagon": bool(t.hexagon)}


def point_limit_problems(target: str, params: Mapping[str, Any], pkey: str) -> list[str]:
    """Where a point's parameters ask target *target* for a value its runner
    does not take (``point_limits``), one line each naming the key."""
    out = []
    for key, (value, why) in get(target).point_limits.items():
        got = params.get(key, value)
        if got != value:
            shown = "null" if value is None else value
            out.append(
                f"{pkey}.{key}: target {target} takes only {key}: {shown} ({why}); "
                f"e.g. target_settings.{target}.params.{key}: {shown}"
            )
    return out
