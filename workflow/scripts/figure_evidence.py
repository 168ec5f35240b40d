"""figure_evidence: the evidence figures of one timed target, printed at the
paper's text width (hxfuse.render.evidence): early completion and scratch
peak against speedup; per point, preparation share, D's parallelism, wall
overlap, host/device split and run share."""

import pandas as pd

from hxfuse import intermediate
from hxfuse.paper import sections as paper

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    paper.evidence_figure(
        pd.read_csv(sm.input.summary),
        [sm.output.pdf, sm.output.png],
        target=sm.wildcards.target,
        out_points=[sm.output.points_pdf, sm.output.points_png],
    )
