"""graph_check: correctness of one graph replicate against numpy
(hxfuse.graph.check); marks, never fails, a bad replicate, and says so."""

import json
import sys

from hxfuse import intermediate
from hxfuse.graph.check import check_graph

sm = snakemake  # noqa: F821
# the raw output is the check's to judge: a bad one marks the replicate failed
with intermediate.job(sm, unchecked=["jsonl"]):
    res = check_graph(
        sm.input.graph,
        sm.input.jsonl,
        sm.input.npy,
        rtol=sm.params.rtol,
        atol=sm.params.atol,
        provenance=sm.input.provenance,
    )
res["point"] = f"{sm.wildcards.target}/graph/{sm.wildcards.gpoint}"
res["replicate"] = int(sm.wildcards.rep)
with open(sm.output[0], "w") as fh:
    json.dump(res, fh, indent=1, sort_keys=True)
print(f"{res['point']}/rep{res['replicate']}: {res['status']}", *res["reasons"], sep="\n  ", file=sys.stderr)
if res["status"] != "ok":
    print(
        f"hxfuse: graph point {res['point']}/rep{res['replicate']} marked FAILED by its check: "
        + "; ".join(res["reasons"]),
        file=sys.__stderr__,
    )
