"""external / external_full: the per-point comparisons as one table."""

from hxfuse.external.compare import concat_csv

concat_csv(snakemake.input.csvs, snakemake.output.csv)  # noqa: F821
