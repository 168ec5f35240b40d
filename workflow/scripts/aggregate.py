"""aggregate: tidy per-trial table + per-point summary of one target."""

import sys

from hxfuse.runner.integrity import IntegrityError
from hxfuse.sweep.pipeline import aggregate_target

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
try:
    aggregate_target(
        target=sm.wildcards.target,
        points=sm.params.points,
        raws=sm.input.raw,
        checks=sm.input.checks,
        provenances=sm.input.provenance,
        npys=sm.input.npy,
        analysis=sm.params.analysis,
        tolerance=sm.params.tolerance,
        config_hash=sm.params.config_hash,
        target_info=sm.params.target_info,
        out_trials=sm.output.trials,
        out_summary=sm.output.summary,
        out_json=sm.output.summary_json,
    )
except IntegrityError as exc:
    print(exc, file=sys.stderr)
    print(exc, file=sys.__stderr__)
    sys.exit(1)
