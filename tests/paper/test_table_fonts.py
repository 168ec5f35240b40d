"""Every table of the paper is set at the body font (10 pt) and never scaled.

A table squeezed to text width by ``\\resizebox`` or set in ``\\footnotesize``
prints digits a reader cannot read at print size; one too wide for the page
is split, turned sideways (rotating's ``sidewaystable``) or given fewer
columns instead.  The paper's LaTeX comes from the Jinja2 templates under
workflow/templates/ and from the generators in hxfuse/ that write LaTeX
directly (hxfuse/paper/, the graph and serve tables): each is read as text
here, so a font switch added anywhere fails this test without building the
paper (tests/paper/test_paper_pdf.py builds it and checks that nothing
overflows the page)."""

from __future__ import annotations

import re

import pytest

from pipeline_util import REPO

# LaTeX that sets text below the body font or scales a box (and so its text)
SHRINKING = re.compile(r"\\(?:resizebox|scalebox|small|footnotesize|scriptsize|tiny)(?![A-Za-z])")

# everything that writes the paper's LaTeX: the templates, the main files,
# and the Python generators that emit LaTeX strings themselves
SOURCES = sorted(
    [*(REPO / "workflow" / "templates").glob("*.tex.j2"), *(REPO / "paper").glob("*.tex")]
    + [p for p in (REPO / "hxfuse").rglob("*.py") if any(k in p.read_text() for k in (r"\begin{", r"\item"))]
)


def test_the_sources_are_found():
    names = {p.name for p in SOURCES}
    # the premise: the files that hold the paper's tables are among those read
    assert {"results_table.tex.j2", "evidence_table.tex.j2", "graph_table.tex.j2", "sections.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_text_below_the_body_font(path):
    hits = [
        f"{path.relative_to(REPO)}:{i}: {line.strip()}"
        for i, line in enumerate(path.read_text().splitlines(), start=1)
        if SHRINKING.search(line)
    ]
    assert not hits, "set at the body font, never scaled:\n" + "\n".join(hits)


def test_the_pattern_catches_what_it_must():
    # a known answer each way: the pattern finds the switches, not words that contain them
    assert SHRINKING.search(r"\centering\small") and SHRINKING.search(r"\resizebox{\linewidth}{!}{%")
    assert SHRINKING.search(r"\begin{itemize}\footnotesize")
    assert not SHRINKING.search(r"\smallskip") and not SHRINKING.search("a small font")
