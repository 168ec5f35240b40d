# The service mode (docs/serve.md): a seeded arrival trace per point and
# replicate, replayed by hxserve under policies A, B and D; a numpy check that
# fails the point loudly; a summary with bootstrap intervals; figures and
# LaTeX rows.  Definitions and config validation: serve_common.smk.


rule serve_all:
    input:
        serve_reps(serve_check_of)
        + SERVE_FIGURES
        + [f"{SERVE_DIR}/summary.csv", f"{SERVE_DIR}/summary.json", f"{SERVE_DIR}/serve_table.tex"],


# Its own build directory: `build` may run make for hxrun at the same time,
# and two makes must not write the same object files.
rule serve_build:
    input:
        makefile=repo_path("kernels", "Makefile"),
        sources=serve_sources,
    output:
        "results/host/build/hxserve",
    params:
        kernels=lambda wc, input: os.path.dirname(input.makefile),
        make_vars=lambda wc: " ".join(shlex.quote(v) for v in hxpreflight.make_vars(config, "host")),
    log:
        f"{SERVE_LOG}/build.log",
    conda:
        "../../envs/build.yaml"
    shell:
        "(make -C {params.kernels} TARGET=host BUILD=build/host-serve {params.make_vars} hxserve"
        " && cp {params.kernels}/build/host-serve/hxserve {output}) > {log} 2>&1"


rule serve_trace:
    input:
        code=CODE["serve_trace"],
    output:
        f"{SERVE_DIR}/trace/{SERVE_REP}.csv",
    params:
        trace=lambda wc: hxserve_cfg.trace_params(SERVE, SERVE_POINTS[wc.spoint], int(wc.rep)),
    log:
        f"{SERVE_LOG}/trace/{SERVE_REP}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/serve_trace.py"


# Exclusive like `run`: the device resource and every core.  Run like `run`
# and `graph_run` by the run wrapper (hxfuse.runner.runpoint): its own
# process group under serve.timeout_s, killed on a signal or when Snakemake
# is gone, the end record's digest checked, outputs moved into place only
# when all is well, and a provenance sidecar with the SHA-256 of every raw
# file, which serve_summary checks.
rule serve_run:
    input:
        runner="results/host/build/hxserve",
        trace=f"{SERVE_DIR}/trace/{SERVE_REP}.csv",
        code=CODE["run_point"],
    output:
        jsonl=f"{SERVE_DIR}/raw/{SERVE_REP}.jsonl",
        provenance=f"{SERVE_DIR}/raw/{SERVE_REP}.provenance.json",
        # serve_check's input only, deleted once it has run (--notemp keeps it)
        npy=temp(directory(f"{SERVE_DIR}/npy/{SERVE_REP}")),
    params:
        args=lambda wc, input: [
            "--trace",
            input.trace,
            *hxserve_cfg.runner_args(SERVE, SERVE_POINTS[wc.spoint], int(wc.rep)),
        ],
        # hxserve runs on the host as it is, with no run prefix or settings
        prefix="",
        env={},
        emulated=False,
        point=serve_run_info,
        timeout_setting="serve.timeout_s",
    resources:
        device=1,
        gres=run_gres,
        slurm_extra=run_slurm_extra,
        timeout_s=lambda wc: str(float(SERVE["timeout_s"])),
    threads: all_cores
    log:
        f"{SERVE_LOG}/run/{SERVE_REP}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/run_point.py"


rule serve_check:
    input:
        jsonl=f"{SERVE_DIR}/raw/{SERVE_REP}.jsonl",
        npy=f"{SERVE_DIR}/npy/{SERVE_REP}",
        provenance=f"{SERVE_DIR}/raw/{SERVE_REP}.provenance.json",
        trace=f"{SERVE_DIR}/trace/{SERVE_REP}.csv",
        code=CODE["serve_check"],
    output:
        f"{SERVE_DIR}/check/{SERVE_REP}.json",
    params:
        rtol=config["check"]["f32_rtol"],
        atol=config["check"]["f32_atol"],
    log:
        f"{SERVE_LOG}/check/{SERVE_REP}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/serve_check.py"


rule serve_summary:
    input:
        checks=serve_reps(serve_check_of),
        raws=serve_reps(serve_raw),
        provenance=serve_reps(serve_provenance_of),
        code=CODE["serve_summary"],
    output:
        summary=f"{SERVE_DIR}/summary.csv",
        replays=f"{SERVE_DIR}/replays.csv",
        requests=f"{SERVE_DIR}/requests.csv.gz",
        json=f"{SERVE_DIR}/summary.json",
    params:
        points=[{"name": p.name, "rate": p.rate, "window_us": p.window_us} for p in SERVE_POINTS.values()],
        replicates=SERVE["replicates"],
        bootstrap=config["analysis"]["bootstrap"],
        ci=config["analysis"]["ci"],
    log:
        f"{SERVE_LOG}/summary.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/serve_summary.py"


rule serve_figures:
    input:
        summary=f"{SERVE_DIR}/summary.csv",
        requests=f"{SERVE_DIR}/requests.csv.gz",
        code=CODE["serve_figures"],
    output:
        serve_report_figures(),
    log:
        f"{SERVE_LOG}/figures.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/serve_figures.py"


rule serve_table:
    input:
        summary=f"{SERVE_DIR}/summary.csv",
        template=repo_path("workflow", "templates", "serve_table.tex.j2"),
        code=CODE["serve_table"],
    output:
        f"{SERVE_DIR}/serve_table.tex",
    log:
        f"{SERVE_LOG}/table.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/serve_table.py"
