"""Correctness of one graph replicate (the pipeline's ``graph_check`` rule).

Inputs: the graph file, the runner's JSON Lines (docs/graphs.md) and the
``.npy`` files of its verification round, where the host saved every node's
inputs before it ran and its outputs after (group A, the fixed order).  A
replicate passes when

1. the file is what the runner wrote (end record's count and digest,
   hxfuse.runner.integrity), complete, and the runner said ``status: ok``;
2. every node has its ``.npy`` files (a missing one fails: the numeric check
   is never skipped) and its outputs equal a numpy reference computed in
   float64 from its saved inputs:

   - ``gemm``: ``|C - A@B| <= rtol * (|A| @ |B|) + atol * sqrt(K)`` (the
     scale of the fp32 dot-product error bound, as for the M task);
   - ``silu``, ``relu6``, ``add``, ``swiglu``, ``softmax``, ``dwconv3``:
     ``|y - ref| <= rtol * scale + atol`` with scale the magnitude of the
     terms (``|ref|``; ``|a| + |b|`` for add; the sum of ``|x w|`` for the
     depthwise convolution);
   - ``maxpool3``, ``im2col3``: exact (they only move and compare values);
   - ``copy``: exact, bytes: the destination after equals the destination
     before with the copied rows replaced by the source rows;
3. the data flow holds: each node's saved input equals, bit for bit, the
   saved output of the last node before it (in the fixed order) that wrote
   that buffer's storage, when that node wrote the same buffer;
4. every buffer's checksum in the ``verify`` record equals the checksum of
   its last writer's saved output (recomputed with numpy), so the checksums
   every trial is compared with are those of numpy-checked data;
5. every trial (warm-up and measured) reported ``checksums_ok``.

:func:`check_graph` returns a JSON-serialisable dict with ``status``
(``ok``/``failed``) and ``reasons``; a failed replicate never enters a
speedup.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hxfuse.runner import integrity
from hxfuse.runner.checks import checksum_hex, hx_checksum
from hxfuse.runner.jsonl import IncompleteRunError, read_records

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5


def _silu(x):
    return x / (1.0 + np.exp(-x))


def reference(node: dict, ins: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
    """The float64 reference of a (non-copy) node's output ``y``/``c`` from
    its inputs (flat float32 arrays by role), and the error scale (None:
    exact)."""
    op = node["op"]
    f = {k: v.astype(np.float64) for k, v in ins.items()}
    if op == "gemm":
        m, n, k = node["m"], node["n"], node["k"]
        a = f["a"].reshape(m, k)
        b = f["b"].reshape(n, k).T if node.get("trans_b") else f["b"].reshape(k, n)
        return (a @ b).ravel(), (np.abs(a) @ np.abs(b)).ravel()
    if op == "silu":
        r = _silu(f["x"])
        return r, np.abs(r)
    if op == "relu6":
        r = np.clip(f["x"], 0.0, 6.0)
        return r, np.abs(r)
    if op == "add":
        return f["a"] + f["b"], np.abs(f["a"]) + np.abs(f["b"])
    if op == "swiglu":
        r = _silu(f["a"]) * f["b"]
        return r, np.abs(r)
    if op == "softmax":
        x = f["x"].reshape(node["rows"], node["cols"]) * node.get("scale", 1.0)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        r = (e / e.sum(axis=1, keepdims=True)).ravel()
        return r, np.abs(r)
    h, w, c = node.get("h"), node.get("w"), node.get("c")
    if op in ("maxpool3", "im2col3", "dwconv3"):
        x = np.pad(
            f["x"].reshape(h, w, c), ((1, 1), (1, 1), (0, 0)), constant_values=(-np.inf if op == "maxpool3" else 0.0)
        )
        win = [x[dy : dy + h, dx : dx + w, :] for dy in range(3) for dx in range(3)]
        if op == "maxpool3":
            return np.max(win, axis=0).ravel(), None
        if op == "im2col3":
            return np.stack(win, axis=2).reshape(h * w, 9 * c).ravel(), None
        wt = f["w"].reshape(9, c)
        r = sum(win[i] * wt[i] for i in range(9))
        scale = sum(np.abs(win[i] * wt[i]) for i in range(9))
        if node.get("relu6"):
            r = np.clip(r, 0.0, 6.0)
        return r.ravel(), scale.ravel()
    raise ValueError(f"node {node['name']!r}: no reference for op {op!r}")


def copy_reference(node: dict, src: np.ndarray, before: np.ndarray) -> np.ndarray:
    """The destination bytes after a 2-D copy."""
    out = before.copy()
    rb, so, do = node["row_bytes"], node.get("src_offset", 0), node.get("dst_offset", 0)
    for r in range(node["rows"]):
        s, d = so + r * node["src_stride"], do + r * node["dst_stride"]
        out[d : d + rb] = src[s : s + rb]
    return out


def _load(npy: Path, node: str, kind: str, role: str, reasons: list) -> np.ndarray | None:
    p = npy / f"{node}__{kind}_{role}.npy"
    if not p.is_file():
        reasons.append(f"node {node}: missing {p.name} (the numeric check cannot be skipped)")
        return None
    return np.load(p)


def check_node(node: dict, npy: Path, rtol: float, atol: float, reasons: list) -> None:
    """Appends a reason for each way the node's saved output differs from its
    reference."""
    name = node["name"]
    ins = {r: _load(npy, name, "in", r, reasons) for r in node["inputs"]}
    outs = {r: _load(npy, name, "out", r, reasons) for r in node["outputs"]}
    if any(v is None for v in (*ins.values(), *outs.values())):
        return
    if node["op"] == "copy":
        before = _load(npy, name, "before", "dst", reasons)
        if before is None:
            return
        want = copy_reference(node, ins["src"], before)
        if not np.array_equal(outs["dst"], want):
            bad = int(np.count_nonzero(outs["dst"] != want))
            reasons.append(f"node {name} (copy): {bad} destination bytes differ from the copied source")
        return
    ((role, got),) = outs.items()
    ref, scale = reference(node, ins)
    got = got.astype(np.float64)
    if got.shape != ref.shape:
        reasons.append(f"node {name}: output has {got.size} values, the reference {ref.size}")
        return
    if scale is None:
        ok = (got == ref) | (np.isnan(got) & np.isnan(ref))
    else:
        tol = rtol * scale + atol * (np.sqrt(node["k"]) if node["op"] == "gemm" else 1.0)
        ok = np.abs(got - ref) <= tol
    if not ok.all():
        i = int(np.argmin(ok))
        reasons.append(
            f"node {name} ({node['op']}): {int((~ok).sum())} of {ok.size} values outside the "
            f"tolerance (first at {i}: got {got[i]!r}, numpy {ref[i]!r})"
        )


def _storage(graph: dict) -> dict[str, str]:
    alias = {b["name"]: b.get("alias") for b in graph["buffers"]}

    def root(b):
        while alias.get(b):
            b = alias[b]
        return b

    return {b: root(b) for b in alias}


def dataflow_problems(graph: dict, order: list[str], npy: Path) -> tuple[list[str], dict[str, str]]:
    """Chain check (3) and the expected final checksum of every buffer whose
    last writer wrote that buffer (4)."""
    nodes = {n["name"]: n for n in graph["nodes"]}
    storage = _storage(graph)
    last: dict[str, tuple[str, str, str]] = {}  # storage -> (node, role, buffer)
    reasons: list[str] = []
    for name in order:
        nd = nodes[name]
        for role, b in nd["inputs"].items():
            w = last.get(storage[b])
            if w is None or w[2] != b:
                continue
            mine, theirs = npy / f"{name}__in_{role}.npy", npy / f"{w[0]}__out_{w[1]}.npy"
            if mine.is_file() and theirs.is_file() and np.load(mine).tobytes() != np.load(theirs).tobytes():
                reasons.append(f"node {name} read {b} ({role}) different from what {w[0]} wrote")
        for role, b in nd["outputs"].items():
            last[storage[b]] = (name, role, b)
    expect = {}
    for b in storage:
        w = last.get(storage[b])
        if w is not None and w[2] == b:
            p = npy / f"{w[0]}__out_{w[1]}.npy"
            if p.is_file():
                expect[b] = checksum_hex(hx_checksum(np.load(p)))
    return reasons, expect


def check_graph(
    graph_path: str | Path,
    jsonl: str | Path,
    npy: str | Path,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    provenance: str | Path | None = None,
) -> dict:
    """The check result (``status``, ``reasons``, counts).  With *provenance*
    (the run wrapper's sidecar) the raw files' SHA-256 are compared first: the
    workflow deletes the .npy files after this check."""
    graph = json.loads(Path(graph_path).read_text())
    npy, reasons = Path(npy), []
    if provenance is not None:
        reasons += integrity.sidecar_problems(provenance, jsonl, npy)
    try:
        integrity.verify_end_record(jsonl)
        # the one reader; a run that is not meta first and end last fails here
        recs = read_records(jsonl).records
    except (OSError, integrity.IntegrityError, IncompleteRunError) as exc:
        return {"status": "failed", "reasons": [str(exc)]}
    if recs[0].get("record") != "meta" or recs[-1].get("status") != "ok":
        reasons.append(f"runner status {recs[-1].get('status')!r} (meta first, status ok expected)")
    meta = recs[0]
    verify = next((r for r in recs if r.get("record") == "verify"), None)
    if verify is None:
        return {"status": "failed", "reasons": reasons + ["no verify record"]}
    order = [n["name"] for n in meta["graph"]["nodes"]]
    if sorted(order) != sorted(n["name"] for n in graph["nodes"]):
        reasons.append("the runner's nodes are not the graph file's")
        return {"status": "failed", "reasons": reasons}
    for nd in graph["nodes"]:
        check_node(nd, npy, rtol, atol, reasons)
    flow, expect = dataflow_problems(graph, order, npy)
    reasons += flow
    for b, want in expect.items():
        if verify["checksums"].get(b) != want:
            reasons.append(
                f"buffer {b}: verified checksum {verify['checksums'].get(b)} is not that of "
                f"its last writer's saved output ({want})"
            )
    trials = [r for r in recs if r.get("record") == "trial"]
    bad = [r for r in trials if not r.get("checksums_ok")]
    if bad:
        reasons.append(
            f"{len(bad)} of {len(trials)} trials ended with buffers unlike the verified ones "
            f"(first: round {bad[0]['round']} group {bad[0]['group']}: "
            f"{', '.join(bad[0]['mismatched_buffers'])})"
        )
    if not trials:
        reasons.append("no trials")
    return {
        "status": "failed" if reasons else "ok",
        "reasons": reasons,
        "nodes_checked": len(graph["nodes"]),
        "checksums_tied": len(expect),
        "trials": len(trials),
        "emulated": bool(meta.get("emulated")),
    }
