"""The experiment model's vocabulary, stated once: the tasks, the workloads
that combine them, the engine each task runs on, the groups, the speedup
pairs every table reports, and the runner's per-variant defaults for V.

Standard library only and free of behaviour, so any module (the run wrapper,
the ONNX Runtime harness, the analysis) can import it without pulling in
pandas or the configuration code.  The C runner states the same facts in
kernels/hxrun (args.c, config.h); tests/analysis/test_model.py runs it and
fails when the two disagree.
"""

from __future__ import annotations

TASKS: tuple[str, ...] = ("M", "V", "D")
# workload name -> its tasks, in the runner's fixed launch order
WORKLOAD_TASKS: dict[str, tuple[str, ...]] = {"mv": ("M", "V"), "md": ("M", "D"), "mvd": ("M", "V", "D")}
# the engine (a thread on the host, a hardware unit on the device) of each task
ENGINE_OF: dict[str, str] = {"M": "mx", "V": "vec", "D": "dma"}
GROUPS: tuple[str, ...] = ("A", "B", "C", "D")
ALONE = "alone"
# The external comparison's duration matching: a task of ONNX Runtime and
# the runner's match when |ORT alone / runner alone - 1| <= this (the
# harness aims at it; the comparison withholds its verdict beyond it).
MATCH_TOLERANCE = 0.10
# Speedup pairs reported everywhere, as (faster-candidate X, baseline Y):
# speedup of X over Y = T_Y / T_X.
SPEEDUP_PAIRS: tuple[tuple[str, str], ...] = (("D", "A"), ("D", "B"), ("D", "C"), ("C", "A"), ("B", "A"))
# The runner's defaults per V variant when no --v-shape/--v-passes is given:
# (rows, cols, passes).  compute is cache-resident with many passes, onchip
# fits the scratch arena, ddr and stream stream an array far larger than any
# cache.
V_VARIANT_DEFAULTS: dict[str, tuple[int, int, int]] = {
    "compute": (64, 256, 32),
    "onchip": (512, 1024, 1),
    "ddr": (4096, 4096, 1),
    "stream": (4096, 4096, 1),
}
# The external group B's measurement (ONNX Runtime on the host, hxfuse.external.ort):
# A_ort one session run per task in order, B_ort each task to its own engine
# thread at once, B_ort_graph one graph whose independent nodes ONNX Runtime
# schedules itself.
ORT_GROUPS: tuple[str, ...] = ("A_ort", "B_ort", "B_ort_graph")
