"""Everything seeded: the tasks' inputs and the rounds' order.

Owns :func:`runner_inputs`, the inputs exactly as hxrun generates them
(its splitmix64, :func:`splitmix64`), so that both backends compute on the
same data, and :func:`round_order`, the shuffled order of one round's trials.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hxfuse.external.ort_point import Spec

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


def round_order(seed: int, rnd: int, items: Sequence[Any]) -> list[Any]:
    """The round's shuffled order: seeded by (seed, round) only, so reruns repeat it."""
    rng = np.random.default_rng([seed & _MASK, rnd & _MASK, 0x0A7])
    return [items[i] for i in rng.permutation(len(items))]
