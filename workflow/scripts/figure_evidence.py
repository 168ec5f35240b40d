"""figure_evidence: early-completion latency, preparation share and scratch
peak against speedup for one timed target (hxfuse.paper.sections.evidence_figure)."""

import sys

import pandas as pd

from hxfuse.paper import sections as paper

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
try:
    summary = pd.read_csv(snakemake.input.summary)  # noqa: F821
except pd.errors.EmptyDataError:  # no point survived: an empty figure says so
    summary = pd.DataFrame()
paper.evidence_figure(
    summary,
    [snakemake.output.pdf, snakemake.output.png],  # noqa: F821
    target=snakemake.wildcards.target,
)  # noqa: F821
