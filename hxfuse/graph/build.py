"""Task graphs from real model blocks (workload 4) and their ready-task profile.

A graph is a plain dict, written as JSON for the graph runner (``hxgraph``,
docs/graphs.md): named fp32 buffers with sizes, and nodes (an op, its
parameters, its input and output buffers by role, and ``after``: the nodes
it depends on).  The builders here write the published structure of a few
blocks with the sizes as parameters; the runner fills the graph's inputs
(weights and activations) with seeded random values.

Dependencies are derived, not written by hand: :class:`Builder` replays the
nodes in program order and makes a node depend on the last writer of every
storage it reads (read after write), and a writer on the last writer and the
readers since (write after write, write after read).  With ``reuse`` a
memory planner (greedy, in program order, as a serial runtime's arena
planner does) lets buffers with disjoint lifetimes share storage; the write
after read/write edges that sharing implies are added by the same replay, so
the runner's conflict check accepts the graph and the measurement shows what
that ordering costs.

The ready profile of a graph is computed in hxfuse.graph.profile, so that
editing the analysis never rebuilds a graph (nor reruns its measurement).

Pure functions; no I/O except :func:`write_graph`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

# engine class of every op (the runner's table, kernels/hxgraph/graph.c)
OP_CLASS = {
    "gemm": "M",
    "silu": "V",
    "relu6": "V",
    "add": "V",
    "swiglu": "V",
    "softmax": "V",
    "maxpool3": "V",
    "im2col3": "V",
    "dwconv3": "V",
    "copy": "D",
}
CLASSES = ("M", "V", "D")


@dataclass
class _Node:
    name: str
    op: str
    inputs: dict
    outputs: dict
    params: dict
    partial: bool = False  # a copy writing one region of its destination
    after: list = field(default_factory=list)


class Builder:
    """Collects buffers and nodes in program order; :meth:`graph` derives the
    edges (and, with ``reuse``, the shared storage)."""

    def __init__(self, name: str, description: str = ""):
        self.name, self.description = name, description
        self.bufs: dict[str, int] = {}
        self.nodes: list[_Node] = []

    def buf(self, name: str, *shape: int) -> str:
        if name in self.bufs:
            raise ValueError(f"buffer {name!r} declared twice")
        self.bufs[name] = 4 * math.prod(shape)
        return name

    def node(self, name: str, op: str, inputs: dict, outputs: dict, partial: bool = False, **params) -> str:
        if op not in OP_CLASS:
            raise ValueError(f"unknown op {op!r}")
        self.nodes.append(_Node(name, op, dict(inputs), dict(outputs), params, partial))
        return name

    # -- memory planning ------------------------------------------------
    def _lifetimes(self) -> dict[str, tuple[int, int]]:
        """Program-order interval of each buffer that is written before it is
        read; a buffer nobody reads after its last write is a graph output
        and lives to the end."""
        first, last, first_is_write = {}, {}, {}
        for i, n in enumerate(self.nodes):
            for b in list(n.inputs.values()) + list(n.outputs.values()):
                if b not in first:
                    first[b], first_is_write[b] = i, b in n.outputs.values()
                last[b] = i
        end = len(self.nodes)
        out = {}
        for b in first:
            if not first_is_write[b]:
                continue  # graph inputs keep their own storage
            read_later = any(b in n.inputs.values() for n in self.nodes[last[b] :])
            out[b] = (first[b], last[b] if read_later else end)
        return out

    def _plan(self) -> dict[str, str]:
        """Greedy reuse: each intermediate (by first use) takes the smallest
        free storage at least its size whose occupant's lifetime ended."""
        life = self._lifetimes()
        roots: list[list] = []  # [root name, bytes, busy until]
        alias = {}
        for b in sorted(life, key=lambda x: life[x][0]):
            start, end = life[b]
            fits = [r for r in roots if r[2] < start and r[1] >= self.bufs[b]]
            if fits:
                r = min(fits, key=lambda r: r[1])
                alias[b], r[2] = r[0], end
            else:
                roots.append([b, self.bufs[b], end])
        return alias

    # -- edges -------------------------------------------------------------
    def graph(self, reuse: bool = False) -> dict:
        alias = self._plan() if reuse else {}
        storage = {b: alias.get(b, b) for b in self.bufs}
        writers: dict[str, list[str]] = {}
        partial: dict[str, bool] = {}
        readers: dict[str, list[str]] = {}
        base: dict[str, list[str]] = {}  # what a group of partial writers follows
        nodes = []
        for n in self.nodes:
            deps: list[str] = list(n.after)
            for b in n.inputs.values():
                s = storage[b]
                deps += writers.get(s, [])
            for b in n.outputs.values():
                s = storage[b]
                if n.partial and partial.get(s):
                    # another region of the same destination: ordered after
                    # what the group's first writer was ordered after, and
                    # after readers since, not after its sibling writers
                    deps += base.get(s, []) + readers.get(s, [])
                else:
                    deps += writers.get(s, []) + readers.get(s, [])
                    base[s] = writers.get(s, []) + readers.get(s, [])
            for b in n.inputs.values():
                readers.setdefault(storage[b], []).append(n.name)
            for b in n.outputs.values():
                s = storage[b]
                if n.partial and partial.get(s):
                    writers[s].append(n.name)
                else:
                    writers[s] = [n.name]
                partial[s] = n.partial
                readers[s] = []
            after = [d for d in dict.fromkeys(deps) if d != n.name]
            nodes.append(
                {"name": n.name, "op": n.op, **n.params, "inputs": n.inputs, "outputs": n.outputs, "after": after}
            )
        bufs = [{"name": b, "bytes": nb, **({"alias": alias[b]} if b in alias else {})} for b, nb in self.bufs.items()]
        return {
            "name": self.name,
            "description": self.description,
            "precision": "fp32",
            "buffers": bufs,
            "nodes": nodes,
        }


# -- the blocks ---------------------------------------------------------------


def _gemm(g: Builder, name, a, b, c, m, n, k, trans_b=False):
    g.buf(c, m, n)
    params = {"m": m, "n": n, "k": k}
    if trans_b:
        params["trans_b"] = True
    return g.node(name, "gemm", {"a": a, "b": b}, {"c": c}, **params)


def _ew(g: Builder, name, op, ins: dict, y, rows, cols, **params):
    g.buf(y, rows, cols)
    return g.node(name, op, ins, {"y": y}, rows=rows, cols=cols, **params)


def decoder(tokens: int = 64, d_model: int = 128, heads: int = 2, d_ff: int = 256, micro_batches: int = 2) -> Builder:
    """A pre-norm transformer decoder layer (Llama style, norms left out): per
    micro-batch and head, Q, K and V projections, scores Q K^T, a scaled row
    softmax, P V and the head's slice of the output projection; the heads'
    outputs summed and added to the input; then the SwiGLU FFN (gate and up
    projections, silu(gate) * up, down projection) and its residual.  The
    weights are shared by the micro-batches, which are independent."""
    if d_model % heads:
        raise ValueError(f"decoder: d_model {d_model} is not a multiple of heads {heads}")
    dh, s, d = d_model // heads, tokens, d_model
    g = Builder(
        "decoder",
        f"transformer decoder layer, {micro_batches} micro-batches of {s} tokens, "
        f"d_model {d}, {heads} heads, d_ff {d_ff}",
    )
    for h in range(heads):
        for w in ("q", "k", "v"):
            g.buf(f"W{w}{h}", d, dh)
        g.buf(f"Wo{h}", dh, d)
    g.buf("W1", d, d_ff), g.buf("W3", d, d_ff), g.buf("W2", d_ff, d)
    for b in range(micro_batches):
        x = g.buf(f"x{b}", s, d)
        parts = []
        for h in range(heads):
            p = f"b{b}h{h}"
            for w in ("q", "k", "v"):
                _gemm(g, f"{p}_{w}", x, f"W{w}{h}", f"{p}_{w}", s, dh, d)
            _gemm(g, f"{p}_score", f"{p}_q", f"{p}_k", f"{p}_s", s, s, dh, trans_b=True)
            _ew(g, f"{p}_softmax", "softmax", {"x": f"{p}_s"}, f"{p}_p", s, s, scale=1.0 / math.sqrt(dh))
            _gemm(g, f"{p}_ctx", f"{p}_p", f"{p}_v", f"{p}_ctx", s, dh, s)
            _gemm(g, f"{p}_o", f"{p}_ctx", f"Wo{h}", f"{p}_o", s, d, dh)
            parts.append(f"{p}_o")
        acc = parts[0]
        for h in range(1, heads):
            _ew(g, f"b{b}_sum{h}", "add", {"a": acc, "b": parts[h]}, f"b{b}_attn{h}", s, d)
            acc = f"b{b}_attn{h}"
        _ew(g, f"b{b}_res1", "add", {"a": x, "b": acc}, f"b{b}_x1", s, d)
        _gemm(g, f"b{b}_gate", f"b{b}_x1", "W1", f"b{b}_g", s, d_ff, d)
        _gemm(g, f"b{b}_up", f"b{b}_x1", "W3", f"b{b}_u", s, d_ff, d)
        _ew(g, f"b{b}_swiglu", "swiglu", {"a": f"b{b}_g", "b": f"b{b}_u"}, f"b{b}_a", s, d_ff)
        _gemm(g, f"b{b}_down", f"b{b}_a", "W2", f"b{b}_f", s, d, d_ff)
        _ew(g, f"b{b}_res2", "add", {"a": f"b{b}_x1", "b": f"b{b}_f"}, f"b{b}_out", s, d)
    return g


def inception(
    size: int = 14,
    c_in: int = 64,
    c1: int = 32,
    c3r: int = 48,
    c3: int = 64,
    c5r: int = 16,
    c5: int = 32,
    cp: int = 32,
    images: int = 1,
) -> Builder:
    """An Inception (GoogLeNet) block: four parallel branches over one input
    (1x1; 1x1 reduce then 3x3; 1x1 reduce then 3x3 in place of the 5x5, as
    Inception v2 factorises it; 3x3 max-pool then 1x1), every convolution a
    GEMM (3x3 via im2col) followed by its activation (ReLU6 here), and the
    channel concatenation done by the copy engine: one strided 2-D copy per
    branch into its columns of the output."""
    hw, C = size * size, c1 + c3 + c5 + cp
    g = Builder(
        "inception",
        f"Inception block, {images} image(s) {size}x{size}x{c_in}, branches {c1}/{c3r}->{c3}/{c5r}->{c5}/pool->{cp}",
    )
    g.buf("W1", c_in, c1), g.buf("W3r", c_in, c3r), g.buf("W3", 9 * c3r, c3)
    g.buf("W5r", c_in, c5r), g.buf("W5", 9 * c5r, c5), g.buf("Wp", c_in, cp)
    for i in range(images):
        x, p = g.buf(f"x{i}", hw, c_in), f"i{i}"
        outs = []
        # branch 1: 1x1
        _gemm(g, f"{p}_b1", x, "W1", f"{p}_b1", hw, c1, c_in)
        _ew(g, f"{p}_b1_act", "relu6", {"x": f"{p}_b1"}, f"{p}_b1a", hw, c1)
        outs.append((f"{p}_b1a", c1))
        # branches 2 and 3: 1x1 reduce, activation, 3x3 as im2col + GEMM
        for br, red, cout, wr, w in (("b3", c3r, c3, "W3r", "W3"), ("b5", c5r, c5, "W5r", "W5")):
            _gemm(g, f"{p}_{br}r", x, wr, f"{p}_{br}r", hw, red, c_in)
            _ew(g, f"{p}_{br}r_act", "relu6", {"x": f"{p}_{br}r"}, f"{p}_{br}ra", hw, red)
            g.buf(f"{p}_{br}col", hw, 9 * red)
            g.node(f"{p}_{br}_im2col", "im2col3", {"x": f"{p}_{br}ra"}, {"y": f"{p}_{br}col"}, h=size, w=size, c=red)
            _gemm(g, f"{p}_{br}", f"{p}_{br}col", w, f"{p}_{br}", hw, cout, 9 * red)
            _ew(g, f"{p}_{br}_act", "relu6", {"x": f"{p}_{br}"}, f"{p}_{br}a", hw, cout)
            outs.append((f"{p}_{br}a", cout))
        # branch 4: 3x3 max-pool, 1x1
        g.buf(f"{p}_pool", hw, c_in)
        g.node(f"{p}_pool", "maxpool3", {"x": x}, {"y": f"{p}_pool"}, h=size, w=size, c=c_in)
        _gemm(g, f"{p}_bp", f"{p}_pool", "Wp", f"{p}_bp", hw, cp, c_in)
        _ew(g, f"{p}_bp_act", "relu6", {"x": f"{p}_bp"}, f"{p}_bpa", hw, cp)
        outs.append((f"{p}_bpa", cp))
        # concatenation along channels by the copy engine
        g.buf(f"{p}_out", hw, C)
        col = 0
        for src, c in outs:
            g.node(
                f"{p}_cat_{src.split('_')[1]}",
                "copy",
                {"src": src},
                {"dst": f"{p}_out"},
                partial=True,
                rows=hw,
                row_bytes=4 * c,
                src_stride=4 * c,
                dst_stride=4 * C,
                dst_offset=4 * col,
            )
            col += c
    return g


def mobilenetv2(size: int = 14, channels: int = 32, expansion: int = 6, images: int = 2) -> Builder:
    """MobileNetV2 inverted-residual blocks (stride 1, same channels in and
    out): 1x1 expansion GEMM, ReLU6, depthwise 3x3 with ReLU6, 1x1 linear
    projection GEMM, residual add; one independent chain per image, and the
    copy engine prefetching the next block's three weight tensors from DDR
    into scratch meanwhile."""
    hw, c, e = size * size, channels, channels * expansion
    g = Builder(
        "mobilenetv2",
        f"MobileNetV2 inverted residual, {images} image(s) {size}x{size}x{c}, "
        f"expansion {expansion}, next block's weights prefetched",
    )
    g.buf("We", c, e), g.buf("Wd", 9, e), g.buf("Wp", e, c)
    for w, shape in (("We", (c, e)), ("Wd", (9, e)), ("Wp", (e, c))):
        g.buf(f"next_{w}", *shape), g.buf(f"next_{w}_scratch", *shape)
    for i in range(images):
        x, p = g.buf(f"x{i}", hw, c), f"i{i}"
        _gemm(g, f"{p}_expand", x, "We", f"{p}_e", hw, e, c)
        _ew(g, f"{p}_expand_act", "relu6", {"x": f"{p}_e"}, f"{p}_ea", hw, e)
        g.buf(f"{p}_dw", hw, e)
        g.node(f"{p}_dw", "dwconv3", {"x": f"{p}_ea", "w": "Wd"}, {"y": f"{p}_dw"}, h=size, w=size, c=e, relu6=True)
        _gemm(g, f"{p}_project", f"{p}_dw", "Wp", f"{p}_p", hw, c, e)
        _ew(g, f"{p}_res", "add", {"a": x, "b": f"{p}_p"}, f"{p}_out", hw, c)
    for w in ("We", "Wd", "Wp"):
        nb = g.bufs[f"next_{w}"]
        g.node(
            f"prefetch_{w}",
            "copy",
            {"src": f"next_{w}"},
            {"dst": f"next_{w}_scratch"},
            rows=1,
            row_bytes=nb,
            src_stride=nb,
            dst_stride=nb,
        )
    return g


BUILDERS = {"decoder": decoder, "inception": inception, "mobilenetv2": mobilenetv2}


def builder_params(name: str) -> dict:
    """The parameters a builder takes, with their defaults."""
    import inspect

    return {k: p.default for k, p in inspect.signature(BUILDERS[name]).parameters.items()}


def build(model: str, params: dict | None = None, reuse: bool = False) -> dict:
    """The graph of a model block (``model``: a key of BUILDERS)."""
    return BUILDERS[model](**(params or {})).graph(reuse=reuse)


def write_graph(graph: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(graph, indent=1) + "\n")
