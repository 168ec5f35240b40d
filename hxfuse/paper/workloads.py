"""The generated paper sections of the workloads beyond the sweeps, put
together: the answers' and abstract's macros and the limitations' items of
the task graphs (hxfuse.paper.graph_section), the request stream
(hxfuse.paper.serve_section) and fixed vs searched
(hxfuse.paper.search_section); what they share is hxfuse.paper.prose.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from hxfuse.paper import graph_section, search_section, serve_section
from hxfuse.paper.prose import HEADER


def answers_macros(
    graphs: pd.DataFrame | None, serve: pd.DataFrame | None, searches: Sequence[Mapping], m: float = 0.03
) -> str:
    """workload_answers.tex: the macros of the answers and the abstract."""
    macros = {
        "hxAnswerReady": graph_section.ready_answer(graphs, m),
        "hxAnswerRequests": serve_section.requests_answer(serve),
        "hxAnswerSearch": search_section.search_answer(searches),
        "hxAbstractGraph": (
            graph_section.graph_summary_sentence(graphs, m)
            if graphs is not None
            else "No task graph ran in this build."
        ),
        "hxAbstractServe": serve_section.serve_abstract(serve),
        "hxAbstractSearch": (
            search_section.search_answer(searches) if searches else "Fixed vs searched did not run in this build."
        ),
    }
    return HEADER + "".join(rf"\newcommand{{\{k}}}{{%" + "\n" + v + "}\n" for k, v in macros.items())


def limitation_items(g: pd.DataFrame | None, s: pd.DataFrame | None) -> list[str]:
    """The limitations' items of the graphs and the request stream, those that ran."""
    return [i for i in (graph_section.limitation_item(g), serve_section.limitation_item(s)) if i is not None]
