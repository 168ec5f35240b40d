"""aggregate: tidy per-trial table + per-point summary of one target."""
import sys

from hxfuse.pipeline import aggregate_target

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
aggregate_target(
    target=snakemake.wildcards.target,  # noqa: F821
    point_ids=snakemake.params.points,  # noqa: F821
    raws=snakemake.input.raw, checks=snakemake.input.checks,  # noqa: F821
    provenances=snakemake.input.provenance,  # noqa: F821
    config=snakemake.config, analysis=snakemake.params.analysis,  # noqa: F821
    out_trials=snakemake.output.trials, out_summary=snakemake.output.summary,  # noqa: F821
    out_json=snakemake.output.summary_json,  # noqa: F821
)
