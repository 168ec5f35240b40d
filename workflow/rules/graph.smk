# Workload 4 rules: build, run, check, summarise, draw and tabulate the
# graph points (definitions in graph_common.smk; docs/graphs.md).  The
# figures' PNGs are in `snakemake --report` (category "Task graphs").


# hxgraph in its own build directory: `build` (hxrun) and `serve_build` may
# run make at the same time, and two makes must not write the same objects
rule graph_runner:
    input:
        makefile=repo_path("kernels", "Makefile"),
        sources=graph_kernel_sources,
    output:
        "results/{target}/build/hxgraph",
    params:
        kernels=lambda wc, input: os.path.dirname(input.makefile),
        make_vars=lambda wc: " ".join(shlex.quote(v) for v in hxpreflight.make_vars(config, wc.target)),
    log:
        "logs/{target}/build_hxgraph.log",
    conda:
        "../../envs/build.yaml"
    shell:
        "(make -C {params.kernels} TARGET={wildcards.target} BUILD=build/{wildcards.target}-graph"
        " {params.make_vars} hxgraph"
        " && cp {params.kernels}/build/{wildcards.target}-graph/hxgraph {output}) > {log} 2>&1"


rule graph_build:
    input:
        code=CODE["graph_build"],
    output:
        "results/{target}/graph/json/{gpoint}.json",
    params:
        point=lambda wc: GRAPH_POINTS[wc.gpoint],
    log:
        "logs/{target}/graph/build/{gpoint}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/graph_build.py"


rule graph_run:
    input:
        runner="results/{target}/build/hxgraph",
        graph="results/{target}/graph/json/{gpoint}.json",
        code=CODE["run_point"],
    output:
        jsonl="results/{target}/graph/raw/{gpoint}/rep{rep}.jsonl",
        provenance="results/{target}/graph/raw/{gpoint}/rep{rep}.provenance.json",
        # graph_check's input only, deleted once it has run (--notemp keeps it)
        npy=temp(directory("results/{target}/graph/npy/{gpoint}/rep{rep}")),
    params:
        args=lambda wc, input: [
            "--graph",
            input.graph,
            *hxgraphstudy.runner_args(GRAPH_RUN, int(wc.rep), config["run"]["seed"]),
        ],
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        env=lambda wc: hxpreflight.run_env(config, wc.target),
        emulated=False,
        point=lambda wc: {
            "target": wc.target,
            "sweep": "graph",
            "workload": GRAPH_POINTS[wc.gpoint]["model"],
            "point": wc.gpoint,
            "replicate": int(wc.rep),
            "params": GRAPH_POINTS[wc.gpoint],
        },
    resources:
        device=1,
        gres=run_gres,
        slurm_extra=run_slurm_extra,
        timeout_s=lambda wc: str(float(GRAPH_RUN["timeout_s"])),
    threads: all_cores
    log:
        "logs/{target}/graph/run/{gpoint}/rep{rep}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/run_point.py"


rule graph_check:
    input:
        graph="results/{target}/graph/json/{gpoint}.json",
        jsonl="results/{target}/graph/raw/{gpoint}/rep{rep}.jsonl",
        npy="results/{target}/graph/npy/{gpoint}/rep{rep}",
        provenance="results/{target}/graph/raw/{gpoint}/rep{rep}.provenance.json",
        code=CODE["graph_check"],
    output:
        "results/{target}/graph/check/{gpoint}/rep{rep}.json",
    params:
        rtol=config["check"]["f32_rtol"],
        atol=config["check"]["f32_atol"],
    log:
        "logs/{target}/graph/check/{gpoint}/rep{rep}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/graph_check.py"


rule graph_summary:
    input:
        graphs=lambda wc: [f"results/{wc.target}/graph/json/{g}.json" for g in GRAPH_POINTS],
        raw=lambda wc: graph_reps(wc.target, "raw", ".jsonl"),
        checks=lambda wc: graph_reps(wc.target, "check", ".json"),
        provenance=lambda wc: graph_reps(wc.target, "raw", ".provenance.json"),
        code=CODE["graph_summary"],
    output:
        summary="results/{target}/graph/summary.csv",
        summary_json="results/{target}/graph/summary.json",
        trials="results/{target}/graph/trials.csv.gz",
        profile="results/{target}/graph/profile.csv",
    params:
        points=list(GRAPH_POINTS.values()),
        analysis=config["analysis"],
        config_hash=CONFIG_HASH,
    log:
        "logs/{target}/graph/summary.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/graph_summary.py"


rule graph_figure_profile:
    input:
        graph="results/{target}/graph/json/{gpoint}.json",
        code=CODE["graph_figure_profile"],
    output:
        pdf="results/{target}/graph/figures/profile_{gpoint}.pdf",
        png=report(
            "results/{target}/graph/figures/profile_{gpoint}.png",
            caption="../report/graph_profile.rst",
            category="Task graphs",
            subcategory="{target}",
            labels={"figure": "ready profile", "graph point": "{gpoint}"},
        ),
    params:
        label=lambda wc: GRAPH_POINTS[wc.gpoint]["label"],
    log:
        "logs/{target}/graph/figures/profile_{gpoint}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/graph_figure_profile.py"


# drawn from replicate 0 (after its check, so a failed run is never drawn
# as if it were a result)
rule graph_figure_timeline:
    input:
        jsonl="results/{target}/graph/raw/{gpoint}/rep0.jsonl",
        check="results/{target}/graph/check/{gpoint}/rep0.json",
        code=CODE["graph_figure_timeline"],
    output:
        pdf="results/{target}/graph/figures/timeline_{gpoint}.pdf",
        png=report(
            "results/{target}/graph/figures/timeline_{gpoint}.png",
            caption="../report/graph_timeline.rst",
            category="Task graphs",
            subcategory="{target}",
            labels={"figure": "timeline", "graph point": "{gpoint}"},
        ),
    params:
        label=lambda wc: GRAPH_POINTS[wc.gpoint]["label"],
    log:
        "logs/{target}/graph/figures/timeline_{gpoint}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/graph_figure_timeline.py"


rule graph_figure_speedup:
    input:
        summary="results/{target}/graph/summary.csv",
        code=CODE["graph_figure_speedup"],
    output:
        pdf="results/{target}/graph/figures/speedup.pdf",
        png=report(
            "results/{target}/graph/figures/speedup.png",
            caption="../report/graph_speedup.rst",
            category="Task graphs",
            subcategory="{target}",
            labels={"figure": "speedup", "graph point": "all points"},
        ),
    params:
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/{target}/graph/figures/speedup.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/graph_figure_speedup.py"


rule graph_table:
    input:
        summaries=expand("results/{target}/graph/summary.csv", target=GRAPH_TARGETS),
        template=repo_path("workflow", "templates", "graph_table.tex.j2"),
        code=CODE["graph_table"],
    output:
        "paper/generated/graph_table.tex",
    params:
        targets=GRAPH_TARGETS,
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/graph_table.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/graph_table.py"


# the graph study alone: `snakemake --cores 4 graphs --config graph_study=graphs`
rule graphs:
    input:
        graph_outputs(),
