"""aggregate: tidy per-trial table + per-point summary of one target."""

from hxfuse import intermediate
from hxfuse.sweep.pipeline import aggregate_target

sm = snakemake  # noqa: F821
# the raw files are judged against their sidecars' SHA-256 (refused, named)
with intermediate.job(sm, unchecked=["raw"]):
    aggregate_target(
        target=sm.wildcards.target,
        points=sm.params.points,
        raws=sm.input.raw,
        checks=sm.input.checks,
        provenances=sm.input.provenance,
        # the .npy files are the check's (it compared their SHA-256), deleted after it
        npys=None,
        analysis=sm.params.analysis,
        tolerance=sm.params.tolerance,
        config_hash=sm.params.config_hash,
        target_info=sm.params.target_info,
        out_trials=sm.output.trials,
        out_summary=sm.output.summary,
        out_json=sm.output.summary_json,
    )
