"""Reading the results: the plan's section 6 table, applied mechanically.

The one home of the decision: how a relation between two groups is decided
(:func:`decide_relation`), which rows of the table the relations match
(:func:`classify`) and how a point's replicates are weighed
(:func:`judge_point`).  :mod:`hxfuse.analysis.aggregate` computes the inputs
(per-round paired speedups, replicate labels, the interference bound, the
overlap evidence) and the renderers print what comes out.

A relation X/Y reads the speedup of X over Y (T_Y / T_X, paired per round,
:mod:`hxfuse.analysis.stats`) on the log scale: its interval is the
two-level bootstrap of the median log ratio joined with the t interval on
the replicates' median log ratios and widened by log(1 + b) for the
interference bound b.  With the margin delta = log(1 + m) (m =
``min_effect``, default 0.03):

* ``X < Y``  (X faster)  lo > delta;
* ``X > Y``  (X slower)  hi < -delta;
* ``X ~ Y``  (equivalent) -delta <= lo and hi <= delta: two one-sided
  tests at the margin with the same interval, so "~" has the same power as
  "<" and ">" (each side tested at (1 - level) / 2);
* undetermined (``?``) otherwise, with its reason: too few replicates (the
  bootstrap alone decides but the replicates' t interval spans the margin,
  or fewer clean replicates than ``min_replicates``), machine busy (the
  interval decides until widened by the interference bound, or that bound
  is unbounded), or the interval spans the margin (the effect is near m).

Overlap, two kinds:

* *progress overlap* (``progress_overlap``): at least two tasks each
  advanced at >= the progress threshold of their alone rate at the same
  time for at least the stated minimum time (the lower end of D's
  concurrent-progress interval reaches ``overlap_min_fraction`` of the
  shortest task's alone time).  CPU-time parallelism is occupancy, reported
  beside it, never a veto: launch and wake-up time dilute it at fine
  granularity, and a thread stalled on memory counts as busy.  Where no
  checkpoints exist, parallelism above 1 + m stands in.
* *wall overlap* (``wall_overlap``): D's median largest pairwise overlap of
  the engines' wall-clock busy spans reaches ``overlap_threshold`` (time
  sharing counts too); "engines overlap" of row 5.

Every matching row is returned; the first in the order of ``PRIORITY`` is
the primary verdict, and only the relations it reads (``READS``) can
withhold it: replicates whose own intervals lie on opposite sides of the
band on one of them make the point ``inconclusive``.  B is in the
headline: D ~ B with D < A leads ("existing concurrency already covers the
main opportunity"); a row that does not read D/B says how D stood against
B.  Disturbed replicates (machine loaded, interference in half the trials)
are left out and reported as a sensitivity check (:func:`judge_point`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from hxfuse.analysis.stats import Estimate

DEFAULT_OVERLAP_THRESHOLD = 0.10
DEFAULT_MIN_EFFECT = 0.03
# A relation is decided on at least this many replicates (fewer: "too few
# replicates"), or on all of them when the study runs fewer.
DEFAULT_MIN_REPLICATES = 2
# The relations a verdict reads, as "X/Y": speedup of X over Y.
RELATIONS = ("D/A", "D/B", "D/C", "C/A")


@dataclass(frozen=True)
class Row:
    key: str
    result: str  # the table's "result" column
    conclusion: str  # "supports"
    next_step: str  # "next"


ROWS: dict[str, Row] = {
    r.key: r
    for r in (
        Row(
            "D<C+overlap",
            "D < C and the timeline shows overlap",
            "internal overlap makes D faster than the fused serial entry C (a gain over serial execution only)",
            "locate work-ratio, bandwidth and buffer limits",
        ),
        Row(
            "D<A,D~B",
            "D < A and D ~ B",
            "resource complementarity works; existing concurrency already covers the main opportunity",
            "find placement/quota/sync granularity still to improve",
        ),
        Row(
            "D<B,D<C",
            "D < B and D < C",
            "fusion adds something over existing concurrency: "
            "fused internal scheduling has a control or overhead advantage",
            "ablate quota, sync domain, resource plan",
        ),
        Row(
            "C<A,D~C",
            "C < A and D ~ C",
            "the gain is mostly entry merging, or overlap opportunity is small",
            "analyse wait placement, task profile, shared bottleneck",
        ),
        Row(
            "overlap,D no faster",
            "engines overlap but D is no faster",
            "contention or management cost exceeds the gain",
            "shrink window, change tile, or fall back",
        ),
        Row(
            "no-difference",
            "no difference between the groups",
            "no group differs from another by the minimum effect; there is no overlap gain to attribute",
            "lengthen the shorter tasks or check that the engines can run at once",
        ),
    )
}

INCONCLUSIVE = Row(
    "inconclusive",
    "inconclusive",
    "the measurement cannot carry a conclusion (reasons in the noise/inconclusive columns)",
    "add rounds or replicates, quiet the machine (pin cores, stop other load) or lengthen the tasks",
)
UNDETERMINED = Row(
    "undetermined",
    "undetermined",
    "a relation a row needs is undetermined: neither an effect of the margin nor its absence is shown",
    "see the reason: add replicates, quiet the machine, or lengthen the tasks",
)
MACHINE_BUSY = Row(
    "machine-busy",
    "machine too busy",
    "no clean replicate: other work disturbed every runner invocation of the point",
    "rerun the point on a quiet machine (run.quiet_wait_s, run.max_reruns)",
)
NO_MATCH = Row(
    "no-match",
    "inconclusive (no table row matches)",
    "the intervals separate some groups, but not in a pattern of the section 6 table",
    "inspect the timeline, per-task slowdown and host/device split of this point",
)
EXCLUDED = Row(
    "excluded",
    "excluded (correctness check failed)",
    "no conclusion: the point's outputs are wrong",
    "fix the failing task and rerun the point",
)

EMULATED = Row(
    "emulated",
    "not assessed (emulated)",
    "no conclusion: an emulator's timings are not performance (the point is checked for correctness only)",
    "run the point on the device (target hexagon) or a cycle-accurate simulator",
)

# Most specific first.  Only D < B earns "fusion adds something over existing
# concurrency"; when D ~ B and D < A, what existing concurrency already
# reaches leads, ahead of "D < C with overlap", which then says only what
# the internal overlap adds over the fused serial entry C (stated beside it).
PRIORITY = ("D<B,D<C", "D<A,D~B", "D<C+overlap", "overlap,D no faster", "C<A,D~C", "no-difference")

# The relations each row reads: only these can withhold the row (replicates
# that disagree on a relation the row does not read say nothing against it).
READS: dict[str, tuple[str, ...]] = {
    "D<B,D<C": ("D/B", "D/C"),
    "D<A,D~B": ("D/A", "D/B"),
    "D<C+overlap": ("D/C",),
    "overlap,D no faster": ("D/C", "D/A"),
    "C<A,D~C": ("C/A", "D/C"),
    "no-difference": RELATIONS,
}

# How D stood against B, said beside a row that does not read D/B.
D_VS_B_TEXT = {
    "<": "D < B",
    "~": "D ~ B",
    ">": "D > B (existing concurrency is faster)",
    "?": "D against B undetermined",
}


@dataclass(frozen=True)
class Verdict:
    key: str
    result: str
    conclusion: str
    next_step: str
    matches: tuple[str, ...] = ()
    relations: Mapping[str, str | None] = field(default_factory=dict)
    progress_overlap: bool | None = None
    wall_overlap: bool | None = None
    d_equiv_b: bool = False
    reasons: tuple[str, ...] = ()
    d_vs_b: str | None = None  # the D/B relation: '<', '~', '>', '?' or None (no B)

    @classmethod
    def of(cls, row: Row, **kw) -> "Verdict":
        return cls(row.key, row.result, row.conclusion, row.next_step, **kw)

    def withheld(self, reasons: Sequence[str]) -> "Verdict":
        """This verdict made inconclusive for ``reasons``, keeping the
        evidence it read (relations, overlap, D against B)."""
        r = INCONCLUSIVE
        return replace(
            self,
            key=r.key,
            result=r.result,
            conclusion=r.conclusion,
            next_step=r.next_step,
            matches=(),
            reasons=tuple(reasons),
        )


@dataclass(frozen=True)
class RelationCall:
    """One relation decided (:func:`decide_relation`): the ratio and its
    decision interval on the ratio scale (computed on the log scale), the
    ingredients, the relation and, when undetermined, why."""

    relation: str | None  # '<', '>', '~', '?' (undetermined), None (not measured)
    value: float
    lo: float
    hi: float
    boot_lo: float = math.nan  # the two-level bootstrap interval alone
    boot_hi: float = math.nan
    t_lo: float = math.nan  # the t interval on the replicates' medians
    t_hi: float = math.nan
    bias: float = math.nan  # the interference bound (fraction), reported
    n_replicates: int = 1
    reason: str = ""  # why undetermined; '' otherwise
    cause: str = ""  # "too few replicates", "machine busy", "spans the margin" or ''
    replicate_medians: tuple[float, ...] = ()
    replicate_intervals: tuple[Estimate, ...] = ()
    n: int = 0


Interval = Estimate | RelationCall | tuple[float, float, float] | None


def _bounds(speedup: Interval) -> tuple[float, float] | None:
    if speedup is None:
        return None
    if isinstance(speedup, (Estimate, RelationCall)):
        lo, hi = speedup.lo, speedup.hi
    else:
        _, lo, hi = speedup
    # NaN: not measured; an infinite end (an unbounded interference bound)
    # is a measured interval that crosses every edge
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return None
    return float(lo), float(hi)


def relation(speedup: Interval, min_effect: float = DEFAULT_MIN_EFFECT) -> str | None:
    """'<' (X faster than Y by at least the margin), '>' (slower), '~'
    (equivalent within the margin), '?' (undetermined), None (not measured).

    ``speedup`` is the speedup of X over Y (T_Y / T_X) as an Estimate, a
    (value, lo, hi) tuple or a :class:`RelationCall` (whose own relation is
    returned: it may be undetermined for a reason the bounds do not show,
    e.g. too few replicates).  For a decision, pass its decision interval
    (:func:`decide_relation`)."""
    if isinstance(speedup, RelationCall):
        return speedup.relation
    b = _bounds(speedup)
    if b is None:
        return None
    return side(b, min_effect)


def side(bounds: tuple[float, float], min_effect: float = DEFAULT_MIN_EFFECT) -> str:
    """Where a ratio interval (lo, hi) lies against the margin on the log
    scale, |log r| <= log(1 + m): '<' above 1 + m, '>' below 1 / (1 + m),
    '~' inside [1 / (1 + m), 1 + m] (both one-sided tests of equivalence
    pass), '?' across an edge."""
    lo, hi = bounds
    up, down = 1.0 + min_effect, 1.0 / (1.0 + min_effect)
    if lo > up:
        return "<"
    if hi < down:
        return ">"
    if lo >= down and hi <= up:
        return "~"
    return "?"


# Reasons an undetermined relation gives, most specific first.
CAUSES = ("too few replicates", "machine busy", "spans the margin")


def decide_relation(
    decision: Any,
    bias: float,
    min_effect: float = DEFAULT_MIN_EFFECT,
    min_replicates: int = 1,
    n_total: int | None = None,
) -> RelationCall:
    """One relation's rule, applied to its interval machinery
    (``decision``: a :class:`hxfuse.analysis.stats.RelationDecision`, every
    interval computed on log(ratio)) and its interference bound ``bias``.

    The relation is :func:`side` of the widened interval.  An undetermined
    one says why: fewer replicates than ``min_replicates`` (of ``n_total``
    run); the bootstrap interval alone would decide but the replicates' t
    interval spans the margin (too few replicates to carry it); the
    unwidened interval would decide but the interference bound widens it
    across the margin, or that bound is unbounded (machine busy, with the
    bound stated, never a silent veto); otherwise the interval spans the
    margin.  An unbounded bias is not applied to the printed interval (it
    would be (0, inf)): the relation is undetermined and the reason says so."""
    est, joined = decision.estimate, decision.joined
    reps = [m for m in decision.replicate_medians if math.isfinite(m)]
    r = max(1, len(reps))
    inf_bias = isinstance(bias, float) and math.isinf(bias)
    shown = joined if inf_bias else decision.decision
    call = dict(
        value=est.value,
        lo=shown.lo,
        hi=shown.hi,
        boot_lo=est.lo,
        boot_hi=est.hi,
        t_lo=decision.t_interval[0],
        t_hi=decision.t_interval[1],
        bias=bias if bias is not None else math.nan,
        n_replicates=r,
        replicate_medians=tuple(decision.replicate_medians),
        replicate_intervals=tuple(decision.replicate_intervals),
        n=est.n,
    )
    if _bounds(shown) is None:
        return RelationCall(None, **call)
    up = 1.0 + min_effect
    band = f"[{1 / up:.3f}, {up:.3f}]"
    if r < min_replicates:
        n_txt = f" of {n_total}" if n_total else ""
        why = f"too few replicates ({r}{n_txt} usable, {min_replicates} needed)"
        return RelationCall("?", reason=why, cause=CAUSES[0], **call)
    rel = side((shown.lo, shown.hi), min_effect)
    if inf_bias:
        why = "machine busy: interference in half its rounds or more, so its median's shift has no bound"
        return RelationCall("?", reason=why, cause=CAUSES[1], **call)
    if rel != "?":
        return RelationCall(rel, **call)
    if r >= 2 and side((est.lo, est.hi), min_effect) != "?" and side((joined.lo, joined.hi), min_effect) == "?":
        why = (
            f"too few replicates ({r}): the t interval on their medians "
            f"[{call['t_lo']:.3f}, {call['t_hi']:.3f}] spans the margin {band}"
        )
        return RelationCall("?", reason=why, cause=CAUSES[0], **call)
    if side((joined.lo, joined.hi), min_effect) != "?":
        why = (
            f"machine busy: interference could shift its median by up to {bias:.1%}, "
            f"which widens [{joined.lo:.3f}, {joined.hi:.3f}] across the margin {band}"
        )
        return RelationCall("?", reason=why, cause=CAUSES[1], **call)
    why = f"interval [{shown.lo:.3f}, {shown.hi:.3f}] spans the margin {band}"
    return RelationCall("?", reason=why, cause=CAUSES[2], **call)


# The words of the band's sides, as the graph summary and the paper read an
# interval.
SIDE_WORDS = {"<": "faster", ">": "slower", "~": "no difference", "?": "undetermined"}


def side_word(lo: float, hi: float, min_effect: float = DEFAULT_MIN_EFFECT) -> str:
    """:func:`side` of a speedup interval in words (``SIDE_WORDS``); "none"
    where the interval is not known."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "none"
    return SIDE_WORDS[side((lo, hi), min_effect)]


def replicate_disagreements(
    replicate_intervals: Mapping[str, Sequence[Interval]],
    min_effect: float = DEFAULT_MIN_EFFECT,
    keys: Sequence[str] = RELATIONS,
) -> list[str]:
    """Relations (of ``keys``) on which two independent runner invocations'
    own intervals lie on opposite sides of the band (one wholly above
    1 + m, another wholly below 1 - m), as readable reasons.  Medians on
    opposite sides whose intervals reach into the band are not a
    disagreement: each replicate alone would leave that relation open."""
    out = []
    for key in keys:
        ivs = [b for b in (_bounds(i) for i in replicate_intervals.get(key, ())) if b is not None]
        sides = [side(b, min_effect) for b in ivs]
        if "<" in sides and ">" in sides:
            x, y = key.split("/")
            txt = ", ".join(f"[{lo:.3f}, {hi:.3f}]" for lo, hi in ivs)
            out.append(f"replicates disagree on {x} vs {y} (their own intervals {txt} lie on both sides of the band)")
    return out


def overlap_evidence(
    parallelism: Interval,
    concurrent_progress_ns: Interval,
    min_effect: float = DEFAULT_MIN_EFFECT,
    min_time_ns: float = math.nan,
) -> bool | None:
    """Whether the timeline shows overlap in the progress sense.

    From the checkpoints where the runner records them: the lower end of
    D's ``concurrent_progress_ns`` interval (time during which at least two
    tasks each advanced at >= the progress threshold of their alone rate)
    reaches ``min_time_ns`` (the stated minimum time: a fraction
    ``DEFAULT_OVERLAP_MIN_FRACTION`` of the shortest task's alone time).
    CPU-time parallelism is occupancy and does not veto it; it stands in
    (its interval above 1 + m) only where no checkpoints exist.  None when
    neither is measured."""
    cb = _bounds(concurrent_progress_ns)
    if cb is not None and math.isfinite(min_time_ns) and min_time_ns > 0:
        return cb[0] >= min_time_ns
    pb = _bounds(parallelism)
    if pb is not None:
        return pb[0] > 1.0 + min_effect
    return None


# The stated minimum time of progress overlap, as a fraction of the shortest
# task's alone time: the same fraction as the wall-overlap threshold.
DEFAULT_OVERLAP_MIN_FRACTION = 0.10
DEFAULT_PROGRESS_SHARE = DEFAULT_OVERLAP_MIN_FRACTION  # the former name


def _holds(rel: Mapping[str, str | None], progress: bool | None, wall: bool | None) -> dict[str, bool]:
    """Which rows of the table the relations match."""

    def no_faster(r: str | None) -> bool:
        return r in ("~", ">")

    measured = [r for r in rel.values() if r is not None]
    return {
        "D<C+overlap": rel["D/C"] == "<" and progress is True,
        "D<A,D~B": rel["D/A"] == "<" and rel["D/B"] == "~",
        "D<B,D<C": rel["D/B"] == "<" and rel["D/C"] == "<",
        "C<A,D~C": rel["C/A"] == "<" and rel["D/C"] == "~",
        # Spans overlap (in the weak, wall-clock sense) yet D is no faster
        # than the same tasks run serially, through the fused entry with the
        # barrier on (C) or the backend's serial path (A).
        "overlap,D no faster": wall is True and no_faster(rel["D/C"]) and (rel["D/A"] is None or no_faster(rel["D/A"])),
        "no-difference": bool(measured) and all(r == "~" for r in measured),
    }


def _headline(row: Row, matches: Sequence[str], rel: Mapping[str, str | None], d_b_cause: str = "") -> tuple[str, str]:
    """The primary row's result and conclusion with what is stated beside
    it: the C -> D result under "D < A and D ~ B", and how D stood against B
    under a row that does not read D/B (when undetermined, with its cause
    ``d_b_cause``, one of :data:`CAUSES`: what would settle it differs)."""
    result, conclusion = row.result, row.conclusion
    if row.key == "D<A,D~B" and "D<C+overlap" in matches:
        c = ROWS["D<C+overlap"]
        result += f"; beside it: {c.result}"
        conclusion += f"; beside it: {c.conclusion}"
    elif row.key == "D<A,D~B" and rel.get("D/C") is not None:
        # the C -> D result, whatever it is, beside the headline
        result += "; C -> D: " + ("D against C undetermined" if rel["D/C"] == "?" else f"D {rel['D/C']} C")
    if "D/B" not in READS.get(row.key, ()) and rel.get("D/B") == "~":
        # D ~ B leads even where D against A is open: existing concurrency
        # reaches what D reaches, whatever D adds over C
        result = f"D ~ B; {result}"
        conclusion = f"existing concurrency (B) reaches what D reaches; {conclusion}"
    elif "D/B" not in READS.get(row.key, ()) and rel.get("D/B") is not None:
        result += f"; {D_VS_B_TEXT[rel['D/B']]}"
        if rel["D/B"] == "?" and d_b_cause:
            result += f" ({d_b_cause})"
    return result, conclusion


def _cause(call: Interval) -> str:
    """Why an undetermined relation is open, one of :data:`CAUSES` (a bare
    interval gives no other reason than its span)."""
    return call.cause if isinstance(call, RelationCall) and call.cause else CAUSES[2]


def classify(
    speedups: Mapping[str, Interval],
    parallelism: Interval = None,
    wall_overlap: float | None = None,
    min_effect: float = DEFAULT_MIN_EFFECT,
    overlap_threshold: float = DEFAULT_OVERLAP_THRESHOLD,
    replicate_intervals: Mapping[str, Sequence[Interval]] | None = None,
    disturbances: Sequence[str] = (),
    concurrent_progress: Interval = None,
    min_time_ns: float = math.nan,
) -> Verdict:
    """Classify one point x workload.

    ``speedups`` maps "D/A", "D/B", "D/C", "C/A" (X/Y: speedup of X over Y)
    to their decisions (:class:`RelationCall` from :func:`decide_relation`,
    or bare decision intervals); a missing key (e.g. no B path on a
    backend) makes every row that needs it not applicable.
    ``concurrent_progress`` is the interval of D's concurrent-progress time
    (ns) and ``min_time_ns`` the stated minimum time, ``parallelism`` D's
    CPU-time parallelism (a stand-in only without checkpoints;
    :func:`overlap_evidence`); ``wall_overlap`` D's median largest pairwise
    wall-span overlap.  ``disturbances`` (what withholds the whole point)
    make it inconclusive; replicates whose own intervals
    (``replicate_intervals``: per relation, one interval per replicate; taken
    from the RelationCalls when not given) lie on opposite sides of the band
    on a relation the primary row reads withhold that row.  An undetermined
    point names the cause of each open relation.
    """
    rel = {k: relation(speedups.get(k), min_effect) for k in RELATIONS}
    if replicate_intervals is None:
        replicate_intervals = {
            k: list(c.replicate_intervals) for k, c in speedups.items() if isinstance(c, RelationCall)
        }
    progress = overlap_evidence(parallelism, concurrent_progress, min_effect, min_time_ns)
    wall = None
    if wall_overlap is not None and math.isfinite(wall_overlap):
        wall = wall_overlap >= overlap_threshold
    common = dict(
        relations=rel, progress_overlap=progress, wall_overlap=wall, d_equiv_b=rel["D/B"] == "~", d_vs_b=rel["D/B"]
    )
    if disturbances:
        return Verdict.of(INCONCLUSIVE, reasons=tuple(disturbances), **common)
    holds = _holds(rel, progress, wall)
    matches = tuple(k for k in PRIORITY if holds[k])
    common["matches"] = matches
    if matches:
        split = replicate_disagreements(replicate_intervals or {}, min_effect, READS[matches[0]])
        if split:
            return Verdict.of(INCONCLUSIVE, reasons=tuple(split), **common)
        row = ROWS[matches[0]]
        result, conclusion = _headline(row, matches, rel, _cause(speedups.get("D/B")))
        return Verdict(row.key, result, conclusion, row.next_step, **common)
    undetermined = [k for k, r in rel.items() if r == "?"]
    # an open relation whose replicates point both ways: say that
    split = replicate_disagreements(replicate_intervals or {}, min_effect, undetermined)
    if split:
        return Verdict.of(INCONCLUSIVE, reasons=tuple(split), **common)
    if undetermined:
        whys, causes = [], []
        for k in undetermined:
            c = speedups.get(k)
            why = c.reason if isinstance(c, RelationCall) and c.reason else _span_reason(c, min_effect)
            cause = _cause(c)
            whys.append(f"{k}: {why}")
            causes.append(cause)
        named = [c for c in CAUSES if c in causes]
        row = UNDETERMINED
        return Verdict(
            row.key,
            f"{row.result} ({', '.join(named)})",
            row.conclusion,
            row.next_step,
            reasons=tuple(whys),
            **common,
        )
    return Verdict.of(NO_MATCH, **common)


def _span_reason(speedup: Interval, min_effect: float) -> str:
    b = _bounds(speedup)
    up = 1.0 + min_effect
    iv = f"[{b[0]:.3f}, {b[1]:.3f}] " if b else ""
    return f"interval {iv}spans the margin [{1 / up:.3f}, {up:.3f}]"


def judge_point(
    decide: Callable[[Sequence[Any] | None], Verdict],
    replicates: Sequence[Any],
    disturbed: Mapping[Any, Sequence[str]],
) -> tuple[Verdict, str, str]:
    """A point's verdict on its clean replicates, with the disturbed ones
    as a sensitivity check.

    ``decide(keep)`` classifies the point on the replicates ``keep`` (None:
    all of them); ``disturbed`` maps each replicate whose machine was
    disturbed (loaded before or after, too few free cores, a device
    fallback, interference in half its trials) to its findings.  Without
    disturbed replicates the verdict is on all of them.  With some, it is
    decided on the clean ones and the verdict with every replicate is
    reported beside it (never used to withhold it).  With no clean one, the
    point is "machine too busy: k of n replicates disturbed".  Returns the
    verdict, the text of what was left out and the sensitivity text."""
    n = len(replicates)
    if not disturbed:
        return decide(None), "", ""
    why = [t if r is None else f"{_labels([r])}: {t}" for r, ts in disturbed.items() for t in ts]
    clean = [r for r in replicates if r not in disturbed]
    v_all = decide(None)
    sens = f"with the disturbed {_labels(disturbed)}: {v_all.key}"
    if not clean:
        k = len(disturbed)
        # other work on the machine ("machine too busy"), or a run that
        # measured something else (a device fallback, a drifted clock)
        busy = all(t.startswith(BUSY_FINDINGS) for ts in disturbed.values() for t in ts)
        head = MACHINE_BUSY.result if busy else "no clean replicate"
        v = replace(
            v_all,
            key=MACHINE_BUSY.key,
            result=f"{head}: {k} of {max(n, k)} replicates disturbed",
            conclusion=MACHINE_BUSY.conclusion,
            next_step=MACHINE_BUSY.next_step,
            matches=(),
            reasons=tuple(why),
        )
        return v, "", sens
    v_clean = decide(clean)
    left = f"{_labels(disturbed)} left out: " + "; ".join(why)
    same = "same row" if v_clean.key == v_all.key else f"differs from {v_clean.key} on the clean ones"
    return v_clean, left, f"{sens} ({same})"


# The findings (hxfuse.analysis.environment, hxfuse.analysis.aggregate) that
# mean other work shared the machine.
BUSY_FINDINGS = ("loaded before", "loaded after", "fewer free cores", "interference seen", "the hypervisor took")


def _labels(reps: Sequence[Any] | Mapping[Any, Any]) -> str:
    """'replicate 2' / 'replicates 0, 2' ('the run' for a table without replicates)."""
    r = [str(x) for x in reps if x is not None]
    if not r:
        return "the run"
    return ("replicate " if len(r) == 1 else "replicates ") + ", ".join(r)


def relations_text(rel: Mapping[str, str | None]) -> str:
    """'D<A D~B D<C C<A' style summary of the measured relations ('?': undetermined)."""
    parts = []
    for k, r in rel.items():
        if r is None:
            continue
        x, y = k.split("/")
        parts.append(f"{x}{r}{y}")
    return " ".join(parts)
