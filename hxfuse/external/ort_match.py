"""Duration matching: ONNX Runtime's task shapes chosen so each task alone takes the runner's time.

ONNX Runtime's kernels are not hxrun's: on the same shapes its GEMM and
activation run several times faster, so D against B_ort would mostly compare
kernels, and the sweep point's M : V (or M : D) ratio would not be the one
the runner measured.  Before its rounds the harness therefore rescales one
size of each task (:data:`SCALED`) until the task alone under ONNX Runtime
takes the runner's alone time for the point (from the point's own runner raw
file, :func:`runner_alone_ms`) within :data:`TOLERANCE`.  The work per
element stays the same kind, only its amount moves, so the ratio of the
point is kept on both backends.

:func:`match_size` is the rule, a pure function of a timing function (tested
with fake timings of known scaling); :func:`calibrate` applies it to a
point with a real timing function, and returns the matched point and one
record per task for the run's meta (``meta.matching``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Mapping

import numpy as np

from hxfuse.external.ort_point import OrtHarnessError, Spec
from hxfuse.model import MATCH_TOLERANCE

# matched when |ORT alone / runner alone - 1| <= TOLERANCE (one value with
# the comparison's, which must import none of the harness)
TOLERANCE = MATCH_TOLERANCE
# The size scaled per task (Spec field, its least value), each chosen to keep
# what the point's variant is about:
# M: its rows m: the packed weight B (k x n) and the GEMM depth stay, each row
#    of C costs the same;
# V: its passes: the array, and so the cache level it streams from (the
#    onchip / ddr variants are defined by that footprint), stays; scaling its
#    length would turn an onchip point into a DDR one;
# D: its rows per window: the window count and stride stay (hxrun's repeat
#    is often 1 or 2, too coarse a step to match within 10%).
SCALED = {"M": ("m", 1), "V": ("v_passes", 1), "D": ("d_rows", 1)}
# Where the target falls between two adjacent sizes of SCALED (V at a few
# passes: one pass more is 50% more time), this size fine-tunes from the
# closer one: V's length, so its footprint moves by less than one pass's worth.
FINE = {"V": ("v_cols", 1)}
# the largest size tried, as a multiple of the point's own: a kernel that
# would need more is reported as not matchable rather than grown without end
MAX_GROWTH = 64


@dataclass(frozen=True)
class Match:
    """One task's matching: the size found, its measured time, the target."""

    size: int
    measured_ms: float
    target_ms: float
    tries: int
    matched: bool
    reason: str  # "" when matched, otherwise why not
    coarse: bool = False  # not matched because the target lies between two adjacent sizes

    @property
    def error(self) -> float:
        """measured / target - 1 (the matching error)."""
        return self.measured_ms / self.target_ms - 1.0 if self.target_ms > 0 else math.nan


def match_size(
    measure: Callable[[int], float],
    target_ms: float,
    size0: int,
    lo: int = 1,
    hi: int | None = None,
    tol: float = TOLERANCE,
    max_tries: int = 8,
) -> Match:
    """The size whose measured time is within *tol* of *target_ms*.

    Starts at *size0* and moves by the measured ratio (the time of these
    kernels is close to linear in the scaled size; an offset or a cache step
    only costs another try), clamped to [lo, hi].  Not matched, with the
    reason, when a bound is reached without getting within *tol*, when the
    time does not move with the size, or after *max_tries* measurements."""
    if not (target_ms > 0 and math.isfinite(target_ms)):
        raise OrtHarnessError(f"duration matching: the runner's alone time {target_ms!r} ms is not a positive time")
    hi = hi if hi is not None else max(size0, 1) * MAX_GROWTH
    size, tried = min(max(size0, lo), hi), {}
    while len(tried) < max_tries:
        t = float(measure(size))
        tried[size] = t
        if abs(t / target_ms - 1.0) <= tol:
            return Match(size, t, target_ms, len(tried), True, "")
        nxt = min(max(int(round(size * target_ms / t)) if t > 0 else hi, lo), hi)
        if nxt == size:  # rounding kept the size: one step towards the target
            nxt = min(max(size + (1 if t < target_ms else -1), lo), hi)
        if nxt in tried:
            coarse = abs(nxt - size) == 1 and (tried[nxt] - target_ms) * (t - target_ms) < 0
            if nxt == size and size in (lo, hi):
                why = f"at the {'least' if size == lo else 'largest'} size {size} it takes {t:.3g} ms"
            elif coarse:
                a, b = sorted((size, nxt))
                why = f"the size's step is too coarse ({a} -> {tried[a]:.3g} ms, {b} -> {tried[b]:.3g} ms)"
            else:
                why = f"the time does not follow the size ({size} -> {t:.3g} ms)"
            m = _closest(tried, target_ms, f"cannot reach {target_ms:.3g} ms within {tol:.0%}: {why}")
            return replace(m, coarse=coarse)
        size = nxt
    return _closest(tried, target_ms, f"not within {tol:.0%} of {target_ms:.3g} ms after {max_tries} tries")


def _closest(tried: Mapping[int, float], target_ms: float, reason: str) -> Match:
    size = min(tried, key=lambda s: abs(tried[s] / target_ms - 1.0))
    return Match(size, tried[size], target_ms, len(tried), False, reason)


def runner_alone_ms(run, tasks) -> dict[str, float]:
    """The median alone time (ms) of each task in a runner raw file: its
    ``alone`` trials, or where the point ran none, its tasks' spans in group A
    (each task runs by itself there too).  Raises naming the file when a task
    has neither.  A task's span is its workers' first begin to last end, as
    the analysis reads it, computed here from the raw task rows so that this
    measurement rule imports no analysis code (editing the analysis must
    rerun no ONNX Runtime measurement)."""
    t = run.tasks
    t = t[~t["warmup"].astype(bool) & ~t["empty"].astype(bool)]
    span = t.groupby(["trial_id", "group", "workload", "task"], sort=False).agg(
        begin=("begin", "min"), end=("end", "max")
    )
    span = (span["end"] - span["begin"]).rename("duration_ns").reset_index()
    out = {}
    for task in tasks:
        s = span[(span["task"] == task) & (span["group"] == "alone") & (span["workload"] == task)]
        if not len(s):
            s = span[(span["task"] == task) & (span["group"] == "A")]
        vals = s["duration_ns"].dropna()
        if not len(vals):
            raise OrtHarnessError(
                f"--match-runner {run.source}: no alone or group A trial of task {task} to match its duration to"
            )
        out[task] = float(np.median(vals)) / 1e6
    return out


def check_same_point(run, spec: Spec) -> None:
    """The runner file must be the point the harness was given (before any work)."""
    want = {
        "M": {"m": spec.m, "n": spec.n, "k": spec.k},
        "V": {"rows": spec.v_rows, "cols": spec.v_cols, "passes": spec.v_passes},
        "D": {"rows": spec.d_rows, "row_bytes": spec.d_row_bytes, "repeat": spec.d_repeat},
    }
    tasks = run.meta.get("tasks") or {}
    for t in spec.tasks:
        got = tasks.get(t) or {}
        diff = [f"{k} {got.get(k)} vs {v}" for k, v in want[t].items() if got.get(k) != v]
        if diff:
            raise OrtHarnessError(
                f"--match-runner {run.source}: not this point's runner file (task {t}: {', '.join(diff)})"
            )


def calibrate(
    spec: Spec,
    targets: Mapping[str, float],
    measure: Callable[[Spec, str], float],
    tol: float = TOLERANCE,
) -> tuple[Spec, dict[str, dict]]:
    """The point with each task's scaled size matched to *targets* (ms), and
    the ``meta.matching`` record of each task.  *measure(spec, task)* is the
    task's alone time in ms under ONNX Runtime at that point."""
    matched, records = spec, {}
    for t in spec.tasks:
        matched, records[t] = _match_task(matched, t, targets[t], measure, tol)
    return matched, records


def _match_task(
    spec: Spec, t: str, target: float, measure: Callable[[Spec, str], float], tol: float
) -> tuple[Spec, dict]:
    """One task matched on its :data:`SCALED` size, then, where that size's
    step was too coarse, on its :data:`FINE` one from there."""

    def on(base: Spec, field: str, least: int) -> Match:
        return match_size(
            lambda s: measure(replace(base, **{field: s}), t), target, getattr(base, field), least, tol=tol
        )

    field, least = SCALED[t]
    m = on(spec, field, least)
    out = replace(spec, **{field: m.size})
    rec = {"scaled": field, "runner_size": getattr(spec, field), "ort_size": m.size}
    if m.coarse and t in FINE:
        f2, least2 = FINE[t]
        m2 = on(out, f2, least2)
        if abs(m2.error) < abs(m.error):
            rec["fine"] = {"scaled": f2, "runner_size": getattr(out, f2), "ort_size": m2.size}
            out, m = replace(out, **{f2: m2.size}), replace(m2, tries=m.tries + m2.tries)
    rec |= {
        "runner_alone_ms": target,
        "ort_calibrated_ms": m.measured_ms,
        "error": m.error,
        "matched": m.matched,
        "tries": m.tries,
        "reason": m.reason,
        "tolerance": tol,
    }
    return out, rec


def timing_inputs(spec: Spec, task: str) -> dict[str, np.ndarray]:
    """Inputs of *task* alone, in hxrun's value ranges, for timing only: the
    other tasks' arrays (D's source can be hundreds of MiB) are not made, and
    nothing of the timing runs' outputs is verified here (the harness checks the
    matched point's real run)."""
    rng = np.random.default_rng(0)
    if task == "M":
        return {
            "M_A": rng.uniform(-1, 1, (spec.m, spec.k)).astype(np.float32),
            "M_B": rng.uniform(-1, 1, (spec.k, spec.n)).astype(np.float32),
        }
    if task == "V":
        return {"V_X": rng.uniform(-6, 6, (spec.v_rows, spec.v_cols)).astype(np.float32)}
    rows = spec.d_repeat * spec.d_rows
    return {"D_src": rng.integers(0, 256, (rows, spec.d_src_stride), dtype=np.uint8)}


def measure_alone(spec: Spec, task: str, runs: int = 9, warmup: int = 2) -> float:
    """Median alone time (ms) of *task* under ONNX Runtime at this size,
    measured as the rounds measure it: its session (one intra-op thread, V
    its worker quota) run by the task's engine thread on the engine's core,
    profiling on, the time from the task's first node's start to its last
    node's end in the profile (the rounds' ``alone`` duration), over *runs*
    runs after *warmup*.  Timed with ``run()``'s wall time instead, a small
    task would be matched with ONNX Runtime's per-run overhead counted and
    the profiler's per-node cost not."""
    import os
    import tempfile

    from hxfuse.external.ort_engines import Engine
    from hxfuse.external.ort_point import engine_cores
    from hxfuse.external.ort_profile import profile_runs
    from hxfuse.external.ort_sessions import BoundSession
    from hxfuse.model import ENGINE_OF

    core = engine_cores(spec.affinity, spec.workloads, os.cpu_count() or 1)[ENGINE_OF[task]]
    with tempfile.TemporaryDirectory(prefix="hxort-match-") as tmp:
        sess = BoundSession(
            spec,
            [task],
            timing_inputs(spec, task),
            intra_threads=spec.v_workers if task == "V" else 1,
            parallel=False,
            profile_prefix=os.path.join(tmp, task),
        )
        engine = Engine(ENGINE_OF[task], core)
        try:
            for _ in range(warmup + runs):
                engine.submit(sess)
                engine.completions.get()
                engine.wait()
        finally:
            engine.stop()
        spans = [r["tasks"][task]["end"] - r["tasks"][task]["begin"] for r in profile_runs(sess.end_profiling(), 0)]
    return float(np.median(spans[warmup:])) / 1e6
