"""The point ONNX Runtime runs, shared by every module of the harness.

Owns :class:`Spec` (one point in hxrun's terms, as :mod:`hxfuse.external.ort`
parses it from hxrun's options), :class:`OrtHarnessError` (a point refused
before any work) and :func:`engine_cores` (hxrun's affinity rule for the
harness's engine threads).  Imports nothing of the harness, so every other
module can import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from hxfuse.model import ENGINE_OF, TASKS, WORKLOAD_TASKS


class OrtHarnessError(ValueError):
    """Bad arguments or an unsupported point: raised before any work."""


@dataclass(frozen=True)
class Spec:
    """One point, in hxrun's terms (docs/runner.md).  No field has a default:
    hxrun's defaults live once, in :data:`hxfuse.external.ort.HXRUN_DEFAULTS`,
    and a point is built from parsed options (``spec_from_args``)."""

    workloads: tuple[str, ...]
    precision: str
    m: int
    n: int
    k: int
    v_variant: str
    v_rows: int
    v_cols: int
    v_passes: int
    v_workers: int
    d_rows: int
    d_row_bytes: int
    d_src_stride: int
    d_repeat: int
    warmup: int
    rounds: int
    seed: int
    order_seed: int | None = None  # None: seed
    affinity: str | None = None
    # recorded for provenance; they describe hxrun's engines, not ORT's
    ignored: dict = field(default_factory=dict)

    @property
    def tasks(self) -> tuple[str, ...]:
        used = set().union(*(WORKLOAD_TASKS[w] for w in self.workloads))
        return tuple(t for t in TASKS if t in used)


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
