# aggregate: the tidy per-trial table of every point of a target and the
# per-point summary (hxfuse.aggregate: medians with bootstrap intervals,
# paired speedups, overlap efficiency, verdicts).  Failed points are listed in
# summary.json and never get a speedup.
rule aggregate:
    input:
        raw=lambda wc: [raw_of(p) for p in target_points(wc.target)],
        checks=lambda wc: [check_of(p) for p in target_points(wc.target)],
        provenance=lambda wc: [raw_of(p).replace(".jsonl", ".provenance.json")
                               for p in target_points(wc.target)],
        code=[str(REPO / "hxfuse" / m) for m in ("pipeline.py", "aggregate.py", "metrics.py", "stats.py",
                                                  "verdicts.py", "io.py", "intervals.py")],
    output:
        trials="results/{target}/trials.csv.gz",
        summary="results/{target}/summary.csv",
        summary_json="results/{target}/summary.json",
    params:
        points=lambda wc: [p.id for p in target_points(wc.target)],
        analysis=config["analysis"],
    log:
        "logs/{target}/aggregate.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/aggregate.py"


# report tables: the verdict table (every point x workload: intervals,
# per-task slowdown, host/device split, overlap evidence, verdict, conclusion,
# next step, noise and environment warnings) and the environment/provenance
# table, as HTML pages for `snakemake --report` (hxfuse.report).
rule report_tables:
    input:
        summary="results/{target}/summary.csv",
        summary_json="results/{target}/summary.json",
        code=str(REPO / "hxfuse" / "report.py"),
    output:
        verdicts=report("results/{target}/report/verdicts.html",
                        caption="../report/verdicts.rst", category="Verdicts",
                        subcategory="{target}"),
        verdicts_csv="results/{target}/verdicts.csv",
        environment=report("results/{target}/report/environment.html",
                           caption="../report/environment.rst", category="Environment",
                           subcategory="{target}"),
    log:
        "logs/{target}/report_tables.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/report_tables.py"
