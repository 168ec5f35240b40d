"""deploy: stage the runner into results/<target>/stage/ with a manifest;
for the `hexagon` device target also push it to the phone (device.sh deploy),
and in mode ap also the staged AP driver and skel (device.sh deploy
.../hxrun-ap pushes the skel from beside it).  The mode is recorded
(hxfuse.config.params.device_mode: ap or dsp-only on the SDK targets, null
where the host and the engines are one process by construction)."""

import json
import os
import shutil
import subprocess
import sys

from hxfuse.runner import provenance

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
target = sm.wildcards.target
src, dst = sm.input.runner, sm.output.runner
shutil.copy2(src, dst)
info = sm.params.target_info
# mode ap's staged halves (rule stage_ap): [driver, skel], or none
ap = list(sm.input.get("ap", []) or [])
mode = sm.params.mode
if (mode == "ap") != bool(ap):
    sys.exit(f"hxfuse: deploy of {target}: mode {mode} but staged AP files {ap} (workflow bug)")
manifest = {
    "target": target,
    "runner": dst,
    "sha256": provenance.sha256_file(dst),
    "run_prefix": sm.params.prefix,
    "emulated": info["emulated"],
    "status": info["status"],
    "mode": mode,
    **provenance.base_record(),
}
if ap:
    driver, skel = ap
    manifest["ap"] = {
        "driver": driver,
        "driver_sha256": provenance.sha256_file(driver),
        "skel": skel,
        "skel_sha256": provenance.sha256_file(skel),
    }
if target == "hexagon":
    env = {**os.environ, **sm.params.env}
    # a device farm (HX_DEVICE_SERIALS, exported by the workflow): every phone
    # gets the runner, each under its own lease, so that a phone that is
    # missing or refuses stops the workflow here, before any run.  A farm
    # spread over several device hosts (target_settings.hexagon
    # .farm_spans_hosts) deploys to the phones attached to this host only.
    farm = env.get("HX_DEVICE_SERIALS", "").split()
    elsewhere = []
    if farm and sm.params.farm_spans_hosts:
        listed = subprocess.run(["adb", "devices"], capture_output=True, text=True).stdout.splitlines()
        here = {ln.split()[0] for ln in listed[1:] if len(ln.split()) == 2 and ln.split()[1] == "device"}
        elsewhere = [s for s in farm if s not in here]
        farm = [s for s in farm if s in here]
        if not farm:
            print(
                f"hxfuse: deploy of {dst}: none of the farm's phones ({' '.join(elsewhere)}) is attached "
                "to this host (adb devices)",
                file=sys.__stderr__,
            )
            sys.exit(1)
    # hxrun (the self-test's, in both modes), then in mode ap the AP driver
    # (with the skel beside it)
    for serial in farm or [env.get("HX_DEVICE_SERIAL")]:
        for runner in [dst] + ap[:1]:
            r = subprocess.run(
                [sm.params.device_sh, "deploy", runner],
                env={**env, "HX_DEVICE_SERIALS": serial} if farm else env,
                stdout=sys.stderr,
                stderr=subprocess.STDOUT,
            )
            if r.returncode != 0:
                print(
                    f"hxfuse: deploy of {runner} to {serial}:{env.get('HX_DEVICE_DIR')} "
                    f"failed (device.sh exit {r.returncode}; log: {sm.log[0]})",
                    file=sys.__stderr__,
                )
                sys.exit(1)
    manifest.update(
        {
            "device_serial": None if farm else env.get("HX_DEVICE_SERIAL"),
            "device_serials": farm,
            "device_serials_elsewhere": elsewhere,
            "device_dir": env.get("HX_DEVICE_DIR"),
        }
    )
with open(sm.output.manifest, "w") as fh:
    json.dump(manifest, fh, indent=1, sort_keys=True)
print(f"staged {src} -> {dst}", file=sys.stderr)
