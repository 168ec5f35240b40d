# ONNX Runtime as group B (docs/ort.md): every host point it can express run again by
# `python -m hxfuse.external.ort` (groups A_ort, B_ort, B_ort_graph, alone), compared
# with the same point's hxrun raw file(s) by hxfuse.external.compare, one CSV row per
# point x workload.
#
# `all` (and `snakemake --cores 4 external`) runs the middle point of the
# first sweep for each of its workloads (the default study's "similar"
# points): results/host/external.csv and paper/generated/external_table.tex.
# `snakemake --cores 4 external_full` runs every host point of the study ONNX
# Runtime can express (fp32, no option it would have to drop: docs/ort.md)
# (about 13 minutes for the default study on 2 cores):
# results/host/external_full.csv.
#
# Replicates: as many independent ONNX Runtime invocations per point as the
# runner has (run.replicates), each its own target file so one can be rerun alone;
# all use the point's seed for the inputs (hxrun's data) and a new seed for
# the round order.
#
# Duration matching and pairing (docs/ort.md): ONNX Runtime's replicate r
# rescales its tasks until each alone takes runner replicate r's alone time
# (--match-runner), and runs right after it (its priority puts it before the
# point's next runner replicate), so the two sides alternate and replicate r
# of one is paired with replicate r of the other.

# (Definitions: external_common.smk.)


# One ONNX Runtime invocation: takes the device and every core like `run`, so
# nothing runs beside it.
rule ort_run:
    input:
        code=CODE["ort_run"],
        runner=ort_match_raw,
    output:
        jsonl=f"{EXTERNAL_DIR}/raw/{{sweep}}/{{workload}}/{{point}}/ort{{rep}}.jsonl",
    params:
        args=lambda wc: hxpoints.runner_args(config, external_point(wc)),
        point_id=lambda wc: external_point(wc).id,
        # the point's seed keeps hxrun's inputs; a new round order per replicate
        order_seed=lambda wc: int(hxparams.run_settings(config, "host")["seed"]) + 7919 * int(wc.rep),
    resources:
        device=1,
        gres=run_gres,
        slurm_extra=run_slurm_extra,
    threads: all_cores
    # run as soon as its runner replicate is done, before the next one
    priority: 10
    log:
        f"logs/host/external/{{sweep}}/{{workload}}/{{point}}/ort{{rep}}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/ort_run.py"


# ONNX Runtime's groups at a point, drawn and traced like the runner's
# (rules figure_timeline and perfetto, the same scripts and hxfuse.analysis.timeline):
# the representative round of A_ort, B_ort and B_ort_graph from replicate 0,
# one lane per thread that ran a profiled node (the harness's mx, vec, dma,
# graph threads; ort1.. for ONNX Runtime's pool threads), one slice per node.
rule ort_figure_timeline:
    input:
        jsonl=f"{EXTERNAL_DIR}/raw/{POINT_WC}/ort0.jsonl",
        code=CODE["figure_timeline"],
    output:
        pdf=f"{EXTERNAL_DIR}/figures/timeline/{POINT_WC}.pdf",
        png=report(
            f"{EXTERNAL_DIR}/figures/timeline/{POINT_WC}.png",
            caption="../report/ort_timeline.rst",
            category="ONNX Runtime",
            subcategory="Timelines",
            labels={"sweep": "{sweep}", "workload": "{workload}", "point": "{point}"},
        ),
    params:
        title=lambda wc: f"host, ONNX Runtime: {wc.sweep} / {wc.workload} / {wc.point}",
    log:
        f"logs/host/external/figures/timeline/{POINT_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_timeline.py"


rule ort_perfetto:
    input:
        jsonl=f"{EXTERNAL_DIR}/raw/{POINT_WC}/ort0.jsonl",
        code=CODE["perfetto"],
    output:
        trace=report(
            f"{EXTERNAL_DIR}/timeline/{POINT_WC}.perfetto.json",
            caption="../report/ort_perfetto.rst",
            category="ONNX Runtime",
            subcategory="Perfetto traces",
            labels={"sweep": "{sweep}", "workload": "{workload}", "point": "{point}"},
        ),
    params:
        point_id=lambda wc: f"host/external/{wc.sweep}/{wc.workload}/{wc.point}",
    log:
        f"logs/host/external/timeline/{POINT_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/perfetto.py"


# every external point's timelines (`snakemake --cores 4 external_timelines`;
# `all` draws those of the default points)
rule external_timelines:
    input:
        lambda wc: external_timelines(external_points()),


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
        template=repo_path("workflow", "templates", "external_table.tex.j2"),
        code=CODE["external_table"],
    output:
        "paper/generated/external_table.tex",
    log:
        "logs/external_table.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/external_table.py"
