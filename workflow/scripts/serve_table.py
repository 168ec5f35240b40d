"""serve_table: LaTeX rows of the serve summary (hxfuse.serve.table)."""

import sys

import pandas as pd

from hxfuse.serve.table import serve_table

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
with open(sm.output[0], "w") as fh:
    fh.write(serve_table(pd.read_csv(sm.input.summary), sm.input.template))
