"""graph_table: the LaTeX table of the graph points (hxfuse.graph.table)."""

import sys

from hxfuse.graph.table import write_table

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
write_table(dict(zip(sm.params.targets, sm.input.summaries)), sm.input.template, sm.output[0], sm.params.min_effect)
