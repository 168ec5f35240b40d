"""serve_table: LaTeX rows of the serve summary (hxfuse.serve.table)."""

from pathlib import Path

import pandas as pd

from hxfuse import intermediate
from hxfuse.serve.table import serve_table

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    Path(sm.output[0]).write_text(serve_table(pd.read_csv(sm.input.summary), sm.input.template))
