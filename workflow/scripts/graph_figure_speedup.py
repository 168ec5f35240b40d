"""graph_figure_speedup: D/A, D/B, D/C per graph point with intervals."""

import pandas as pd

from hxfuse import intermediate
from hxfuse.graph import plots as graphplots

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    graphplots.speedup_figure(pd.read_csv(sm.input.summary), sm.params.min_effect, [sm.output.pdf, sm.output.png])
