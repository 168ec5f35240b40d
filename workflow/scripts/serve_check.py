"""serve_check: numpy check of one hxserve run (hxfuse.serve.check).  Fails the
job, loudly, on any wrong request: no statistic is computed from it."""

import json
import sys

from hxfuse.serve.check import check_run

sm = snakemake  # noqa: F821
log = open(sm.log[0], "w")
res = check_run(sm.input.jsonl, sm.input.npy, sm.input.trace, rtol=sm.params.rtol, atol=sm.params.atol)
res["point"], res["replicate"] = sm.wildcards.spoint, int(sm.wildcards.rep)
print(json.dumps(res, indent=1, sort_keys=True), file=log)
if not res["ok"]:
    msg = f"hxfuse: serve point {res['point']}/rep{res['replicate']} FAILED its check:\n  " + "\n  ".join(
        res["reasons"]
    )
    print(msg, file=log)
    sys.exit(msg)
with open(sm.output[0], "w") as fh:
    json.dump(res, fh, indent=1, sort_keys=True)
