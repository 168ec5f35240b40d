# selftest: hxrun --selftest, the first-day ladder (kernels/hexagon/README.md,
# "First day"), through the target's run prefix.  Each step is flushed to the
# file before the next and a watchdog names a step that hangs; the job fails
# with the failing or hanging step named (hxfuse.runner.selftest).
#
# On the SDK targets (phone, simulator) it is the first job on the device:
# every run job of the target takes its output as input (selftest_gate), so
# no measurement starts before the ladder passed.  On host and hexagon-qemu
# it runs only when asked (`snakemake --cores 1 selftest`); it is cheap there
# (well under 2 s) but kept out of `all` so that the default study's job
# graph and reruns do not change.  (selftest_gate is in common.smk.)
rule selftest_target:
    input:
        runner="results/{target}/stage/hxrun",
        manifest="results/{target}/stage/deploy.json",
        code=CODE["selftest"],
    output:
        "results/{target}/selftest.jsonl",
    params:
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        env=lambda wc: hxpreflight.run_env(config, wc.target),
    resources:
        device=1,
        timeout_s=lambda wc: str(float(hxparams.run_settings(config, wc.target)["timeout_s"])),
    log:
        "logs/{target}/selftest.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/selftest.py"


rule selftest:
    input:
        expand("results/{target}/selftest.jsonl", target=config["targets"]),
