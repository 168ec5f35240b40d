"""run: one sweep point under a timeout; see hxfuse.pipeline.run_point."""
import sys

from hxfuse.pipeline import run_point

sm = snakemake  # noqa: F821
sys.exit(run_point(
    runner=sm.input.runner, args=sm.params.args, prefix=sm.params.prefix,
    timeout_s=sm.resources.timeout_s, config=sm.config,
    point=(sm.wildcards.target, sm.wildcards.sweep, sm.wildcards.workload, sm.wildcards.point),
    out_jsonl=sm.output.jsonl, out_provenance=sm.output.provenance, out_npy=sm.output.npy,
    log=sm.log[0],
))
