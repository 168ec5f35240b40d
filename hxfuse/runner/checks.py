"""Correctness of one sweep point (the pipeline's ``check`` rule).

Inputs: the runner's JSON Lines (docs/runner.md) and the ``.npy`` files of its
verification round (``--npy-dir``).  A point passes when

1. the file is what the runner wrote (the ``end`` record's record count and
   digest match the bytes before it, hxfuse.runner.integrity), complete (``meta``
   first, ``end`` last), and the runner reported ``status: ok``; with the
   provenance sidecar given, the JSON Lines and every ``.npy`` file have the
   SHA-256 the run wrapper recorded (the workflow deletes the ``.npy`` files
   after this check, so this is the last time they can be compared);
2. every workload's ``verify`` record lists the ``.npy`` file of every input
   and output of its tasks (a missing one fails the point: the numeric check
   is never skipped; calibration runs have no outputs), and the outputs
   equal a numpy reference computed from the saved inputs:

   - **M**, u8 x i8 -> i32: exact (int64 matmul, no overflow for K < 65536).
   - **M**, fp32: ``|C - A@B| <= rtol * (|A| @ |B|) + atol * sqrt(K)``
     elementwise, with the reference in float64.  ``|A|@|B|`` is the scale of
     the standard fp32 dot-product error bound (K * eps * |A||B|); with the
     default rtol = 1e-4 (~840 float32 ulps) any summation order and FMA use
     passes while a wrong element, a stale tile or a missing k-block does not.
   - **V**, int16: exact: ``y = (x * clamp(x + 4096, 0, 8192)) >> 13``
     applied ``passes`` times (arithmetic shift), row sums in int32 with
     wrap-around, row maxima in int16.
   - **V**, fp32 SiLU ``x / (1 + exp(-x))`` applied ``passes`` times:
     ``|y - ref| <= rtol * |ref| + atol`` (float64 reference; expf differs
     from exp by a few ulps per pass); row sums within
     ``rtol * sum|ref| + atol * cols``; row maxima like y.
   - **D**: exact; the first ``row_bytes`` bytes of every destination row equal
     the source row.
3. the checksum of every task's output, recomputed here with numpy from the
   ``.npy`` bytes (:func:`hx_checksum`, the algorithm of
   kernels/common/checksum.c), equals the checksum the runner verified;
4. every trial (warm-up and measured, empty variants excluded) reported the
   verified checksum for every task, and ``checksums_ok``.

:func:`check_point` returns a JSON-serialisable dict with ``status``
(``ok``/``failed``), ``reasons``, ``exact`` (every output compared exactly, as
for u8i8 points and every Hexagon target) and ``emulated`` (the runner's meta);
a failed point never enters a speedup.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np

from hxfuse.runner import integrity
from hxfuse.runner.jsonl import IncompleteRunError, read_records

DEFAULT_F32_RTOL = 1e-4
DEFAULT_F32_ATOL = 1e-5

_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xBF58476D1CE4E5B9)


def hx_checksum(data: bytes | np.ndarray) -> int:
    """numpy port of kernels/common/checksum.c: over little-endian 64-bit words
    w_i (tail zero-padded), h = sum_i (w_i ^ K1) * ((i+1) * K2 | 1) mod 2^64."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data).tobytes()
    n = len(data)
    if n == 0:
        return 0
    pad = (-n) % 8
    words = np.frombuffer(data + b"\0" * pad, dtype="<u8")
    idx = np.arange(1, len(words) + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        weights = (idx * _K2) | np.uint64(1)
        terms = (words ^ _K1) * weights
        return int(terms.sum(dtype=np.uint64))


def checksum_hex(value: int) -> str:
    return f"{value & 0xFFFFFFFFFFFFFFFF:016x}"


# --------------------------------------------------------------------------
# references


def silu_passes_f32(x: np.ndarray, passes: int) -> np.ndarray:
    y = x.astype(np.float64)
    for _ in range(passes):
        y = y / (1.0 + np.exp(-y))
    return y


def hswish_passes_f32(x: np.ndarray, passes: int) -> np.ndarray:
    """The runner's stream variant (fp32): x * clip(x + 3, 0, 6) * float32(1/6), in float32."""
    y = x.astype(np.float32)
    sixth = np.float32(1.0) / np.float32(6.0)
    for _ in range(passes):
        y = (y * np.clip(y + np.float32(3), np.float32(0), np.float32(6))) * sixth
    return y.astype(np.float64)


def hswish_passes_i16(x: np.ndarray, passes: int) -> np.ndarray:
    y = x.astype(np.int32)
    for _ in range(passes):
        g = np.clip(y + 4096, 0, 8192)
        y = ((y * g) >> 13).astype(np.int16).astype(np.int32)
    return y.astype(np.int16)


def _cmp_exact(name: str, got: np.ndarray, ref: np.ndarray, out: dict) -> list[str]:
    if got.shape != ref.shape:
        return [f"{name}: shape {got.shape} != reference {ref.shape}"]
    bad = int(np.count_nonzero(got != ref))
    out[name] = {"mode": "exact", "mismatches": bad, "elements": int(ref.size)}
    if bad:
        i = np.unravel_index(int(np.flatnonzero(got != ref)[0]), ref.shape)
        return [
            f"{name}: {bad} of {ref.size} elements differ from the numpy reference "
            f"(first at {tuple(map(int, i))}: {got[i]} != {ref[i]})"
        ]
    return []


def _cmp_tol(name: str, got: np.ndarray, ref: np.ndarray, tol: np.ndarray, out: dict) -> list[str]:
    if got.shape != ref.shape:
        return [f"{name}: shape {got.shape} != reference {ref.shape}"]
    err = np.abs(got.astype(np.float64) - ref)
    bad_mask = ~(err <= tol)  # NaN counts as bad
    bad = int(np.count_nonzero(bad_mask))
    out[name] = {
        "mode": "tolerance",
        "mismatches": bad,
        "elements": int(ref.size),
        "max_abs_err": float(np.nanmax(err)) if err.size else 0.0,
        "max_err_over_tol": float(np.nanmax(err / np.maximum(tol, 1e-300))) if err.size else 0.0,
    }
    if bad:
        i = np.unravel_index(int(np.flatnonzero(bad_mask)[0]), ref.shape)
        return [
            f"{name}: {bad} of {ref.size} elements outside tolerance "
            f"(first at {tuple(map(int, i))}: {got[i]!r} vs reference {ref[i]!r}, tol {tol[i]:.3g})"
        ]
    return []


def check_outputs(
    meta: dict, arrays: dict[str, np.ndarray], rtol: float = DEFAULT_F32_RTOL, atol: float = DEFAULT_F32_ATOL
) -> tuple[list[str], dict]:
    """Compare the verification round's outputs with numpy references.

    *arrays* maps the verify record's file names (M_A, M_B, M_C, V_X, V_Y,
    V_rowsum, V_rowmax, D_src, D_dst) to loaded arrays; absent tasks are skipped.
    """
    reasons: list[str] = []
    detail: dict[str, Any] = {}
    tasks = meta.get("tasks", {})
    if "M_C" in arrays:
        A, B, C = arrays["M_A"], arrays["M_B"], arrays["M_C"]
        if np.issubdtype(C.dtype, np.integer):
            ref = (A.astype(np.int64) @ B.astype(np.int64)).astype(np.int32)
            reasons += _cmp_exact("M.C", C, ref, detail)
        else:
            A64, B64 = A.astype(np.float64), B.astype(np.float64)
            ref = A64 @ B64
            k = A.shape[1]
            tol = rtol * (np.abs(A64) @ np.abs(B64)) + atol * np.sqrt(k)
            reasons += _cmp_tol("M.C", C, ref, tol, detail)
    if "V_Y" in arrays:
        X, Y = arrays["V_X"], arrays["V_Y"]
        passes = int(tasks.get("V", {}).get("passes", 1))
        if np.issubdtype(Y.dtype, np.integer):
            ref = hswish_passes_i16(X, passes)
            reasons += _cmp_exact("V.y", Y, ref, detail)
            if "V_rowsum" in arrays:
                rs = ref.astype(np.int64).sum(axis=1)
                rs = ((rs + 2**31) % 2**32 - 2**31).astype(np.int32)
                reasons += _cmp_exact("V.rowsum", arrays["V_rowsum"].reshape(-1), rs, detail)
            if "V_rowmax" in arrays:
                reasons += _cmp_exact(
                    "V.rowmax", arrays["V_rowmax"].reshape(-1), ref.max(axis=1).astype(np.int16), detail
                )
        else:
            act = tasks.get("V", {}).get("activation", "silu")
            ref = hswish_passes_f32(X, passes) if act == "hardswish" else silu_passes_f32(X, passes)
            reasons += _cmp_tol("V.y", Y, ref, rtol * np.abs(ref) + atol, detail)
            if "V_rowsum" in arrays:
                rs = ref.sum(axis=1)
                tol = rtol * np.abs(ref).sum(axis=1) + atol * ref.shape[1]
                reasons += _cmp_tol("V.rowsum", arrays["V_rowsum"].reshape(-1), rs, tol, detail)
            if "V_rowmax" in arrays:
                rm = ref.max(axis=1)
                reasons += _cmp_tol("V.rowmax", arrays["V_rowmax"].reshape(-1), rm, rtol * np.abs(rm) + atol, detail)
    if "D_dst" in arrays:
        src, dst = arrays["D_src"], arrays["D_dst"]
        d = tasks.get("D", {})
        row_bytes = int(d.get("row_bytes", min(src.shape[-1], dst.shape[-1])))
        src2 = src.reshape(src.shape[0], -1).view(np.uint8)
        dst2 = dst.reshape(dst.shape[0], -1).view(np.uint8)
        reasons += _cmp_exact("D.dst", dst2[:, :row_bytes], src2[:, :row_bytes], detail)
    return reasons, detail


# Every .npy file of a task, inputs and outputs, as the verify record names
# them (kernels/hxrun/protocol.c: dump_npy); the check needs all of them.
TASK_FILES = {"M": ("M_A", "M_B", "M_C"), "V": ("V_X", "V_Y", "V_rowsum", "V_rowmax"), "D": ("D_src", "D_dst")}

# The .npy files that make up each task's outputs, in the runner's order
# (kernels/hxrun/tasks.c: M: C; V: y, rowsum, rowmax; D: the destination buffer).
CHECKSUM_FILES = {"M": ("M_C",), "V": ("V_Y", "V_rowsum", "V_rowmax"), "D": ("D_dst",)}


def task_checksum(outputs: list[np.ndarray]) -> int:
    """hx_task_checksum (kernels/hxrun/tasks.c): sum_j (2j + 1) * hx_checksum(out_j) mod 2^64."""
    h = 0
    for j, a in enumerate(outputs):
        h = (h + hx_checksum(a) * (2 * j + 1)) & 0xFFFFFFFFFFFFFFFF
    return h


def output_checksums(arrays: dict[str, np.ndarray], tasks: Iterable[str] | None = None) -> dict[str, str]:
    """Recompute each task's output checksum from the .npy arrays."""
    out = {}
    for task, names in CHECKSUM_FILES.items():
        if tasks is not None and task not in tasks:
            continue
        if all(n in arrays for n in names):
            out[task] = checksum_hex(task_checksum([arrays[n] for n in names]))
    return out


# --------------------------------------------------------------------------
# the whole point


def _load_verify_arrays(
    wl: str, v: dict, claimed: dict[str, str], npy_dir: Path, reasons: list[str]
) -> dict[str, np.ndarray]:
    """The .npy arrays of one verify record's tasks, complete tasks only.

    Every workload's verify record lists its own .npy files (the runner
    writes <npy-dir>/<workload>/ right after that workload's verification
    run).  Without them the numeric check cannot run, and a checksum the
    runner merely claims is no evidence: each missing file is a reason."""
    files = v.get("files") or {}
    if not files:
        reasons.append(
            f"{wl}: verify record lists no .npy files (the numeric check needs "
            "the verification round's inputs and outputs: run with --npy-dir)"
        )
    arrays = {}
    for task in claimed:
        missing = [n for n in TASK_FILES.get(task, ()) if n not in files]
        if files and missing:
            reasons.append(f"{wl}: verify record lists no {', '.join(missing)} for task {task}")
        for name in TASK_FILES.get(task, ()):
            if name not in files:
                continue
            try:
                arrays[name] = np.load(npy_dir / files[name], allow_pickle=False)
            except (OSError, ValueError) as exc:
                reasons.append(f"{wl}: cannot load {name} ({npy_dir / files[name]}): {exc}")
    # compare only tasks whose inputs and outputs are all there (a missing one
    # is already a reason above)
    return {n: a for n, a in arrays.items() if all(m in arrays for m in TASK_FILES[n[0]])}


def _check_verify(v: dict, meta: dict, npy_dir: Path, rtol: float, atol: float, result: dict) -> dict[str, str]:
    """Numeric check and checksum recomputation of one verify record; returns
    the checksums it verifies ({task: hex})."""
    reasons = result["reasons"]
    wl = v.get("workload")
    claimed = {t: str(h).lower() for t, h in (v.get("checksums") or {}).items() if h is not None}
    if result["calibrated"]:
        # busy-wait tasks have no outputs and no checksums (docs/runner.md)
        return claimed
    arrays = _load_verify_arrays(wl, v, claimed, npy_dir, reasons)
    r, detail = check_outputs(meta, arrays, rtol, atol)
    reasons += [f"{wl}: {m}" for m in r]
    result["outputs"][wl] = detail
    recomputed = output_checksums(arrays, claimed)
    result["checksums"][wl] = {"runner": claimed, "numpy": recomputed}
    for task, h in claimed.items():
        if task not in recomputed:
            reasons.append(f"{wl}: task {task} has no .npy output to recompute its checksum")
        elif recomputed[task] != h:
            reasons.append(
                f"{wl}: task {task} checksum {h} recorded by the runner != "
                f"{recomputed[task]} recomputed from the .npy output"
            )
    return claimed


def _check_trials(trials: list[dict], verified: dict[str, dict[str, str]], calibrated: bool, result: dict) -> None:
    """Every trial's checksums against the verified ones (empty variants and
    calibration runs have none)."""
    by_task: dict[str, set[str]] = {}
    for cs in verified.values():
        for t, h in cs.items():
            by_task.setdefault(t, set()).add(h)
    n_checked = n_bad = 0
    bad_examples: list[str] = []
    for t in trials:
        if t.get("empty"):
            continue
        wl = t.get("workload")
        ref = verified.get(wl)
        for task in [] if calibrated else t.get("tasks", []):
            name = task.get("task")
            got = str(task.get("checksum", "")).lower()
            want = {ref[name]} if ref and name in ref else by_task.get(name, set())
            n_checked += 1
            if got not in want:
                n_bad += 1
                if len(bad_examples) < 5:
                    bad_examples.append(
                        f"round {t.get('round')} group {t.get('group')} "
                        f"workload {wl} task {name}: {got} not in {sorted(want)}"
                    )
        if t.get("checksums_ok") is False:
            if len(bad_examples) < 5:
                bad_examples.append(
                    f"round {t.get('round')} group {t.get('group')} workload {wl}: runner flagged checksums_ok=false"
                )
            n_bad += 1
    result["trial_checksums"] = {"checked": n_checked, "mismatches": n_bad, "examples": bad_examples}
    if n_bad:
        result["reasons"].append(f"{n_bad} trial checksum mismatch(es), e.g. " + "; ".join(bad_examples))
    if n_checked == 0 and not calibrated:
        result["reasons"].append("no trial checksums to compare")


def _complete_records(jsonl: Path, result: dict) -> list[dict] | None:
    """The records of a file the runner wrote and finished, or None with the
    reason in *result*."""
    reasons = result["reasons"]
    # Integrity first: a file changed after the runner wrote it (one flipped
    # digit in a time) must not pass as a result (hxfuse.runner.integrity).
    try:
        integrity.verify_end_record(jsonl)
        result["integrity"] = "ok"
    except (OSError, integrity.IntegrityError) as exc:
        result["integrity"] = "failed"
        reasons.append(f"integrity: {exc}")
        return None
    # the one reader of runner output (hxfuse.runner.jsonl): a malformed line, a
    # first record that is not meta or no end record is named with its line
    try:
        return read_records(jsonl).records
    except OSError as exc:
        reasons.append(f"cannot read {jsonl}: {exc}")
    except IncompleteRunError as exc:
        reasons.append(str(exc))
    return None


def _preemption_reason(end: dict) -> str:
    """Why a run ended by a release request fails its point, in words."""
    p = end.get("preemption") or {}
    where = "the verification round" if p.get("trial") is None else f"trial {p.get('trial')} (marked preempted)"
    lat = p.get("release_latency_ns")
    released = f"released {lat / 1e3:.0f} us after the request" if isinstance(lat, (int, float)) else "released"
    bound = "" if p.get("within_bound", True) else f", later than the {p.get('release_bound_ns', 0) / 1e6:g} ms asked"
    return (
        f"runner preempted: another client of the NPU asked for its resources back during {where}; "
        f"{released}{bound} at the trial boundary and the run ended there (rerun the point when the NPU is free)"
    )


def check_point(
    jsonl: Path | str,
    npy_dir: Path | str,
    rtol: float = DEFAULT_F32_RTOL,
    atol: float = DEFAULT_F32_ATOL,
    provenance: Path | str | None = None,
) -> dict:
    """Check one raw result; see the module docstring.  Never raises on a bad
    result: problems become ``reasons`` and ``status: failed``.  With
    *provenance* (the run wrapper's sidecar) every raw file's SHA-256 is
    compared with the recorded one first."""
    jsonl, npy_dir = Path(jsonl), Path(npy_dir)
    result: dict[str, Any] = {
        "raw": str(jsonl),
        "status": "failed",
        "reasons": [],
        "tolerance": {"f32_rtol": rtol, "f32_atol": atol},
        "outputs": {},
        "checksums": {},
    }
    reasons = result["reasons"]
    if provenance is not None:
        changed = integrity.sidecar_problems(provenance, jsonl, npy_dir)
        result["sidecar_sha256"] = "failed" if changed else "ok"
        reasons += changed
    recs = _complete_records(jsonl, result)
    if recs is None:
        return result
    meta, end = recs[0], recs[-1]
    result["end_status"] = end.get("status")
    if end.get("status") == "preempted":
        reasons.append(_preemption_reason(end))
    elif end.get("status") != "ok":
        reasons.append(
            f"runner status {end.get('status')!r} with {end.get('checksum_mismatches')} checksum mismatch(es)"
        )
    verifies = [r for r in recs if r.get("record") == "verify"]
    trials = [r for r in recs if r.get("record") == "trial"]
    if not verifies:
        reasons.append("no 'verify' record")
    if not any(not t.get("warmup") and not t.get("empty") for t in trials):
        reasons.append("no measured trials")
    result["calibrated"] = calibrated = bool(meta.get("calibration"))
    verified = {v.get("workload"): _check_verify(v, meta, npy_dir, rtol, atol, result) for v in verifies}
    _check_trials(trials, verified, calibrated, result)
    # integer-only points (u8i8, every emulated/Hexagon point) are checked exactly
    modes = {d.get("mode") for wl in result["outputs"].values() for d in wl.values()}
    result["exact"] = bool(modes) and modes == {"exact"}
    result["emulated"] = bool(meta.get("emulated"))
    result["status"] = "ok" if not reasons else "failed"
    return result
