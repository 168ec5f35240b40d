# deploy: stage the runner and what it needs for the target.  For `host` the
# stage is a directory under results/; device targets (issue 4) push with adb.
rule deploy:
    input:
        runner="results/{target}/build/hxrun",
    output:
        runner="results/{target}/stage/hxrun",
        manifest="results/{target}/stage/deploy.json",
    log:
        "logs/{target}/deploy.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/deploy.py"
