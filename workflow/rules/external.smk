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

# as many ONNX Runtime invocations per point as the runner has replicates
EXTERNAL_REPLICATES = hxconfig.replicates(config, "host") if "host" in config["targets"] else 1
EXTERNAL_DIR = "results/host/external"


def external_points():
    """Host points ONNX Runtime can run: fp32, real kernels (no calibration)."""
    return [p for p in POINTS if p.target == "host" and p.params["precision"] == "fp32"
            and not p.params["calibrate"]]


def external_default_points():
    """The middle point of the first sweep, every workload of that sweep, where
    ONNX Runtime can run it (the point the paper's timelines show too)."""
    if "host" not in config["targets"] or not config["sweeps"]:
        return []
    sweep, sw = next(iter(config["sweeps"].items()))
    mid = sw["points"][len(sw["points"]) // 2]["name"]
    return [p for p in external_points() if p.sweep == sweep and p.point == mid]


def external_outputs():
    """What `all` adds: the comparison of the default points and its table."""
    if not external_default_points():
        return []
    return ["results/host/external.csv", "paper/generated/external_table.tex"]


def external_point(wc):
    return hxconfig.find_point(config, "host", wc.sweep, wc.workload, wc.point)


def ort_raws(wc):
    return [f"{EXTERNAL_DIR}/raw/{wc.sweep}/{wc.workload}/{wc.point}/ort{r}.jsonl"
            for r in range(EXTERNAL_REPLICATES)]


def runner_raws(wc):
    # every replicate of the point's hxrun run (common.smk)
    return all_reps(external_point(wc), raw_of)


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
    script:
        "../scripts/external_point.py"


rule external:
    input:
        csvs=lambda wc: [f"{EXTERNAL_DIR}/{p.sweep}/{p.workload}/{p.point}.csv" for p in external_default_points()],
        code=CODE["external_concat"],
    output:
        csv="results/host/external.csv",
    script:
        "../scripts/external_concat.py"


rule external_full:
    input:
        csvs=lambda wc: [f"{EXTERNAL_DIR}/{p.sweep}/{p.workload}/{p.point}.csv" for p in external_points()],
        code=CODE["external_concat"],
    output:
        csv="results/host/external_full.csv",
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
    script:
        "../scripts/external_table.py"
