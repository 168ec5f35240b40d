# ONNX Runtime as group B (docs/ort.md): every host fp32 point run again by
# `python -m hxfuse.ort` (groups A_ort, B_ort, B_ort_graph, alone), compared
# with the same point's hxrun raw file(s) by hxfuse.external, one CSV row per
# point x workload.
#
# `all` (and `snakemake --cores 4 external`) runs the middle point of the
# first sweep for each of its workloads (the default study's "similar"
# points): results/host/external.csv and paper/generated/external_table.tex.
# `snakemake --cores 4 external_full` runs every host fp32 point of the study
# (about 13 minutes for the default study on 2 cores):
# results/host/external_full.csv.
#
# Replicates: as many independent ONNX Runtime invocations per point as the
# runner has (run.replicates), each its own target file so one can be rerun alone;
# all use the point's seed for the inputs (hxrun's data) and a new seed for
# the round order.

include: "external_inputs.smk"


# One ONNX Runtime invocation: takes the device and every core like `run`, so
# nothing runs beside it.
rule ort_run:
    input:
        code=CODE["ort_run"],
    output:
        jsonl=f"{EXTERNAL_DIR}/raw/{{sweep}}/{{workload}}/{{point}}/ort{{rep}}.jsonl",
    params:
        args=lambda wc: hxconfig.runner_args(config, external_point(wc)),
        point_id=lambda wc: external_point(wc).id,
        # the point's seed keeps hxrun's inputs; a new round order per replicate
        order_seed=lambda wc: int(hxconfig.run_settings(config, "host")["seed"]) + 7919 * int(wc.rep),
    resources:
        device=1,
    threads: all_cores
    log:
        f"logs/host/external/{{sweep}}/{{workload}}/{{point}}/ort{{rep}}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/ort_run.py"


rule external_point:
    input:
        ort=ort_raws,
        runner=runner_raws,
        code=CODE["external_point"],
    output:
        csv=f"{EXTERNAL_DIR}/{{sweep}}/{{workload}}/{{point}}.csv",
    params:
        min_effect=config["analysis"].get("min_effect", 0.03),
        bootstrap=config["analysis"]["bootstrap"],
    log:
        "logs/host/external/{sweep}/{workload}/{point}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/external_point.py"


rule external:
    input:
        csvs=lambda wc: [f"{EXTERNAL_DIR}/{p.sweep}/{p.workload}/{p.point}.csv" for p in external_default_points()],
        code=CODE["external_concat"],
    output:
        csv="results/host/external.csv",
    log:
        "logs/host/external.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/external_concat.py"


rule external_full:
    input:
        csvs=lambda wc: [f"{EXTERNAL_DIR}/{p.sweep}/{p.workload}/{p.point}.csv" for p in external_points()],
        code=CODE["external_concat"],
    output:
        csv="results/host/external_full.csv",
    log:
        "logs/host/external_full.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/external_concat.py"


# The LaTeX table of D against ONNX Runtime's own concurrency (B_ort), the
# serial ORT path and the negative control, with the kernel-time ratios.
rule external_table:
    input:
        csv="results/host/external.csv",
        template=str(REPO / "workflow" / "templates" / "external_table.tex.j2"),
        code=CODE["external_table"],
    output:
        "paper/generated/external_table.tex",
    log:
        "logs/external_table.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/external_table.py"
