"""figure_search: the candidates' D medians and the confirmation (hxfuse.search.plots)."""

import sys

from hxfuse.search import plots as search_plots

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
search_plots.search_figure(
    snakemake.input.result,
    min_effect=snakemake.params.min_effect,  # noqa: F821
    out=[snakemake.output.pdf, snakemake.output.png],
)  # noqa: F821
