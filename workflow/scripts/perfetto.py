"""timeline: Perfetto / Chrome trace JSON of one point (hxfuse.analysis.timeline); the
runner's, or ONNX Runtime's groups for rule ort_perfetto (no check file: the
harness verified its own outputs, its status is the file's end status)."""

import sys

from hxfuse import intermediate
from hxfuse.analysis import timeline
from hxfuse.runner.jsonl import read_records

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    w = sm.wildcards
    if sm.input.get("check"):
        status = intermediate.read_json_object(sm.input.check).get("status")
        point_id = f"{w.target}/{w.sweep}/{w.workload}/{w.point}"
    else:
        status = read_records(sm.input.jsonl).end.get("status")
        point_id = sm.params.point_id
    trace = timeline.write_perfetto(
        sm.input.jsonl, sm.output.trace, info={"point_id": point_id, "check_status": status}
    )
    n = sum(1 for e in trace["traceEvents"] if e["ph"] == "X")
    print(f"{sm.output.trace}: {n} slices", file=sys.stderr)
