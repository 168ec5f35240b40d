"""timeline: Perfetto / Chrome trace JSON of one point (hxfuse.timeline)."""
import json
import sys

from hxfuse import timeline

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
w = snakemake.wildcards  # noqa: F821
with open(snakemake.input.check) as fh:  # noqa: F821
    check = json.load(fh)
trace = timeline.write_perfetto(
    snakemake.input.jsonl, snakemake.output.trace,  # noqa: F821
    info={"point_id": f"{w.target}/{w.sweep}/{w.workload}/{w.point}",
          "check_status": check.get("status")})
n = sum(1 for e in trace["traceEvents"] if e["ph"] == "X")
print(f"{snakemake.output.trace}: {n} slices", file=sys.stderr)  # noqa: F821
