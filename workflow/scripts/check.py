"""check: correctness of one point (hxfuse.checks); marks, never fails, a bad point."""
import json
import sys

from hxfuse.checks import check_point

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
res = check_point(snakemake.input.jsonl, snakemake.input.npy,  # noqa: F821
                  rtol=snakemake.params.rtol, atol=snakemake.params.atol)  # noqa: F821
res["point"] = "/".join(snakemake.wildcards[k] for k in ("target", "sweep", "workload", "point"))  # noqa: F821
with open(snakemake.output[0], "w") as fh:  # noqa: F821
    json.dump(res, fh, indent=1, sort_keys=True)
print(f"{res['point']}: {res['status']}", *res["reasons"], sep="\n  ", file=sys.stderr)
