"""deploy (host): stage the runner into results/<target>/stage/ with a manifest."""
import json
import shutil
import sys

from hxfuse import provenance

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
src, dst = snakemake.input.runner, snakemake.output.runner  # noqa: F821
shutil.copy2(src, dst)
manifest = {"target": snakemake.wildcards.target, "runner": dst,  # noqa: F821
            "sha256": provenance.sha256_file(dst), **provenance.base_record()}
with open(snakemake.output.manifest, "w") as fh:  # noqa: F821
    json.dump(manifest, fh, indent=1, sort_keys=True)
print(f"staged {src} -> {dst}", file=sys.stderr)
