"""Reading the results: the plan's section 6 table, applied mechanically.

Inputs are paired speedups with intervals (speedup of X over Y = T_Y / T_X,
per round, see :mod:`hxfuse.stats`).  A relation between two groups counts
only when the interval excludes 1:

* ``X < Y``  (X faster)  the speedup's interval lies above 1;
* ``X > Y``  (X slower)  it lies below 1;
* ``X ~ Y``  it contains 1 (no difference that the data can show).

"Engines overlap but D slower" reads "slower" as slower than a serial
execution of the same tasks: D's interval against C or against A lies below 1.

"The timeline shows overlap" means the median over D's measured rounds of the
largest pairwise engine overlap (|busy_a ∩ busy_b| / min(|busy_a|, |busy_b|))
reaches ``overlap_threshold``.

Rows are not exclusive (e.g. D < C with overlap and D < A, D ~ B often hold
together); every matching row is returned, and the most specific one is the
primary verdict, in the order of ``PRIORITY``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from .stats import Estimate

DEFAULT_OVERLAP_THRESHOLD = 0.10


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
            "overlap,D slower",
            "engines overlap but D slower",
            "contention or management cost exceeds the gain",
            "shrink window, change tile, or fall back",
        ),
    )
}

INCONCLUSIVE_NOISE = Row(
    "inconclusive",
    "inconclusive (noise)",
    "the measured variation is too high to separate the groups",
    "add rounds, quiet the machine (pin cores, stop other load) or lengthen the tasks",
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
PRIORITY = ("D<B,D<C", "D<C+overlap", "overlap,D slower", "D<A,D~B", "C<A,D~C")


@dataclass(frozen=True)
class Verdict:
    key: str
    result: str
    conclusion: str
    next_step: str
    matches: tuple[str, ...] = ()
    relations: Mapping[str, str] = field(default_factory=dict)
    timeline_overlap: bool | None = None
    noise: tuple[str, ...] = ()

    @classmethod
    def of(cls, row: Row, **kw) -> "Verdict":
        return cls(row.key, row.result, row.conclusion, row.next_step, **kw)


def relation(speedup: Estimate | tuple[float, float, float] | None) -> str | None:
    """'<' (X faster than Y), '>' (slower), '~' (interval contains 1), None (not measured).

    ``speedup`` is the speedup of X over Y (T_Y / T_X) as an Estimate or a
    (value, lo, hi) tuple.
    """
    if speedup is None:
        return None
    if isinstance(speedup, Estimate):
        lo, hi = speedup.lo, speedup.hi
    else:
        _, lo, hi = speedup
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    if lo > 1.0:
        return "<"
    if hi < 1.0:
        return ">"
    return "~"


def classify(
    speedups: Mapping[str, Estimate | tuple[float, float, float] | None],
    overlap_d: float | None,
    noise: Sequence[str] = (),
    overlap_threshold: float = DEFAULT_OVERLAP_THRESHOLD,
) -> Verdict:
    """Classify one point x workload.

    ``speedups`` maps "D/A", "D/B", "D/C", "C/A" (X/Y: speedup of X over Y)
    to intervals; a missing key (e.g. no B path on a backend) makes every row
    that needs it not applicable.  ``overlap_d`` is D's median largest
    pairwise engine overlap.  ``noise`` holds the point's noise warnings; they
    decide the label only when no row matches, because a paired interval that
    excludes 1 is already significant despite the noise.
    """
    rel = {k: relation(speedups.get(k)) for k in ("D/A", "D/B", "D/C", "C/A")}
    overlap = None
    if overlap_d is not None and math.isfinite(overlap_d):
        overlap = overlap_d >= overlap_threshold

    holds = {
        "D<C+overlap": rel["D/C"] == "<" and overlap is True,
        "D<A,D~B": rel["D/A"] == "<" and rel["D/B"] == "~",
        "D<B,D<C": rel["D/B"] == "<" and rel["D/C"] == "<",
        "C<A,D~C": rel["C/A"] == "<" and rel["D/C"] == "~",
        # Slower than running the same tasks serially, either through the
        # fused entry with the barrier on (C) or the backend's serial path
        # (A): the overlap does not pay for itself.
        "overlap,D slower": overlap is True and (rel["D/C"] == ">" or rel["D/A"] == ">"),
    }
    matches = tuple(k for k in PRIORITY if holds[k])
    common = dict(matches=matches, relations=rel, timeline_overlap=overlap, noise=tuple(noise))
    if matches:
        return Verdict.of(ROWS[matches[0]], **common)
    if noise or all(r in (None, "~") for r in rel.values()):
        return Verdict.of(INCONCLUSIVE_NOISE, **common)
    return Verdict.of(NO_MATCH, **common)


def relations_text(rel: Mapping[str, str | None]) -> str:
    """'D<A D~B D<C C<A' style summary of the measured relations."""
    parts = []
    for k, r in rel.items():
        if r is None:
            continue
        x, y = k.split("/")
        parts.append(f"{x}{r}{y}")
    return " ".join(parts)
