"""deploy: stage the runner into results/<target>/stage/ with a manifest;
for the `hexagon` device target also push it to the phone (device.sh deploy)."""
import json
import os
import shutil
import subprocess
import sys

from hxfuse import provenance

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
target = sm.wildcards.target
src, dst = sm.input.runner, sm.output.runner
shutil.copy2(src, dst)
info = sm.params.target_info
manifest = {"target": target, "runner": dst, "sha256": provenance.sha256_file(dst),
            "run_prefix": sm.params.prefix, "emulated": info["emulated"], "status": info["status"],
            **provenance.base_record()}
if target == "hexagon":
    env = {**os.environ, **sm.params.env}
    r = subprocess.run([sm.params.device_sh, "deploy", dst], env=env, stdout=sys.stderr,
                       stderr=subprocess.STDOUT)
    if r.returncode != 0:
        print(f"hxfuse: deploy of {dst} to {env.get('HX_DEVICE_SERIAL')}:{env.get('HX_DEVICE_DIR')} "
              f"failed (device.sh exit {r.returncode}; log: {sm.log[0]})", file=sys.__stderr__)
        sys.exit(1)
    manifest.update({"device_serial": env.get("HX_DEVICE_SERIAL"), "device_dir": env.get("HX_DEVICE_DIR")})
with open(sm.output.manifest, "w") as fh:
    json.dump(manifest, fh, indent=1, sort_keys=True)
print(f"staged {src} -> {dst}", file=sys.stderr)
