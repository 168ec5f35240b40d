"""figure_evidence: early-completion latency, preparation share and scratch
peak against speedup for one timed target (hxfuse.paper.sections.evidence_figure)."""

import pandas as pd

from hxfuse import intermediate
from hxfuse.paper import sections as paper

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    paper.evidence_figure(pd.read_csv(sm.input.summary), [sm.output.pdf, sm.output.png], target=sm.wildcards.target)
