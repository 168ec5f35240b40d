"""Reading the results: the plan's section 6 table, applied mechanically.

Inputs are paired speedups with intervals (speedup of X over Y = T_Y / T_X,
per round, see :mod:`hxfuse.stats`) and ``min_effect`` m (default 0.03).  A
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

A point whose noise or environment warnings fire, or whose replicates
disagree in direction, is ``inconclusive`` with its reasons and gets no table
row.  Otherwise every matching row is returned and the most specific one is
the primary verdict, in the order of ``PRIORITY``; ``D ~ B`` is added to the
verdict text whenever it holds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .stats import Estimate

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
            "internal multi-engine orchestration has net benefit",
            "locate work-ratio, bandwidth and buffer limits",
        ),
        Row(
            "D<A,D~B",
            "D < A and D ~ B",
            "complementarity is real, existing concurrency already captures most of it",
            "find placement/quota/sync granularity still to improve",
        ),
        Row(
            "D<B,D<C",
            "D < B and D < C",
            "fused internal scheduling adds control or overhead advantage",
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

# Most specific first: D beating both baselines says more than D beating C.
PRIORITY = ("D<B,D<C", "D<C+overlap", "overlap,D no faster", "D<A,D~B", "C<A,D~C", "no-difference")


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

    @classmethod
    def of(cls, row: Row, **kw) -> "Verdict":
        return cls(row.key, row.result, row.conclusion, row.next_step, **kw)


Interval = Estimate | tuple[float, float, float] | None


def _bounds(speedup: Interval) -> tuple[float, float] | None:
    if speedup is None:
        return None
    if isinstance(speedup, Estimate):
        lo, hi = speedup.lo, speedup.hi
    else:
        _, lo, hi = speedup
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return float(lo), float(hi)


def relation(speedup: Interval, min_effect: float = DEFAULT_MIN_EFFECT) -> str | None:
    """'<' (X faster than Y by at least m), '>' (slower by at least m), '~'
    (interval inside 1 +/- m: no difference), '?' (undetermined), None (not measured).

    ``speedup`` is the speedup of X over Y (T_Y / T_X) as an Estimate or a
    (value, lo, hi) tuple.
    """
    b = _bounds(speedup)
    if b is None:
        return None
    lo, hi = b
    if lo > 1.0 + min_effect:
        return "<"
    if hi < 1.0 - min_effect:
        return ">"
    if lo >= 1.0 - min_effect and hi <= 1.0 + min_effect:
        return "~"
    return "?"


def point_relation(value: float, min_effect: float = DEFAULT_MIN_EFFECT) -> str | None:
    """Direction of one replicate's median speedup: '<', '>' or '~' (within 1 +/- m)."""
    if value is None or not math.isfinite(value):
        return None
    if value > 1.0 + min_effect:
        return "<"
    if value < 1.0 - min_effect:
        return ">"
    return "~"


def replicate_disagreements(
    replicate_speedups: Mapping[str, Sequence[float]], min_effect: float = DEFAULT_MIN_EFFECT
) -> list[str]:
    """Relations on which independent runner invocations point in opposite
    directions (one replicate's median speedup above 1 + m, another's below
    1 - m), as readable reasons."""
    out = []
    for key in RELATIONS:
        vals = [v for v in replicate_speedups.get(key, ()) if v is not None and math.isfinite(v)]
        dirs = {point_relation(v, min_effect) for v in vals}
        if "<" in dirs and ">" in dirs:
            x, y = key.split("/")
            txt = ", ".join(f"{v:.3f}" for v in vals)
            out.append(f"replicates disagree on {x} vs {y} (median speedups {txt})")
    return out


def classify(
    speedups: Mapping[str, Interval],
    parallelism: Interval = None,
    wall_overlap: float | None = None,
    noise: Sequence[str] = (),
    min_effect: float = DEFAULT_MIN_EFFECT,
    overlap_threshold: float = DEFAULT_OVERLAP_THRESHOLD,
    replicate_speedups: Mapping[str, Sequence[float]] | None = None,
    disturbances: Sequence[str] = (),
) -> Verdict:
    """Classify one point x workload.

    ``speedups`` maps "D/A", "D/B", "D/C", "C/A" (X/Y: speedup of X over Y)
    to intervals; a missing key (e.g. no B path on a backend) makes every row
    that needs it not applicable.  ``parallelism`` is D's parallelism
    interval (progress evidence); ``wall_overlap`` D's median largest pairwise
    wall-span overlap.  ``noise`` (the point's noise warnings),
    ``disturbances`` (environment warnings that mean other work interfered)
    and replicates that disagree in direction (``replicate_speedups``: each
    relation's per-replicate median speedups) make the point inconclusive.
    """
    rel = {k: relation(speedups.get(k), min_effect) for k in RELATIONS}
    pb = _bounds(parallelism)
    progress = None if pb is None else pb[0] > 1.0 + min_effect
    wall = None
    if wall_overlap is not None and math.isfinite(wall_overlap):
        wall = wall_overlap >= overlap_threshold
    d_equiv_b = rel["D/B"] == "~"
    reasons = (*noise, *disturbances, *replicate_disagreements(replicate_speedups or {}, min_effect))
    common = dict(
        relations=rel, progress_overlap=progress, wall_overlap=wall, d_equiv_b=d_equiv_b, reasons=tuple(reasons)
    )
    if reasons:
        return Verdict.of(INCONCLUSIVE, **common)

    def no_faster(r: str | None) -> bool:
        return r in ("~", ">")

    measured = [r for r in rel.values() if r is not None]
    holds = {
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
    matches = tuple(k for k in PRIORITY if holds[k])
    common["matches"] = matches
    if matches:
        v = Verdict.of(ROWS[matches[0]], **common)
        if d_equiv_b and "D~B" not in matches[0] and matches[0] != "no-difference":
            v = Verdict(v.key, v.result + "; D ~ B", v.conclusion, v.next_step, **common)
        return v
    if "?" in measured:
        undetermined = [k for k, r in rel.items() if r == "?"]
        common["reasons"] = (f"{', '.join(undetermined)} within noise of the +/-{min_effect:g} band",)
        return Verdict.of(UNDETERMINED, **common)
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
