"""The plan's questions answered in sentences generated from the verdicts.

Reads the ``verdicts`` list of a target's ``summary.json`` (one record per
point x workload, written by the aggregate rule from :mod:`hxfuse.analysis.verdicts`)
and writes, per question, what the data show with intervals and counts.
Nothing here is stronger than a verdict:

* a *verdict* (a row of the reading table) is claimed only for points that
  carry one; points that are ``inconclusive`` (a loaded replicate that
  changes the row, replicates disagreeing), undetermined or unmatched are counted apart and
  named with their reason;
* *interval relations* (X faster / no difference / slower / undetermined,
  each against the minimum effect m) are reported for every point, labelled
  as such, because they are what the results table shows; they are never
  summed into a verdict.

Questions: what does D add over C (internal overlap), over A (the serial
path), over B (existing concurrency), and where does overlap stop paying
(along each swept variable).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from hxfuse.render.latex import tex_escape, verdict_tex
from hxfuse.config.targets import emulated_results

# verdict keys that are not a row of the reading table
NO_ROW = ("inconclusive", "undetermined", "machine-busy", "no-match", "excluded", "emulated")
REL_WORDS = {"<": "faster", "~": "no different", ">": "slower", "?": "undetermined"}
SPEEDUP_COL = {"D/A": "speedup_over_A", "D/B": "speedup_over_B", "D/C": "speedup_over_C"}
# the same ratios end to end: preparation done before timing added to each side
E2E_COL = {"D/A": "speedup_e2e_over_A", "D/B": "speedup_e2e_over_B", "D/C": "speedup_e2e_over_C"}


@dataclass(frozen=True)
class Point:
    rec: Mapping

    @property
    def name(self) -> str:
        return str(self.rec["point_id"])

    @property
    def key(self) -> str:
        return str(self.rec.get("verdict_key") or "")

    @property
    def has_row(self) -> bool:
        return self.key not in NO_ROW and bool(self.key)

    @property
    def relations(self) -> dict[str, str]:
        """'D<A D~B D<C C~A' -> {'D/A': '<', ...}."""
        out = {}
        for part in str(self.rec.get("relations") or "").split():
            for sym in "<~>?":
                if sym in part:
                    x, y = part.split(sym, 1)
                    out[f"{x}/{y}"] = sym
                    break
        return out

    def interval(self, rel: str, e2e: bool = False) -> str:
        """'1.20 [1.10, 1.30]': the median with the decision interval that its
        relation reads (end to end: the bootstrap interval, no relation)."""
        col = (E2E_COL if e2e else SPEEDUP_COL).get(rel)
        v = self.rec.get(col) if col else None
        if not _finite(v):
            return "--"
        # _lo/_hi are the relation's one interval (the decision interval,
        # docs/columns.md); end to end, its bootstrap interval
        lo, hi = self.rec.get(f"{col}_lo"), self.rec.get(f"{col}_hi")
        if _finite(lo) and _finite(hi):
            return f"{float(v):.2f} [{float(lo):.2f}, {float(hi):.2f}]"
        return f"{float(v):.2f}"

    def parallelism(self) -> str:
        v, lo, hi = (self.rec.get(k) for k in ("parallelism", "parallelism_lo", "parallelism_hi"))
        if not _finite(v):
            return "--"
        if _finite(lo) and _finite(hi):
            return f"{float(v):.2f} [{float(lo):.2f}, {float(hi):.2f}]"
        return f"{float(v):.2f}"


def _finite(v) -> bool:
    try:
        return v is not None and math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _tt(s: str) -> str:
    """A point name in typewriter type that may break after each '/': a
    sentence naming eight points (``pressure/mvd/compute``) otherwise runs
    into the margin."""
    return rf"\texttt{{{tex_escape(s)}}}".replace("/", r"/\allowbreak{}")


def _names(points: Sequence[Point], rel: str | None = None, limit: int = 8) -> str:
    """'a (1.20 [1.1, 1.3]), b (...)', at most ``limit`` named, then 'and N more'."""
    parts = [(_tt(p.name) + (f" ({p.interval(rel)})" if rel else "")) for p in points[:limit]]
    if len(points) > limit:
        parts.append(f"and {len(points) - limit} more")
    return ", ".join(parts)


def relation_counts(points: Sequence[Point], rel: str) -> dict[str, list[Point]]:
    out: dict[str, list[Point]] = {s: [] for s in "<~>?"}
    for p in points:
        s = p.relations.get(rel)
        if s in out:
            out[s].append(p)
    return out


def _relation_sentence(points: Sequence[Point], rel: str, m: float) -> str:
    """Counts of one interval relation over all points, labelled as intervals."""
    x, y = rel.split("/")
    c = relation_counts(points, rel)
    n = sum(len(v) for v in c.values())
    if not n:
        return f"No point measured {x} against {y}."
    parts = []
    for sym, word in (
        ("<", f"{x} faster than {y} (interval above 1 + {m:g})"),
        ("~", f"equivalent (interval inside [1/(1 + {m:g}), 1 + {m:g}], two one-sided tests)"),
        (">", f"{x} slower (interval below 1/(1 + {m:g}))"),
        ("?", "undetermined (too few replicates, machine busy, or interval spans the margin)"),
    ):
        if c[sym]:
            with_row = sum(p.has_row for p in c[sym])
            parts.append(f"{word} on {len(c[sym])} of {n} points ({with_row} of them carry a verdict)")
    return (
        f"Interval relations of {x} against {y} over all {n} measured points, "
        f"including those without a verdict: " + "; ".join(parts) + "."
    )


def _end_to_end_sentence(points: Sequence[Point], rel: str) -> str:
    """The end-to-end counterpart of one speedup (preparation included on
    both sides), beside the makespan one; reported, never read as a verdict.
    Empty when the summary predates the end-to-end columns."""
    x, y = rel.split("/")
    both = [
        p
        for p in points
        if _finite(p.rec.get(SPEEDUP_COL[rel])) and _finite(p.rec.get(E2E_COL[rel])) and float(p.rec[E2E_COL[rel]]) > 0
    ]
    if not both:
        return ""
    ms = sorted(float(p.rec[SPEEDUP_COL[rel]]) for p in both)
    ee = sorted(float(p.rec[E2E_COL[rel]]) for p in both)
    # the point where preparation changes the reading most, as the example
    ex = max(both, key=lambda p: abs(math.log(float(p.rec[SPEEDUP_COL[rel]]) / float(p.rec[E2E_COL[rel]]))))
    return (
        f"End to end, with each side's preparation done before timing (M's packing, once per run) added to "
        f"its makespan, {x} over {y} has a median of {_median(ee):.2f} over {_count(len(both))}, against "
        f"{_median(ms):.2f} on the makespan alone (largest change: {_tt(ex.name)}, {ex.interval(rel, e2e=True)} "
        f"end to end against {ex.interval(rel)}); the relations and verdicts read the makespan speedups."
    )


def _count(n: int) -> str:
    return "the one point" if n == 1 else f"the {n} points"


def _median(v: Sequence[float]) -> float:
    n = len(v)
    return (v[n // 2] + v[(n - 1) // 2]) / 2


def _verdict_points_sentence(points: Sequence[Point], rel: str) -> str:
    x, y = rel.split("/")
    rows = [p for p in points if p.has_row]
    if not rows:
        return f"No point carries a verdict, so the data answer nothing about {x} against {y} yet."
    c = relation_counts(rows, rel)
    bits = []
    for sym in "<~>?":
        if c[sym]:
            bits.append(
                f"{x} {REL_WORDS[sym]} than {y} on {len(c[sym])} ({_names(c[sym], rel)})"
                if sym in "<>"
                else f"{REL_WORDS[sym]} on {len(c[sym])} ({_names(c[sym], rel)})"
            )
    return f"Of the {len(rows)} points that carry a verdict: " + "; ".join(bits) + "."


def answers(verdicts: Sequence[Mapping], min_effect: float, target: str = "host", b_note: str = "") -> dict[str, str]:
    """Paragraphs (LaTeX) per question, keyed 'C', 'A', 'B', 'stop', 'inconclusive', 'summary'."""
    pts = [
        Point(v) for v in verdicts if v.get("point_ok", True) and v.get("verdict_key") not in ("excluded", "emulated")
    ]
    m = float(min_effect)
    rows = [p for p in pts if p.has_row]
    prog = [p for p in rows if p.rec.get("progress_overlap") is True]
    out = {}
    out["C"] = " ".join(
        [
            _verdict_points_sentence(pts, "D/C"),
            (
                f"Progress overlap (from the tasks' checkpoints: at least two tasks each advancing at half "
                f"their alone rate or more, together, for at least the stated minimum time, a fraction of the "
                f"shortest one's alone time; CPU-time parallelism is occupancy, shown beside it, and decides "
                f"only where there are no checkpoints) holds on {len(prog)} of those "
                f"{len(rows)} points"
                + (
                    " (parallelism "
                    + ", ".join(f"{_tt(p.name)} {p.parallelism()}" for p in prog[:8])
                    + (f", and {len(prog) - 8} more" if len(prog) > 8 else "")
                    + ")"
                    if prog
                    else ""
                )
                + "."
                if rows
                else ""
            ),
            _relation_sentence(pts, "D/C", m),
            _end_to_end_sentence(pts, "D/C"),
        ]
    ).strip()
    ca = relation_counts(rows, "C/A")
    out["A"] = " ".join(
        [
            _verdict_points_sentence(pts, "D/A"),
            (
                f"Merging the entry alone (C against A) is faster on {len(ca['<'])}, no different on "
                f"{len(ca['~'])}, slower on {len(ca['>'])} and undetermined on {len(ca['?'])} of the "
                f"{len(rows)} points with a verdict."
                if rows
                else ""
            ),
            _relation_sentence(pts, "D/A", m),
            _end_to_end_sentence(pts, "D/A"),
        ]
    ).strip()
    db = relation_counts(pts, "D/B")
    n_b = sum(len(v) for v in db.values())
    out["B"] = " ".join(
        [
            (
                f"D $\\sim$ B (interval inside [1/(1 + {m:g}), 1 + {m:g}]: equivalent by two one-sided tests) "
                f"on {len(db['~'])} of {n_b} points"
                + (f", {sum(p.has_row for p in db['~'])} of them with a verdict." if db["~"] else ".")
            )
            if n_b
            else "No point measured D against B.",
            (
                f"D faster than B on {len(db['<'])}"
                + (f" ({_names(db['<'], 'D/B')})" if db["<"] else "")
                + f", slower on {len(db['>'])}"
                + (f" ({_names(db['>'], 'D/B')})" if db[">"] else "")
                + f", undetermined on {len(db['?'])}."
                if n_b
                else ""
            ),
            _verdict_points_sentence(pts, "D/B"),
            _end_to_end_sentence(pts, "D/B"),
            tex_escape(b_note),
        ]
    ).strip()
    out["stop"] = _stop_paragraph(pts, m)
    inc = [p for p in pts if not p.has_row]
    if inc:
        items = [
            rf"\item {_tt(p.name)}: {tex_escape(p.rec.get('verdict') or p.key)}"
            + (f" --- {tex_escape(p.rec.get('inconclusive_reason'))}" if p.rec.get("inconclusive_reason") else "")
            for p in inc
        ]
        out["inconclusive"] = (
            f"{len(inc)} of {len(pts)} points carry no verdict, each with its reason:\n"
            "\\begin{itemize}\n" + "\n".join(items) + "\n\\end{itemize}"
        )
    else:
        out["inconclusive"] = f"All {len(pts)} points carry a verdict."
    keys: dict[str, list[Point]] = {}
    for p in rows:
        keys.setdefault(p.key, []).append(p)
    # the headline leads with D against B: on the host that is what the data
    # carry (existing concurrency reaches or beats what D reaches, or not)
    lead = (
        f"On target {_tt(target)}, D against the backend's own concurrency (B): "
        + ", ".join(
            f"{w} on {len(db[s])}"
            for s, w in (("~", "equivalent"), ("<", "D faster"), (">", "D slower"), ("?", "undetermined"))
            if db[s]
        )
        + f" of {n_b} points. "
        if n_b
        else ""
    )
    out["summary"] = lead + (
        f"{len(rows)} of {len(pts)} points carry a verdict"
        + ((": " + "; ".join(f"{verdict_tex(k)} on {len(v)}" for k, v in keys.items())) if rows else "")
        + f"; {len(pts) - len(rows)} are without one (Section~\\ref{{sec:inconclusive}})."
    )
    return out


def _stop_paragraph(pts: Sequence[Point], m: float) -> str:
    """Along each sweep x workload, in x order: where D/C stops being faster
    or the progress evidence stops."""
    groups: dict[tuple[str, str], list[Point]] = {}
    for p in pts:
        groups.setdefault((str(p.rec.get("sweep")), str(p.rec.get("workload"))), []).append(p)
    sents = []
    for (sweep, wl), ps in groups.items():
        ps = sorted(ps, key=lambda p: float(p.rec.get("x") or 0))
        if len(ps) < 2:
            continue
        seq = ", ".join(
            f"{tex_escape(str(p.rec.get('label') or p.rec.get('point')))} {p.interval('D/C')}{'' if p.has_row else '*'}"
            for p in ps
        )
        paying = [p for p in ps if p.relations.get("D/C") == "<"]
        stops = [p for p in ps if p.relations.get("D/C") != "<"]
        if not stops:
            n_row = sum(p.has_row for p in paying)
            verdict = (
                f"The D/C interval lies above 1 + {m:g} at every point, so the intervals show no point "
                f"in the swept range where overlap stops paying"
                + ("" if n_row == len(ps) else f" ({n_row} of {len(ps)} points carry a verdict)")
            )
        elif not paying:
            verdict = "D is not shown faster than C at any point of the sweep"
        else:
            verdict = "D is not shown faster than C at " + ", ".join(
                f"{_tt(p.name)} ({REL_WORDS.get(p.relations.get('D/C'), 'not measured')})" for p in stops
            )
        no_prog = [p for p in ps if p.rec.get("progress_overlap") is False]
        prog_txt = (
            f"; D shows no progress overlap (its parallelism interval does not exceed 1 + {m:g}, or its tasks' "
            f"checkpoints show no concurrent progress) at " + ", ".join(_tt(p.name) for p in no_prog)
            if no_prog
            else ""
        )
        sents.append(f"\\item Sweep {_tt(sweep)}, workload {_tt(wl)}, D/C in x order: {seq}. {verdict}{prog_txt}.")
    if not sents:
        return "No sweep has two or more points of one workload, so where overlap stops paying is not measured."
    return (
        "Along each swept variable (* marks a point without a verdict: its interval is shown, not read as "
        "a verdict):\n\\begin{itemize}\n" + "\n".join(sents) + "\n\\end{itemize}"
    )


def answers_tex(doc: Mapping, b_note: str = "") -> str:
    """The answers subsection bodies as one LaTeX file (input after a heading
    per question, see paper/main.tex: macros ``\\hxAnswerC`` ...)."""
    if emulated_results(doc.get("target"), doc=doc):
        return (
            "% Generated by hxfuse.paper.answers; do not edit.\n"
            "\\newcommand{\\hxAnswerSummary}{Target "
            + _tt(doc.get("target", "?"))
            + " is emulated: its timings answer no question.}\n"
        )
    if "verdicts" not in doc:
        raise ValueError("summary.json has no 'verdicts' list: not written by the aggregate rule")
    m = float((doc.get("analysis") or {}).get("min_effect", 0.03))
    # a B the transport serialised is a finding of the B answer
    # (hxfuse.analysis.transport; summary.json's group_b_concurrency)
    b_conc = doc.get("group_b_concurrency") or {}
    if b_conc.get("serialised") or b_conc.get("partly_serialised"):
        b_note = f"{b_note} {b_conc['text'][0].upper()}{b_conc['text'][1:]}.".strip()
    a = answers(doc["verdicts"], m, doc.get("target", "host"), b_note)
    names = {
        "C": "hxAnswerC",
        "A": "hxAnswerA",
        "B": "hxAnswerB",
        "stop": "hxAnswerStop",
        "inconclusive": "hxAnswerInconclusive",
        "summary": "hxAnswerSummary",
    }
    lines = ["% Generated by hxfuse.paper.answers (rule `paper_sections`); do not edit."]
    for k, name in names.items():
        lines.append(rf"\newcommand{{\{name}}}{{%" + "\n" + a[k] + "}")
    return "\n".join(lines) + "\n"


def external_sentence(rows: Sequence[Mapping]) -> str:
    """D against ONNX Runtime's own concurrency (B_ort), from external.csv
    rows: relation counts with intervals, loaded points said, and how many
    points got a verdict and which named conditions withheld the others."""
    rows = [r for r in rows if _finite(r.get("speedup_D_over_B_ort"))]
    if not rows:
        return "The external comparison (ONNX Runtime) measured no point."
    c: dict[str, list] = {s: [] for s in "<~>?"}
    for r in rows:
        c.setdefault(str(r.get("speedup_D_over_B_ort_rel")), []).append(r)

    def name(r):
        v, lo, hi = (float(r[f"speedup_D_over_B_ort{k}"]) for k in ("", "_lo", "_hi"))
        return (
            _tt(f"{r.get('sweep', '')}/{r.get('workload', '')}/{r.get('point', '')}")
            + f" ({v:.2f} [{lo:.2f}, {hi:.2f}])"
        )

    word = {"<": "D faster than B\\textsubscript{ort}", ">": "D slower", "~": "no different", "?": "undetermined"}
    parts = [
        f"{word.get(s, s)} on {len(c[s])}" + (f" ({', '.join(name(r) for r in c[s][:6])})" if c[s] else "")
        for s in c
        if c[s]
    ]
    loaded = sum(str(r.get("loaded")).lower() == "true" for r in rows)
    backend = tex_escape(str(rows[0].get("backend") or "ONNX Runtime"))
    # the comparison's gate (hxfuse.external.compare.verdict_gate): a verdict only
    # where the tasks' alone times match and B_ort ran in parallel
    withheld = [str(r.get("verdict_withheld", "none")) for r in rows]
    given = sum(w == "none" for w in withheld)
    named = {n: sum(n in w.split(",") for w in withheld) for n in ("duration_mismatch", "no_parallelism")}
    why = ", ".join(f"{n.replace('_', ' ')} on {k}" for n, k in named.items() if k)
    return (
        f"Against a real backend's concurrency ({backend}: the same tasks as sessions of one intra-op "
        f"thread each, run from their own threads, B\\textsubscript{{ort}}), with ONNX Runtime's task "
        f"sizes scaled so each task alone takes the runner's time, over {len(rows)} points: " + "; ".join(parts) + ". "
        f"The machine was loaded during {loaded} of these {len(rows)} comparisons. A verdict against "
        f"B\\textsubscript{{ort}} is given only where the alone times match within 10\\% and "
        f"B\\textsubscript{{ort}}'s own parallelism shows it ran in parallel: given on {given}"
        + (f", withheld on {len(rows) - given} ({why})" if why else "")
        + "."
    )
