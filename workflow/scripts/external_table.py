"""external_table: the LaTeX table of D against ONNX Runtime (hxfuse.render.latex)."""

import sys

from hxfuse.render.latex import write_external_table

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
write_external_table(snakemake.input.csv, snakemake.input.template, snakemake.output[0])  # noqa: F821
