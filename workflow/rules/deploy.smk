# deploy: stage the runner and what it needs for the target.  `host` and
# `hexagon-qemu` (a static Hexagon Linux binary run by qemu-hexagon) are staged
# in a directory under results/; `hexagon` is also pushed to the phone with
# kernels/hexagon/device.sh deploy (adb, target_settings.hexagon.device_serial
# and device_dir; with a device farm, device_serials, to every phone).  deploy.json records the staged binary's sha256, the run
# prefix and whether the target is emulated.
rule deploy:
    input:
        runner="results/{target}/build/hxrun",
        code=CODE["deploy"],
    output:
        runner="results/{target}/stage/hxrun",
        manifest="results/{target}/stage/deploy.json",
    params:
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        device_sh=repo_path("kernels", "hexagon", "device.sh"),
        env=lambda wc: hxpreflight.run_env(config, wc.target),
        target_info=lambda wc: hxtargets.info(wc.target),
        farm_spans_hosts=lambda wc: bool(hxparams.target_settings(config, wc.target).get("farm_spans_hosts")),
    log:
        "logs/{target}/deploy.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/deploy.py"
