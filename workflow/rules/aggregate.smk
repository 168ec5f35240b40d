# aggregate: the tidy per-trial table of every replicate of every point of a
# target and the per-point summary (hxfuse.analysis.aggregate: medians with bootstrap
# intervals, paired speedups, overlap efficiency, verdicts).  Failed points
# are listed in summary.json and never get a speedup.  Raw files whose
# SHA-256 differs from their provenance sidecar are refused.  Every value
# comes through inputs and params (points with x, label and parameters,
# analysis settings, config hash), so a change to any reruns it.
rule aggregate:
    input:
        raw=lambda wc: [f for p in target_points(wc.target) for f in all_reps(p, raw_of)],
        checks=lambda wc: [f for p in target_points(wc.target) for f in all_reps(p, check_of)],
        provenance=lambda wc: [
            f.replace(".jsonl", ".provenance.json") for p in target_points(wc.target) for f in all_reps(p, raw_of)
        ],
        npy=lambda wc: [f for p in target_points(wc.target) for f in all_reps(p, npy_of)],
        code=CODE["aggregate"],
    output:
        trials="results/{target}/trials.csv.gz",
        summary="results/{target}/summary.csv",
        summary_json="results/{target}/summary.json",
    params:
        points=lambda wc: hxpoints.aggregate_points(config, wc.target),
        analysis=config["analysis"],
        tolerance=config["check"],
        config_hash=CONFIG_HASH,
        target_info=lambda wc: hxtargets.info(wc.target),
    log:
        "logs/{target}/aggregate.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/aggregate.py"


# report tables: the verdict table (every point x workload: intervals,
# per-task slowdown, host/device split, overlap evidence, verdict, conclusion,
# next step, noise and environment warnings) and the environment/provenance
# table, as HTML pages for `snakemake --report` (hxfuse.sweep.report).
rule report_tables:
    input:
        summary="results/{target}/summary.csv",
        summary_json="results/{target}/summary.json",
        code=CODE["report_tables"],
    output:
        verdicts=report(
            "results/{target}/report/verdicts.html",
            caption="../report/verdicts.rst",
            category="Verdicts",
            subcategory="{target}",
        ),
        verdicts_csv="results/{target}/verdicts.csv",
        environment=report(
            "results/{target}/report/environment.html",
            caption="../report/environment.rst",
            category="Environment",
            subcategory="{target}",
        ),
    log:
        "logs/{target}/report_tables.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/report_tables.py"
