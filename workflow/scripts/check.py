"""check: correctness and integrity of one replicate (hxfuse.runner.checks); marks,
never fails, a bad point, and says so on the terminal."""

import json
import sys

from hxfuse.runner.checks import check_point

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
res = check_point(
    sm.input.jsonl, sm.input.npy, rtol=sm.params.rtol, atol=sm.params.atol, provenance=sm.input.provenance
)
res["point"] = "/".join(sm.wildcards[k] for k in ("target", "sweep", "workload", "point"))
res["replicate"] = int(sm.wildcards.rep)
with open(sm.output[0], "w") as fh:
    json.dump(res, fh, indent=1, sort_keys=True)
print(f"{res['point']}/rep{res['replicate']}: {res['status']}", *res["reasons"], sep="\n  ", file=sys.stderr)
if res["status"] != "ok":
    print(
        f"hxfuse: point {res['point']}/rep{res['replicate']} marked FAILED by its check: " + "; ".join(res["reasons"]),
        file=sys.__stderr__,
    )
