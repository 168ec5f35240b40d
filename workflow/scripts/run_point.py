"""run (and graph_run, serve_run): one replicate of one point under a timeout;
see hxfuse.runner.runpoint.run_point."""

import sys

from hxfuse.runner.runpoint import run_point

sm = snakemake  # noqa: F821
sys.exit(
    run_point(
        runner=sm.input.runner,
        args=sm.params.args,
        prefix=sm.params.prefix,
        timeout_s=float(sm.resources.timeout_s),
        env=sm.params.env,
        point=sm.params.point,
        out_jsonl=sm.output.jsonl,
        out_provenance=sm.output.provenance,
        out_npy=sm.output.npy,
        log=sm.log[0],
        emulated=sm.params.emulated,
        # the config key a timeout names (the service mode's is serve.timeout_s)
        timeout_setting=sm.params.get("timeout_setting", "run.timeout_s"),
        # the run rule's bounded wait for a quiet machine and reruns of a
        # disturbed replicate (graph and serve runs have neither)
        quiet_wait_s=float(sm.resources.get("quiet_wait_s", 0)),
        max_reruns=int(sm.resources.get("max_reruns", 0)),
        busy_per_core=float(b) if (b := sm.resources.get("busy_per_core")) is not None else None,
        max_steal_share=float(s) if (s := sm.resources.get("max_steal_share")) is not None else None,
    )
)
