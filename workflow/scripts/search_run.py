"""search_run: one candidate of a search (hxfuse.runner.runpoint.run_point, as a point's
replicate).  A candidate whose runner fails (timeout, crash, a refused output)
does not stop the search: it is kept as a failed candidate, with the reason,
and never enters a number (hxfuse.search.confirm.mark_failed).  A signal still
stops the job."""

import sys

from hxfuse.runner.runpoint import run_point
from hxfuse.search.confirm import mark_failed

sm = snakemake  # noqa: F821
rc = run_point(
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
)
if 0 < rc < 128:
    rc = mark_failed(sm.params.point, sm.params.args, sm.output.jsonl, sm.output.provenance, sm.output.npy, sm.log[0])
sys.exit(rc)
