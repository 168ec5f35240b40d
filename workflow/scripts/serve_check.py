"""serve_check: numpy check of one hxserve run (hxfuse.serve.check).  Fails the
job, loudly, on any wrong request: no statistic is computed from it."""

import json
import sys

from hxfuse import intermediate
from hxfuse.serve.check import check_run

sm = snakemake  # noqa: F821
# the raw output is the check's to judge (a bad one fails it, with the reason)
with intermediate.job(sm, unchecked=["jsonl"]):
    res = check_run(
        sm.input.jsonl,
        sm.input.npy,
        sm.input.trace,
        rtol=sm.params.rtol,
        atol=sm.params.atol,
        provenance=sm.input.provenance,
    )
res["point"], res["replicate"] = sm.wildcards.spoint, int(sm.wildcards.rep)
print(json.dumps(res, indent=1, sort_keys=True), file=sys.stderr)
if not res["ok"]:
    msg = f"hxfuse: serve point {res['point']}/rep{res['replicate']} FAILED its check:\n  " + "\n  ".join(
        res["reasons"]
    )
    print(msg, file=sys.stderr)
    print(msg, file=sys.__stderr__)
    sys.exit(1)
with open(sm.output[0], "w") as fh:
    json.dump(res, fh, indent=1, sort_keys=True)
