# deploy: stage the runner and what it needs for the target.  `host` and
# `hexagon-qemu` (a static Hexagon Linux binary run by qemu-hexagon) are staged
# in a directory under results/; `hexagon` is also pushed to the phone with
# kernels/hexagon/device.sh deploy (adb, target_settings.hexagon.device_serial
# and device_dir).  deploy.json records the staged binary's sha256, the run
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
        device_sh=str(REPO / "kernels" / "hexagon" / "device.sh"),
        env=lambda wc: hxconfig.run_env(config, wc.target),
        target_info=lambda wc: hxconfig.target_info(wc.target),
    log:
        "logs/{target}/deploy.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/deploy.py"
