"""Correctness of one hxserve run (rule serve_check), against numpy.

1. Integrity: the end record's record count and digest; the trace the runner
   read is the trace file (FNV-1a 64 of its bytes); every replay has every
   request of the trace, with the trace's arrival, kind, size and deadline.
2. Outputs: every dumped input set (``verify`` records) is recomputed with
   numpy: GEMM and GEMV within ``rtol * (|A| @ |B|) + atol * sqrt(K)`` (as
   hxfuse.runner.checks does for M), the copy exactly; the checksum recomputed from
   the dumped outputs equals the one the runner claimed.  Then every request
   of every replay must carry the verified checksum of its input set: a
   request whose work was skipped, torn or wrong fails.
3. Times and pairing: arrival <= admit <= launch <= start <= end; pairs only
   under D, symmetric, between a compute and a bandwidth request (so from
   different requests), launched together.

Any failure fails the point loudly (the rule exits non-zero): no statistic is
ever computed from a run with a failed request.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hxfuse.runner.checks import checksum_hex, task_checksum
from hxfuse.runner.integrity import IntegrityError, fnv1a64, sidecar_problems
from hxfuse.runner.jsonl import IncompleteRunError
from hxfuse.serve.stats import read_records
from hxfuse.serve.trace import ServeError, read_trace


def _gemm_tol(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    return rtol * (np.abs(a) @ np.abs(b)) + atol * np.sqrt(a.shape[-1])


def check_outputs(kind: str, arrays: dict[str, np.ndarray], rtol: float, atol: float) -> list[str]:
    """Reasons the dumped outputs of one input set are wrong (empty: correct)."""
    bad = []
    if kind == "compute":
        A, B, C = (arrays[k].astype(np.float64) for k in ("A", "B", "C"))
        ref = A @ B
        err = np.abs(C - ref)
        n = int((~(err <= _gemm_tol(A, B, rtol, atol))).sum())
        if n:
            bad.append(f"GEMM: {n} of {ref.size} elements outside tolerance (max error {err.max():.3g})")
    else:
        W, x, y = (arrays[k].astype(np.float64) for k in ("W", "x", "y"))
        ref = W @ x
        err = np.abs(y - ref)
        n = int((~(err <= _gemm_tol(W, x, rtol, atol))).sum())
        if n:
            bad.append(f"GEMV: {n} of {ref.size} elements outside tolerance (max error {err.max():.3g})")
        src, dst = arrays["src"], arrays["dst"]
        want = src[:, : dst.shape[1]]
        if want.shape != dst.shape or not np.array_equal(want, dst):
            diff = int((want != dst).sum()) if want.shape == dst.shape else -1
            bad.append(f"copy: the scratch window differs from the source rows ({diff} bytes)")
    return bad


def _outputs(kind: str, arrays: dict[str, np.ndarray]) -> list[np.ndarray]:
    # the runner's checksum order (kernels/hxserve/serve_work.c sv_req_checksum)
    return [arrays["C"]] if kind == "compute" else [arrays["y"], arrays["dst"]]


def _check_verified(
    recs: list[dict], npy_dir: str | Path, rtol: float, atol: float, reasons: list[str]
) -> dict[tuple, str]:
    """Recompute every dumped input set; returns (kind, size, input) -> verified checksum."""
    verified: dict[tuple, str] = {}
    for v in (r for r in recs if r.get("record") == "verify"):
        parts = ("A", "B", "C") if v["kind"] == "compute" else ("W", "x", "y", "src", "dst")
        try:
            arrays = {p: np.load(Path(npy_dir) / f"{v['name']}_{p}.npy") for p in parts}
        except OSError as exc:
            reasons.append(f"{v['name']}: cannot read its .npy files: {exc}")
            continue
        bad = check_outputs(v["kind"], arrays, rtol, atol)
        reasons += [f"{v['name']} (request {v['request']}, policy {v['policy']}): {b}" for b in bad]
        ck = checksum_hex(task_checksum(_outputs(v["kind"], arrays)))
        if ck != v["checksum"]:
            reasons.append(f"{v['name']}: checksum of the dumped outputs {ck} != the runner's {v['checksum']}")
        verified[(v["kind"], v["size"], v["input"])] = ck
    if not verified:
        reasons.append("no verify records: run hxserve with --npy-dir")
    return verified


def _request_problems(r: dict, trace_row: tuple, verified: dict[tuple, str]) -> list[str]:
    why = []
    if (r["arrival_ns"], r["kind"], r["size"], r["deadline_ns"]) != trace_row:
        why.append("differs from the trace")
    want = verified.get((r["kind"], r["size"], r["input"]))
    if want is None:
        why.append(f"its input set {r['kind']}/{r['size']}/{r['input']} was not verified")
    elif r["checksum"] != want:
        why.append(f"checksum {r['checksum']} != verified {want}")
    if not (r["arrival_ns"] <= r["admit_ns"] <= r["launch_ns"] <= r["start_ns"] <= r["end_ns"]):
        why.append("times out of order (arrival <= admit <= launch <= start <= end)")
    for t in r["tasks"]:
        if not (r["launch_ns"] <= t["push_ns"] <= t["begin_ns"] <= t["end_ns"]):
            why.append(f"task on {t['engine']}: times out of order")
    return why


def _pair_problems(key: tuple, reqs: dict[int, dict]) -> list[str]:
    bad = []
    for i, r in reqs.items():
        j = r["paired_with"]
        if j is None:
            continue
        p = reqs.get(j)
        if key[1] != "D":
            bad.append(f"replay {key}: request {i} paired under policy {key[1]} (only D pairs)")
        elif p is None or p["paired_with"] != i or p["kind"] == r["kind"] or j == i:
            bad.append(
                f"replay {key}: request {i} paired with {j}: not a compute/bandwidth pair "
                "of two requests that name each other"
            )
        elif min(p["launch_ns"], r["launch_ns"]) < max(p["admit_ns"], r["admit_ns"]):
            bad.append(f"replay {key}: pair {i}/{j} launched before both were admitted")
    return bad


def check_run(
    jsonl: str | Path,
    npy_dir: str | Path,
    trace: str | Path,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    provenance: str | Path | None = None,
) -> dict:
    """The check result: ``ok``, ``reasons`` (empty when ok) and counts.  With
    *provenance* (the run wrapper's sidecar) the raw files' SHA-256 are
    compared first: the workflow deletes the .npy files after this check."""
    reasons: list[str] = []
    res = {"jsonl": str(jsonl), "trace": str(trace), "ok": False, "reasons": reasons}
    if provenance is not None:
        reasons += sidecar_problems(provenance, jsonl, npy_dir)
    try:
        recs = read_records(jsonl)
        tr = read_trace(trace)
    except (IntegrityError, IncompleteRunError, ServeError, OSError) as exc:
        reasons.append(str(exc))
        return res
    meta = recs[0] if recs and recs[0].get("record") == "meta" else None
    if meta is None or meta.get("runner") != "hxserve":
        reasons.append(f"{jsonl}: no hxserve meta record first")
        return res
    got = fnv1a64(Path(trace).read_bytes())
    if f"{got:016x}" != meta.get("trace_fnv1a64"):
        reasons.append(
            f"the runner read a different trace (fnv1a64 {meta.get('trace_fnv1a64')}, {trace} has {got:016x})"
        )
    verified = _check_verified(recs, npy_dir, rtol, atol, reasons)
    reqs = [r for r in recs if r.get("record") == "request"]
    replays = [r for r in recs if r.get("record") == "replay"]
    want_replays = len(meta["policies"]) * meta["reps"]
    if len(replays) != want_replays:
        reasons.append(f"{len(replays)} replay records, expected {want_replays} (policies x reps)")
    n = len(tr)
    rows = list(zip(tr["arrival_ns"].astype(int), tr["kind"], tr["size"].astype(int), tr["deadline_ns"].astype(int)))
    by_replay: dict[tuple, dict[int, dict]] = {}
    failed = 0
    for r in reqs:
        key = (r["rep"], r["policy"])
        by_replay.setdefault(key, {})[r["id"]] = r
        i = r["id"]
        why = _request_problems(r, rows[i], verified) if 0 <= i < n else ["is not in the trace"]
        if why:
            failed += 1
            if failed <= 20:
                reasons.append(f"replay rep {key[0]} policy {key[1]}: request {i}: " + "; ".join(why))
    if failed > 20:
        reasons.append(f"... {failed} failed requests in all")
    for key, got_reqs in sorted(by_replay.items()):
        if len(got_reqs) != n:
            reasons.append(f"replay rep {key[0]} policy {key[1]}: {len(got_reqs)} requests, the trace has {n}")
        reasons += _pair_problems(key, got_reqs)
    res.update(
        ok=not reasons, requests=len(reqs), replays=len(replays), failed_requests=failed, verified_sets=len(verified)
    )
    return res
