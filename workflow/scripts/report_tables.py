"""report tables: verdict and environment pages of one target (hxfuse.sweep.report)."""

import sys

from hxfuse.sweep import report

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
t = snakemake.wildcards.target  # noqa: F821
report.write_verdicts(
    snakemake.input.summary,
    snakemake.output.verdicts,  # noqa: F821
    snakemake.output.verdicts_csv,
    snakemake.input.summary_json,  # noqa: F821
    title=f"Verdicts ({t})",
)
report.write_environment(
    snakemake.input.summary,
    snakemake.input.summary_json,  # noqa: F821
    snakemake.output.environment,  # noqa: F821
    title=f"Environment and provenance ({t})",
)
