"""external_table: the LaTeX table of D against ONNX Runtime (hxfuse.render.latex)."""

from hxfuse import intermediate
from hxfuse.render.latex import write_external_table

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    write_external_table(sm.input.csv, sm.input.template, sm.output[0])
