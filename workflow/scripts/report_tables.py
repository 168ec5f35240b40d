"""report tables: verdict and environment pages of one target (hxfuse.sweep.report)."""

from hxfuse import intermediate
from hxfuse.sweep import report

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    t = sm.wildcards.target
    report.write_verdicts(
        sm.input.summary,
        sm.output.verdicts,
        sm.output.verdicts_csv,
        sm.input.summary_json,
        title=f"Verdicts ({t})",
    )
    report.write_environment(
        sm.input.summary,
        sm.input.summary_json,
        sm.output.environment,
        title=f"Environment and provenance ({t})",
    )
