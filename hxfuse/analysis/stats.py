"""Robust statistics for noisy timing samples.

The host machine is shared and noisy (docs/experiment-model.md, "The machines"), so
every summary is a median with a seeded bootstrap percentile interval, ratios
are paired within a round, and outliers are flagged (never dropped).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Mapping, Sequence

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


def hierarchical_bootstrap_median(
    x: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray | None,
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> Estimate:
    """Median of x with a two-level bootstrap interval: clusters, then samples within.

    ``clusters`` labels each sample with its replicate (an independent runner
    invocation).  Each resample draws as many replicates as there are, with
    replacement, then within every drawn replicate as many of its samples as
    it has, with replacement, and takes the median of the pooled draw.  A
    replicate-to-replicate drift (e.g. the machine got busier between two
    invocations) therefore widens the interval, which resampling the pooled
    rounds would hide.  With one cluster (or ``clusters`` None) this is
    :func:`bootstrap_median`.  NaNs are ignored; ``n`` counts the samples.
    """
    a = np.asarray(x, dtype=float).ravel()
    if clusters is None:
        return bootstrap_median(a, n_resamples, level, seed)
    c = np.asarray(clusters).ravel()
    if c.shape != a.shape:
        raise ValueError(f"samples and cluster labels differ in length: {a.shape} vs {c.shape}")
    fin = np.isfinite(a)
    a, c = a[fin], c[fin]
    if len(set(c.tolist())) <= 1:
        return bootstrap_median(a, n_resamples, level, seed)
    meds = hierarchical_resample_medians(a, c, n_resamples, seed)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(meds, [alpha, 1.0 - alpha])
    return Estimate(float(np.median(a)), float(lo), float(hi), int(len(a)))


def hierarchical_resample_medians(
    x: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> np.ndarray:
    """The resampled medians behind :func:`hierarchical_bootstrap_median`, one
    per resample: clusters drawn with replacement, then each drawn cluster's
    own number of samples from it.  NaNs are ignored; with no finite sample
    every median is NaN.  Used directly where two sides are resampled
    independently (hxfuse.external.compare's unpaired ratios)."""
    a = np.asarray(x, dtype=float).ravel()
    c = np.asarray(clusters).ravel()
    if c.shape != a.shape:
        raise ValueError(f"samples and cluster labels differ in length: {a.shape} vs {c.shape}")
    fin = np.isfinite(a)
    a, c = a[fin], c[fin]
    if len(a) == 0:
        return np.full(n_resamples, np.nan)
    groups = [a[c == lab] for lab in dict.fromkeys(c.tolist())]
    sizes = np.array([len(g) for g in groups])
    r, nmax = len(groups), int(sizes.max())
    # Pad the clusters into one (r, nmax) matrix; draws past a cluster's own
    # size are masked out below, so every drawn cluster contributes exactly
    # its own number of samples.
    table = np.full((r, nmax), np.nan)
    for i, g in enumerate(groups):
        table[i, : len(g)] = g
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, r, size=(n_resamples, r))  # clusters drawn
    n_pick = sizes[pick]  # (B, r)
    within = (rng.random((n_resamples, r, nmax)) * n_pick[..., None]).astype(np.int64)
    draws = table[pick[..., None], within]  # (B, r, nmax)
    draws[np.arange(nmax)[None, None, :] >= n_pick[..., None]] = np.nan
    return np.nanmedian(draws.reshape(n_resamples, -1), axis=1)


def cluster_medians(x: Sequence[float] | np.ndarray, clusters: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Median of x within each cluster (replicate), in order of first appearance; NaNs ignored."""
    a = np.asarray(x, dtype=float).ravel()
    c = np.asarray(clusters).ravel()
    out = []
    for lab in dict.fromkeys(c.tolist()):
        v = a[(c == lab) & np.isfinite(a)]
        out.append(float(np.median(v)) if len(v) else math.nan)
    return np.asarray(out, dtype=float)


def robust_cv(x: Sequence[float] | np.ndarray) -> float:
    """1.4826 x MAD / median: the spread of the bulk of the samples, which a
    single preempted round does not move (NaN below 2 samples)."""
    a = _clean(x)
    if len(a) < 2:
        return math.nan
    med = float(np.median(a))
    if med == 0:
        return math.nan
    return float(MAD_SCALE * np.median(np.abs(a - med)) / abs(med))


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


# Share of rounds the MAD rule may flag before a group counts as noisy: a
# single preempted round in 100 does not move a median, a preemption in every
# tenth round does.
OUTLIER_SHARE = 0.05


def contamination(x: Sequence[float] | np.ndarray, min_rel: float = 0.0) -> float:
    """Share of samples that are MAD outliers lying more than ``min_rel`` x
    median from the median (NaN below 3 samples)."""
    a = _clean(x)
    if len(a) < 3:
        return math.nan
    med = float(np.median(a))
    return float((mad_outliers(a) & (np.abs(a - med) > min_rel * abs(med))).mean())


def median_bias_bound(x: Sequence[float] | np.ndarray, min_rel: float = 0.0) -> float:
    """Largest shift of the median, relative to it, that the observed share of
    interfered samples could cause.

    With a share c of the samples contaminated (here: MAD outliers more than
    ``min_rel`` from the median) and the bulk spread sigma = 1.4826 MAD, the
    median can move by at most sigma x Phi^-1(1 / (2 (1 - c))) (Huber's
    maximum bias of the median under c-contamination), whatever values the
    contaminated samples take.  Returned as a fraction of the median; NaN
    below 3 samples, inf when half or more of the samples are contaminated.
    """
    a = _clean(x)
    if len(a) < 3:
        return math.nan
    med = float(np.median(a))
    if med == 0:
        return math.nan
    return median_bias_bound_from_share(a, contamination(a, min_rel))


def median_bias_bound_from_share(x: Sequence[float] | np.ndarray, share: float) -> float:
    """Huber's maximum bias of the median of x when a known share of its
    samples is contaminated, relative to the median:
    sigma x Phi^-1(1 / (2 (1 - share))) / |median| with sigma = 1.4826 MAD
    of x.

    The bound :func:`median_bias_bound` computes with the MAD-outlier share
    as c; here c is given, e.g. the share of rounds the runner saw
    interfered (:func:`hxfuse.analysis.metrics.interfered_round_shares`).  0 for
    share 0 (Phi^-1(1/2) = 0: no contamination, no bias), inf for share >=
    0.5 (the contaminated half can put the median anywhere), NaN below 3
    samples, for a zero median or for a share that is NaN or outside [0, 1].
    """
    a = _clean(x)
    if len(a) < 3 or share is None or not math.isfinite(share) or not 0.0 <= share <= 1.0:
        return math.nan
    med = float(np.median(a))
    if med == 0:
        return math.nan
    if share >= 0.5:
        return math.inf
    sigma = MAD_SCALE * float(np.median(np.abs(a - med)))
    return float(sigma * NormalDist().inv_cdf(1.0 / (2.0 * (1.0 - share))) / abs(med))


def interference_share(x: Sequence[float] | np.ndarray, share: float | None, min_rel: float = 0.0) -> tuple[float, str]:
    """The share of x's rounds hit by interference and where it comes from.

    ``share`` is the runner's evidence (the share of paired rounds seen
    interfered, :func:`hxfuse.analysis.metrics.interfered_round_shares`); when it is
    None or NaN (a raw file without interference evidence: older runs, the
    ONNX Runtime harness, targets that cannot read other work) the MAD proxy
    stands in: :func:`contamination` of x, the share of MAD outliers more
    than ``min_rel`` from the median.  Returns (share, ``"measured"`` or
    ``"mad"``).
    """
    if share is not None and math.isfinite(share):
        return float(share), "measured"
    return contamination(x, min_rel), "mad"


def displacement_bias(
    x: Sequence[float] | np.ndarray,
    down: Sequence[float] | np.ndarray,
    up: Sequence[float] | np.ndarray,
) -> tuple[float, float, float]:
    """How far interference can have moved the median of the per-round
    ratios x = T_Y / T_X, from each round's measured displacement:
    (b_down, b_up, share).  The median free of interference lies in
    [median / (1 + b_down), median x (1 + b_up)]; ``share`` is the share of
    rounds displaced at all.

    Interference only lengthens a trial, by at most the other work that
    displaced it: a trial of makespan T displaced by a share s of it
    (``displaced_share``) took between T (1 - s) and T undisturbed.  So a
    round's ratio T_Y / T_X undisturbed lies in [x (1 - down), x / (1 - up)]
    with ``down`` the Y trial's share (it can only have raised the ratio)
    and ``up`` the X trial's (it can only have lowered it).  The median is
    nondecreasing in every sample, so the median undisturbed lies between
    the medians of those two ends: exact for the sample, nothing assumed
    about how the hit rounds are placed, and each side driven by its own
    trials (the worst-case contamination bound, Huber's, treats every hit
    round as arbitrarily wrong in both directions and widened D/B of a
    quiet default run by 2.5-9.5% where these ends give 0.4-3.6%).

    A side is inf when the displacement can have taken half the rounds'
    whole length (their lower ends at 0: no bound); (NaN, NaN, NaN) when a
    share is unknown or below 3 rounds."""
    a = np.asarray(x, dtype=float).ravel()
    lo_s = np.asarray(down, dtype=float).ravel()
    hi_s = np.asarray(up, dtype=float).ravel()
    keep = np.isfinite(a) & (a > 0)
    a, lo_s, hi_s = a[keep], lo_s[keep], hi_s[keep]
    if len(a) < 3 or not (np.isfinite(lo_s).all() and np.isfinite(hi_s).all()):
        return math.nan, math.nan, math.nan
    lo_s, hi_s = np.clip(lo_s, 0.0, 1.0), np.clip(hi_s, 0.0, 1.0)
    med = float(np.median(a))
    low = float(np.median(a * (1.0 - lo_s)))
    with np.errstate(divide="ignore"):
        high = float(np.median(np.where(hi_s < 1.0, a / (1.0 - hi_s), math.inf)))
    b_down = med / low - 1.0 if low > 0 else math.inf
    b_up = high / med - 1.0
    share = float(((lo_s > 0) | (hi_s > 0)).mean())
    return max(0.0, b_down), max(0.0, b_up), share


def relation_bias(x: Sequence[float] | np.ndarray, share: float | None, min_effect: float) -> tuple[float, float, str]:
    """One relation's worst-case interference shift of its median, as a
    fraction of the median, with the share of hit rounds it rests on and
    where that share comes from: (bias, share, ``"measured"`` or ``"mad"``).

    ``x`` are the relation's per-round paired speedups, ``share`` the share
    of those rounds the runner saw interfered
    (:func:`hxfuse.analysis.metrics.interfered_round_shares`); without it the MAD
    proxy stands in (:func:`interference_share`, outliers counted beyond the
    minimum effect).  The bias is :func:`median_bias_bound_from_share`: NaN
    below 3 rounds, inf when half the rounds or more were hit.

    A decision widens the relation's interval by the bias on both sides
    (:func:`widen`) instead of vetoing the point: a relation far from the
    band stays decided however noisy its rounds, one near an edge becomes
    undetermined."""
    a = _clean(x)
    c, source = interference_share(a, share, min_effect)
    return median_bias_bound_from_share(a, c), c, source


def widen(est: Estimate, bias: float | tuple[float, float]) -> Estimate:
    """``est`` (a ratio, its interval positive) widened by the worst-case
    interference shift ``bias`` of its median on the log scale: a fraction
    b, [lo / (1 + b), hi x (1 + b)], or a pair (b_down, b_up) of
    :func:`displacement_bias`, [lo / (1 + b_down), hi x (1 + b_up)], so a
    widened bound stays positive.  A NaN or non-positive side leaves that
    end as it is; an infinite one makes it 0 or inf."""
    down, up = bias if isinstance(bias, tuple) else (bias, bias)

    def factor(b: Any) -> float:
        if b is None or not isinstance(b, (int, float)) or math.isnan(b) or b <= 0:
            return 1.0
        return 1.0 + b

    fd, fu = factor(down), factor(up)
    lo = 0.0 if math.isinf(fd) else est.lo / fd
    hi = math.inf if math.isinf(fu) else est.hi * fu
    return Estimate(est.value, lo, hi, est.n)


def exp_estimate(e: Estimate) -> Estimate:
    """A log-scale estimate back on the ratio scale (exp of each end)."""
    return Estimate(*(math.exp(v) if not math.isnan(v) else math.nan for v in (e.value, e.lo, e.hi)), e.n)


def log_ratios(x: Sequence[float] | np.ndarray) -> np.ndarray:
    """log of positive ratios; NaN for anything else (a non-positive or
    missing ratio is not a measurement)."""
    a = np.asarray(x, dtype=float).ravel()
    out = np.full(a.shape, np.nan)
    ok = np.isfinite(a) & (a > 0)
    out[ok] = np.log(a[ok])
    return out


@dataclass(frozen=True)
class RelationDecision:
    """What one relation's decision rests on (:func:`relation_decision`),
    every interval on the ratio scale but computed on log(ratio)."""

    estimate: Estimate  # pooled median, two-level bootstrap interval
    replicate_medians: list[float]
    replicate_intervals: list[Estimate]  # each replicate's own bootstrap
    t_interval: tuple[float, float]  # t interval on the replicates' log medians
    decision: Estimate  # bootstrap joined with t, widened by the bias
    joined: Estimate  # bootstrap joined with t, before the widening


def relation_decision(
    x: Sequence[float] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray | None,
    bias: float | tuple[float, float],
    n_resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> RelationDecision:
    """One relation's per-round speedups ``x`` (replicate labels
    ``clusters``, None for one invocation) turned into the interval a verdict
    reads, all on log(ratio): the two-level bootstrap interval of the median
    log ratio joined with the t interval on the replicates' median log
    ratios (:func:`decision_interval`) and widened by the interference
    bound ``bias`` (a fraction, or a pair per side: :func:`widen`), with
    the replicates' own medians and intervals beside it.  Everything is
    returned on the ratio scale (exp), so every bound is positive and a
    ratio and its inverse get mirror-image intervals."""
    a = log_ratios(x)
    boot = dict(n_resamples=n_resamples, level=level, seed=seed)
    est = hierarchical_bootstrap_median(a, clusters, **boot)
    if clusters is None:
        meds, ivs = [est.value], [est]
    else:
        c = np.asarray(clusters).ravel()
        meds = list(cluster_medians(a, c))
        ivs = [bootstrap_median(a[c == lab], **boot) for lab in dict.fromkeys(c.tolist())]
    joined = decision_interval(est, meds, level)
    tlo, thi = t_interval(meds, level)
    t_ratio = (math.exp(tlo), math.exp(thi)) if math.isfinite(tlo) else (math.nan, math.nan)
    return RelationDecision(
        exp_estimate(est),
        [math.exp(m) if math.isfinite(m) else math.nan for m in meds],
        [exp_estimate(i) for i in ivs],
        t_ratio,
        widen(exp_estimate(joined), bias),
        exp_estimate(joined),
    )


def _t_abs_cdf(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer ``df`` (Abramowitz and Stegun
    26.7.3-26.7.4: finite sums in cos(theta), theta = atan(t / sqrt(df)))."""
    th = math.atan(t / math.sqrt(df))
    c2 = math.cos(th) ** 2
    if df % 2:  # odd: 2/pi (theta + sin cos (1 + 2/3 cos^2 + ...))
        s, term = 0.0, 1.0
        for k in range(1, (df - 1) // 2 + 1):
            s += term
            term *= c2 * (2 * k) / (2 * k + 1)
        return 2.0 / math.pi * (th + (math.sin(th) * math.cos(th) * s if df > 1 else 0.0))
    s, term = 0.0, 1.0  # even: sin (1 + 1/2 cos^2 + 1.3/(2.4) cos^4 + ...)
    for k in range(1, df // 2 + 1):
        s += term
        term *= c2 * (2 * k - 1) / (2 * k)
    return math.sin(th) * s


def t_quantile(level: float, df: int) -> float:
    """Two-sided Student t critical value: q with P(|T| < q) = ``level`` (bisection on the exact CDF)."""
    if df < 1:
        raise ValueError(f"t quantile needs df >= 1, got {df}")
    lo, hi = 0.0, 1.0
    while _t_abs_cdf(hi, df) < level:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _t_abs_cdf(mid, df) < level else (lo, mid)
    return 0.5 * (lo + hi)


def t_interval(cluster_values: Sequence[float] | np.ndarray, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Student t interval for the mean of R cluster (replicate) medians:
    mean +/- t_{R-1} s / sqrt(R); (NaN, NaN) below 2 finite values.

    With R = 3 independent runner invocations the two-level percentile
    bootstrap resamples only 3 clusters, and under-covers when the drift
    between invocations dominates (it behaves like a z interval with a
    (R - 1) / R variance); the t interval is exact for normal cluster
    medians and is about twice as wide at R = 3."""
    a = _clean(cluster_values)
    r = len(a)
    if r < 2:
        return math.nan, math.nan
    half = t_quantile(level, r - 1) * float(a.std(ddof=1)) / math.sqrt(r)
    m = float(a.mean())
    return m - half, m + half


def decision_interval(
    est: Estimate, cluster_values: Sequence[float] | np.ndarray, level: float = DEFAULT_LEVEL
) -> Estimate:
    """The interval a decision reads: the bootstrap interval ``est`` joined
    with the t interval on the replicates' medians (:func:`t_interval`), so
    it is at least as wide as the wider of the two; ``est`` itself with one
    replicate.

    Joined at every R >= 2, not only at small R: with drift between
    invocations as large as the rounds' own spread, the two-level bootstrap
    alone covered a true ratio in 79-81% of simulated studies at R = 3 and
    86% at R = 5 (tests/analysis/test_analysis_coverage.py); the joined interval
    covers 94-95% at R = 3 and 92-93% at R = 5."""
    vals = _clean(cluster_values)
    if len(vals) < 2 or not math.isfinite(est.lo):
        return est
    tlo, thi = t_interval(vals, level)
    return Estimate(est.value, min(est.lo, tlo), max(est.hi, thi), est.n)


def noise_warnings(
    group_samples: Mapping[str, Sequence[float] | np.ndarray],
    cv_threshold: float = 0.10,
    outlier_share: float = OUTLIER_SHARE,
    min_rel: float = 0.0,
) -> list[str]:
    """Reasons why a point's timings are too noisy to carry a verdict (empty list: none).

    Per group (``group_samples``: its measured makespans): the robust CV
    (1.4826 MAD / median) exceeds ``cv_threshold``, i.e. the bulk of the
    rounds spreads; or more than ``outlier_share`` of the rounds (and more
    than one) are outliers, i.e. the machine interfered repeatedly.  An
    outlier is a MAD outlier that also lies more than ``min_rel`` x median
    from the median: on a quiet machine the MAD is tiny, and deviations
    smaller than the minimum effect cannot change a verdict.  The classic CV is
    reported in the summary but not used here: one round at 10x the median
    sends it past 1 without moving the medians the verdict rests on.
    """
    reasons = []
    for g in sorted(group_samples):
        a = _clean(group_samples[g])
        if len(a) < 3:
            continue
        r = robust_cv(a)
        if math.isfinite(r) and r > cv_threshold:
            reasons.append(f"robust CV of group {g} is {r:.2f} > {cv_threshold:.2f}")
        # more than one outlier, and more than the allowed share: a single
        # outlier in a short run is not a pattern
        med = float(np.median(a))
        n_out = int((mad_outliers(a) & (np.abs(a - med) > min_rel * abs(med))).sum())
        share = n_out / len(a)
        if n_out > max(1.0, outlier_share * len(a)):
            reasons.append(f"{share:.0%} of group {g}'s rounds are outliers (> {outlier_share:.0%})")
    return reasons
