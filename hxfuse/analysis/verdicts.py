"""Reading the results: the plan's section 6 table, applied mechanically.

Inputs are paired speedups with intervals (speedup of X over Y = T_Y / T_X,
per round, see :mod:`hxfuse.analysis.stats`) and ``min_effect`` m (default 0.03).  A
relation between two groups counts only when the data show an effect of at
least m, or show that there is none:

* ``X < Y``  (X faster)  the whole interval lies above 1 + m;
* ``X > Y``  (X slower)  the whole interval lies below 1 - m;
* ``X ~ Y``  (no difference) the whole interval lies inside [1 - m, 1 + m];
* ``X ? Y``  (undetermined) the interval crosses 1 - m or 1 + m: the data
  can neither show an effect of m nor rule it out.

Overlap, two kinds:

* *progress overlap* (``progress_overlap``): engines made useful progress at
  once.  The interval of D's ``parallelism`` (task CPU time / makespan) lies
  above 1 + m.  Two threads taking turns on one core give parallelism ~1
  however much their wall-clock spans overlap, so this evidence can fail.
* *wall overlap* (``wall_overlap``): D's median largest pairwise overlap of
  the engines' wall-clock busy spans reaches ``overlap_threshold``.  It only
  says the spans overlap (time sharing counts), and is used where the table
  says "engines overlap" in the weak sense of row 5.

Noise does not veto a point: each relation is decided on its *decision
interval*, the bootstrap interval joined with a t interval on the
replicates' medians and widened by the worst-case shift that interference
could have caused (:func:`hxfuse.analysis.stats.decision_interval`,
:func:`hxfuse.analysis.stats.widen`); a relation whose decision interval crosses an
edge of the band is ``?``.  Every matching row is returned; the first in the
order of ``PRIORITY`` is the primary verdict, and only the relations it
reads (``READS``) can withhold it: replicates whose own intervals lie on
opposite sides of the band on one of them make the point ``inconclusive``.
B is in the headline: D ~ B with D < A leads ("existing concurrency already
covers the main opportunity"), the C -> D result stated beside it; a row
that does not read D/B says how D stood against B.  Environment
disturbances are judged per replicate by the caller
(:mod:`hxfuse.analysis.aggregate`), which passes here only what withholds the point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from hxfuse.analysis.stats import Estimate

DEFAULT_OVERLAP_THRESHOLD = 0.10
DEFAULT_MIN_EFFECT = 0.03
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
            "internal multi-engine orchestration has net benefit over the fused serial entry C",
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
    "inconclusive (effect below resolution)",
    "an interval crosses the minimum-effect band: neither an effect nor its absence is shown",
    "add rounds or replicates to narrow the intervals",
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


Interval = Estimate | tuple[float, float, float] | None


def _bounds(speedup: Interval) -> tuple[float, float] | None:
    if speedup is None:
        return None
    if isinstance(speedup, Estimate):
        lo, hi = speedup.lo, speedup.hi
    else:
        _, lo, hi = speedup
    # NaN: not measured; an infinite end (an unbounded interference bound)
    # is a measured interval that crosses every edge
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi):
        return None
    return float(lo), float(hi)


def relation(speedup: Interval, min_effect: float = DEFAULT_MIN_EFFECT) -> str | None:
    """'<' (X faster than Y by at least m), '>' (slower by at least m), '~'
    (interval inside 1 +/- m: no difference), '?' (undetermined), None (not measured).

    ``speedup`` is the speedup of X over Y (T_Y / T_X) as an Estimate or a
    (value, lo, hi) tuple: for a decision, its decision interval (already
    joined with the replicates' t interval and widened by the interference
    bound, :func:`hxfuse.analysis.stats.decision_interval`, :func:`hxfuse.analysis.stats.widen`).
    """
    b = _bounds(speedup)
    if b is None:
        return None
    return side(b, min_effect)


def side(bounds: tuple[float, float], min_effect: float = DEFAULT_MIN_EFFECT) -> str:
    """Where an interval (lo, hi) lies against the band 1 +/- m: '<' above it,
    '>' below it, '~' inside it, '?' across an edge."""
    lo, hi = bounds
    if lo > 1.0 + min_effect:
        return "<"
    if hi < 1.0 - min_effect:
        return ">"
    if lo >= 1.0 - min_effect and hi <= 1.0 + min_effect:
        return "~"
    return "?"


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
    parallelism: Interval, concurrent_progress: Interval, min_effect: float, progress_share: float
) -> bool | None:
    """Whether the timeline shows overlap in the progress sense: the tasks'
    checkpoints show >= 2 of them advancing at once (``concurrent_progress``:
    the interval of D's concurrent-progress share, its lower end above
    ``progress_share``) and, where the platform counts CPU time, D's
    parallelism interval lies above 1 + m.  None when neither is measured."""
    pb, cb = _bounds(parallelism), _bounds(concurrent_progress)
    votes = []
    if pb is not None:
        votes.append(pb[0] > 1.0 + min_effect)
    if cb is not None:
        votes.append(cb[0] > progress_share)
    return all(votes) if votes else None


# D's concurrent-progress share (hxfuse.analysis.metrics) must exceed this for
# progress overlap: a tenth of the shorter task's alone time, the same
# fraction as the wall-overlap threshold.
DEFAULT_PROGRESS_SHARE = 0.10


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


def _headline(row: Row, matches: Sequence[str], rel: Mapping[str, str | None]) -> tuple[str, str]:
    """The primary row's result and conclusion with what is stated beside
    it: the C -> D result under "D < A and D ~ B", and how D stood against B
    under a row that does not read D/B."""
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
    return result, conclusion


def classify(
    speedups: Mapping[str, Interval],
    parallelism: Interval = None,
    wall_overlap: float | None = None,
    min_effect: float = DEFAULT_MIN_EFFECT,
    overlap_threshold: float = DEFAULT_OVERLAP_THRESHOLD,
    replicate_intervals: Mapping[str, Sequence[Interval]] | None = None,
    disturbances: Sequence[str] = (),
    concurrent_progress: Interval = None,
    progress_share: float = DEFAULT_PROGRESS_SHARE,
) -> Verdict:
    """Classify one point x workload.

    ``speedups`` maps "D/A", "D/B", "D/C", "C/A" (X/Y: speedup of X over Y)
    to their decision intervals; a missing key (e.g. no B path on a
    backend) makes every row that needs it not applicable.
    ``parallelism`` is D's parallelism interval and ``concurrent_progress``
    D's concurrent-progress share (progress evidence, :func:`overlap_evidence`);
    ``wall_overlap`` D's median largest pairwise wall-span overlap.
    ``disturbances`` (what withholds the whole point, e.g. every replicate
    ran on a loaded machine) make it inconclusive; replicates whose own
    intervals (``replicate_intervals``: per relation, one interval per
    replicate) lie on opposite sides of the band on a relation the primary
    row reads withhold that row.
    """
    rel = {k: relation(speedups.get(k), min_effect) for k in RELATIONS}
    progress = overlap_evidence(parallelism, concurrent_progress, min_effect, progress_share)
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
        result, conclusion = _headline(row, matches, rel)
        return Verdict(row.key, result, conclusion, row.next_step, **common)
    undetermined = [k for k, r in rel.items() if r == "?"]
    # an open relation whose replicates point both ways: say that, not "noise"
    split = replicate_disagreements(replicate_intervals or {}, min_effect, undetermined)
    if split:
        return Verdict.of(INCONCLUSIVE, reasons=tuple(split), **common)
    if undetermined:
        why = (f"{', '.join(undetermined)} within noise of the +/-{min_effect:g} band",)
        return Verdict.of(UNDETERMINED, reasons=why, **common)
    return Verdict.of(NO_MATCH, **common)


def relations_text(rel: Mapping[str, str | None]) -> str:
    """'D<A D~B D<C C<A' style summary of the measured relations ('?': undetermined)."""
    parts = []
    for k, r in rel.items():
        if r is None:
            continue
        x, y = k.split("/")
        parts.append(f"{x}{r}{y}")
    return " ".join(parts)
