"""external / external_full: the per-point comparisons as one table."""

from hxfuse import intermediate
from hxfuse.external.compare import concat_csv

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    concat_csv(sm.input.csvs, sm.output.csv)
