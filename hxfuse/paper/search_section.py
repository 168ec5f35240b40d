"""The paper's section on fixed vs searched (:mod:`hxfuse.search.compare`),
its answer sentence.

From ``results/<target>/search/<name>/result.json``, where it ran.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Mapping, Sequence

from hxfuse.paper.prose import HEADER, tex_path, tex_tt
from hxfuse.render.latex import tex_escape


# -{}-: no en-dash ligature in the typewriter font, so the command reads as typed
SEARCH_COMMAND = r"\texttt{snakemake -{}-cores 4 searches -{}-config study=search}"


def _search_verdict(c: Mapping) -> str:
    """The confirmation's verdict; an inconclusive one with how many reasons
    withheld it and the first of them (the table and result.json list all)."""
    reasons = list(c.get("reasons") or [])
    if c.get("verdict") == "inconclusive" and reasons:
        return f"inconclusive, no verdict ({len(reasons)} reason(s), e.g. {tex_escape(reasons[0])})"
    return tex_escape(c.get("verdict_text") or c.get("verdict") or "")


def search_sentence(doc: Mapping) -> str:
    s, c = doc["search"], doc.get("confirmation") or {}
    cost = s["cost"]
    best = s.get("best") or {}
    head = (
        f"Search {tex_tt(s['name'])} on {tex_tt(s['target'])} evaluated {cost['candidates']} of the "
        f"{s['space_size']} configurations of its space ({cost['d_rounds']} measured rounds of D, "
        f"{cost['runner_seconds']:.0f}\\,s of runner time, {cost.get('reference_seconds', 0):.0f}\\,s more for "
        f"the fixed default's reference run)"
    )
    if not best:
        return head + "; no candidate passed its check, so there is no best and no regret."
    reg = c.get("regret") or {}
    pct = lambda v: "--" if v is None else f"{100 * float(v):+.1f}\\%"
    return (
        head
        + f"; the best found is {tex_escape(best.get('label', best.get('id', '')))}"
        + (" (the fixed default itself)" if best.get("is_fixed") else "")
        + f". Re-measured against the fixed default ({tex_escape(s['fixed']['label'])}) in "
        f"{c.get('pairs', '--')} interleaved pairs, the regret is {pct(reg.get('value'))} "
        f"[{pct(reg.get('lo'))}, {pct(reg.get('hi'))}]: {_search_verdict(c)}."
    )


def search_tex(docs: Sequence[Mapping] | None, figures: Mapping[str, str], table: str | None) -> str:
    """The body of the fixed-vs-searched section: the table and a sentence per
    search where searches ran; otherwise one line on how to produce them."""
    out = [HEADER.rstrip()]
    if not docs:
        out.append(
            r"Not run in this build (the searches are not part of \texttt{all}); to produce them:"
            "\n\\begin{quote}" + SEARCH_COMMAND + "\\end{quote}\n"
            r"(the search over its declared space, the confirmation and the table), then build the paper "
            r"with the same \texttt{-{}-config study=search}."
        )
        return "\n".join(out) + "\n"
    out.append(
        r"Table~\ref{tab:search} compares the fixed default with the best of a budgeted search. "
        + " ".join(search_sentence(d) for d in docs)
    )
    if table:
        out.append(rf"\input{{{tex_path(table)}}}")
    for key, f in figures.items():
        out += [
            r"\begin{figure}[tbp]",
            r"\centering",
            rf"\includegraphics[width=\linewidth,height=0.35\textheight,keepaspectratio]{{{tex_path(f)}}}",
            rf"\caption{{Fixed vs searched, {tex_escape(key)}: every candidate's D median with its interval "
            r"(best and fixed default marked), then the confirmation's paired regret.}",
            rf"\label{{fig:search-{re.sub(r'[^A-Za-z0-9]+', '-', key)}}}",
            r"\end{figure}",
        ]
    return "\n".join(out) + "\n"


def search_answer(docs: Sequence[Mapping] | None) -> str:
    if not docs:
        return "Fixed vs searched did not run in this build (" + SEARCH_COMMAND + " produces it)."
    return " ".join(search_sentence(d) for d in docs)


def load_searches(results: Sequence[str | Path]) -> list[dict]:
    return [json.loads(Path(p).read_text()) for p in results]
