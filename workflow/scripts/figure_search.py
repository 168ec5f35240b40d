"""figure_search: the candidates' D medians and the confirmation (hxfuse.search.plots)."""

from hxfuse import intermediate
from hxfuse.search import plots as search_plots

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    search_plots.search_figure(sm.input.result, min_effect=sm.params.min_effect, out=[sm.output.pdf, sm.output.png])
