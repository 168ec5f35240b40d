"""graph_table: the LaTeX table of the graph points (hxfuse.graph.table)."""

from hxfuse import intermediate
from hxfuse.graph.table import write_table

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    write_table(dict(zip(sm.params.targets, sm.input.summaries)), sm.input.template, sm.output[0], sm.params.min_effect)
