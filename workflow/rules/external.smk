# ONNX Runtime as group B (docs/ort.md): every host fp32 point run again by
# `python -m hxfuse.ort` (groups A_ort, B_ort, B_ort_graph, alone), compared
# with the same point's hxrun raw file(s) by hxfuse.external, one CSV row per
# point x workload, all gathered in results/host/external.csv.
# Not part of `all`: `snakemake --cores 4 external`.
#
# Replicates: run.replicates where the config has it, else 3 independent
# invocations per point, each its own target file so one can be rerun alone;
# all use the point's seed for the inputs (hxrun's data) and a new seed for
# the round order.

include: "external_inputs.smk"


# One ONNX Runtime invocation: takes the device and every core like `run`, so
# nothing runs beside it.
rule ort_run:
    output:
        jsonl=f"{EXTERNAL_DIR}/raw/{{sweep}}/{{workload}}/{{point}}/ort{{rep}}.jsonl",
    params:
        args=lambda wc: hxconfig.runner_args(config, external_point(wc)),
    wildcard_constraints:
        rep=r"\d+",
    resources:
        device=1,
    threads: all_cores
    log:
        f"logs/host/external/{{sweep}}/{{workload}}/{{point}}/ort{{rep}}.log",
    run:
        shell(ort_command(wildcards, output.jsonl, log[0]))


rule external_point:
    input:
        ort=ort_raws,
        runner=runner_raws,
    output:
        csv=f"{EXTERNAL_DIR}/{{sweep}}/{{workload}}/{{point}}.csv",
    params:
        python=sys.executable,
        min_effect=config["analysis"].get("min_effect", 0.03),
        bootstrap=config["analysis"]["bootstrap"],
    log:
        "logs/host/external/{sweep}/{workload}/{point}.log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        "{params.python:q} -m hxfuse.external --ort {input.ort:q} --runner {input.runner:q} --out {output.csv:q}"
        " --min-effect {params.min_effect} --bootstrap {params.bootstrap}"
        " --label sweep={wildcards.sweep} --label point={wildcards.point} > {log:q} 2>&1"


rule external:
    input:
        lambda wc: [f"{EXTERNAL_DIR}/{p.sweep}/{p.workload}/{p.point}.csv" for p in external_points()],
    output:
        "results/host/external.csv",
    params:
        python=sys.executable,
        concat="import sys; from hxfuse.external import concat_csv; "
        "print(len(concat_csv(sys.argv[2:], sys.argv[1])), 'rows')",
    log:
        "logs/host/external.log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        "{params.python:q} -c {params.concat:q} {output:q} {input:q} > {log:q} 2>&1"
