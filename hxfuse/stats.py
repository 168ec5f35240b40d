"""Robust statistics for noisy timing samples.

The host machine is shared and noisy (experiment-model.md, "Tool facts"), so
every summary is a median with a seeded bootstrap percentile interval, ratios
are paired within a round, and outliers are flagged (never dropped).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0
# Scale that makes the MAD a consistent estimator of the standard deviation
# for normal data; 3.5 is the usual cut for "modified z-score" outliers.
MAD_SCALE = 1.4826
MAD_CUT = 3.5


@dataclass(frozen=True)
class Estimate:
    """A point estimate with a percentile interval and the sample size."""

    value: float
    lo: float
    hi: float
    n: int

    def excludes(self, x: float = 1.0) -> bool:
        """True when the interval lies entirely above or below x."""
        return bool(self.lo > x or self.hi < x)

    def as_tuple(self) -> tuple[float, float, float]:
        return (self.value, self.lo, self.hi)


NAN_ESTIMATE = Estimate(math.nan, math.nan, math.nan, 0)


def _clean(x: Sequence[float] | np.ndarray) -> np.ndarray:
    a = np.asarray(x, dtype=float).ravel()
    return a[np.isfinite(a)]


def bootstrap_median(
    x: Sequence[float] | np.ndarray,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """Median of x with a bootstrap percentile interval (NaNs ignored).

    Vectorised: all resamples are drawn as one (n_resamples, n) index matrix.
    With one sample the interval collapses to the value; with none it is NaN.
    """
    a = _clean(x)
    n = len(a)
    if n == 0:
        return NAN_ESTIMATE
    med = float(np.median(a))
    if n == 1:
        return Estimate(med, med, med, 1)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    meds = np.median(a[idx], axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(meds, [alpha, 1.0 - alpha])
    return Estimate(med, float(lo), float(hi), n)


def paired_ratio(
    numerator: Sequence[float] | np.ndarray,
    denominator: Sequence[float] | np.ndarray,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """Median of the per-pair ratios numerator_i / denominator_i, with a bootstrap interval.

    Pairs are rounds: each round runs every group once in a shuffled order, so
    the per-round ratio cancels slow drifts of the machine.  Pairs with a
    missing or non-positive side are dropped.  For a speedup of X over Y pass
    (T_Y, T_X).
    """
    num = np.asarray(numerator, dtype=float).ravel()
    den = np.asarray(denominator, dtype=float).ravel()
    if num.shape != den.shape:
        raise ValueError(f"paired samples differ in length: {num.shape} vs {den.shape}")
    ok = np.isfinite(num) & np.isfinite(den) & (den > 0) & (num > 0)
    return bootstrap_median(num[ok] / den[ok], n_resamples, level, seed)


def cv(x: Sequence[float] | np.ndarray) -> float:
    """Coefficient of variation: sample standard deviation / mean (NaN below 2 samples)."""
    a = _clean(x)
    if len(a) < 2 or a.mean() == 0:
        return math.nan
    return float(a.std(ddof=1) / a.mean())


def mad_outliers(x: Sequence[float] | np.ndarray, cut: float = MAD_CUT) -> np.ndarray:
    """Boolean mask, same length as x: |x - median| > cut * 1.4826 * MAD.

    Only flags; the caller keeps every sample.  When the MAD is 0 (more than
    half the samples identical) there is no scale to judge by and nothing is
    flagged.  NaN entries are never flagged.
    """
    a = np.asarray(x, dtype=float).ravel()
    fin = np.isfinite(a)
    out = np.zeros(len(a), dtype=bool)
    if fin.sum() < 3:
        return out
    med = np.median(a[fin])
    mad = np.median(np.abs(a[fin] - med))
    if mad == 0:
        return out
    out[fin] = np.abs(a[fin] - med) > cut * MAD_SCALE * mad
    return out


def intervals_overlap(a: Estimate | tuple[float, float], b: Estimate | tuple[float, float]) -> bool:
    """Whether two [lo, hi] intervals share any point."""
    alo, ahi = (a.lo, a.hi) if isinstance(a, Estimate) else a
    blo, bhi = (b.lo, b.hi) if isinstance(b, Estimate) else b
    return bool(alo <= bhi and blo <= ahi)


def noise_warnings(
    group_medians: Mapping[str, Estimate],
    group_cvs: Mapping[str, float],
    cv_threshold: float = 0.10,
) -> list[str]:
    """Reasons why a point is too noisy to separate its groups (empty list: none).

    Two kinds: a group whose CV exceeds ``cv_threshold``, and a point where
    every pair of groups has overlapping median intervals, i.e. no group can be
    told apart from any other.  Pairs that overlap while others separate are a
    result ("D ~ B"), not noise, and are not reported here.
    """
    reasons = []
    for g in sorted(group_cvs):
        c = group_cvs[g]
        if math.isfinite(c) and c > cv_threshold:
            reasons.append(f"CV of group {g} is {c:.2f} > {cv_threshold:.2f}")
    valid = {g: e for g, e in group_medians.items() if e.n > 0 and math.isfinite(e.lo)}
    names = sorted(valid)
    if len(names) >= 2:
        all_overlap = all(
            intervals_overlap(valid[a], valid[b]) for i, a in enumerate(names) for b in names[i + 1 :]
        )
        if all_overlap:
            reasons.append("median intervals of all groups (" + ", ".join(names) + ") overlap")
    return reasons
