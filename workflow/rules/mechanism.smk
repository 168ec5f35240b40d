# mechanism: the fused executor's mechanism checks (hxfuse/runner/mechanism.py) run
# on the host runner and recorded as data for the paper (about 5-30 s).  The
# checks pin threads and read timestamps, so the job is exclusive like a
# measurement (device resource, all cores).
rule mechanism:
    input:
        runner="results/host/build/hxrun",
        code=CODE["mechanism"],
    output:
        "results/host/mechanism.json",
    log:
        "logs/host/mechanism.log",
    resources:
        device=1,
    threads: all_cores
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/mechanism.py"
