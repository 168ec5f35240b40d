# figures: seaborn figures, PDF for the paper and PNG for viewing.  Inputs are
# results and the code the scripts import (CODE, derived from the imports), so
# editing hxfuse/sweep/plots.py or a script reruns figures, never trials.  The
# timeline of a point is drawn from its replicate 0.


rule figure_timeline:
    input:
        jsonl=f"results/{{target}}/raw/{POINT_WC}/rep0.jsonl",
        check=f"results/{{target}}/check/{POINT_WC}/rep0.json",
        code=CODE["figure_timeline"],
    output:
        pdf=report(
            f"results/{{target}}/figures/timeline/{POINT_WC}.pdf",
            caption="../report/timeline.rst",
            category="Timelines",
            subcategory="{target}",
        ),
        png=f"results/{{target}}/figures/timeline/{POINT_WC}.png",
    log:
        f"logs/{{target}}/figures/timeline/{POINT_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_timeline.py"


rule figure_speedup:
    input:
        summary="results/{target}/summary.csv",
        code=CODE["figure_speedup"],
    output:
        pdf=report(
            "results/{target}/figures/speedup_{sweep}.pdf",
            caption="../report/speedup.rst",
            category="Speedup",
            subcategory="{target}",
        ),
        png="results/{target}/figures/speedup_{sweep}.png",
    params:
        sweep=lambda wc: config["sweeps"][wc.sweep],
    log:
        "logs/{target}/figures/speedup_{sweep}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_speedup.py"


rule figure_slowdown:
    input:
        trials="results/{target}/trials.csv.gz",
        code=CODE["figure_slowdown"],
    output:
        pdf=report(
            "results/{target}/figures/slowdown_{sweep}.pdf",
            caption="../report/slowdown.rst",
            category="Slowdown",
            subcategory="{target}",
        ),
        png="results/{target}/figures/slowdown_{sweep}.png",
    params:
        sweep=lambda wc: config["sweeps"][wc.sweep],
    log:
        "logs/{target}/figures/slowdown_{sweep}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_slowdown.py"


# one figure per family sweep (a sweep with `family`: granularity, ratio,
# share, bandwidth, wait): speedups with the minimum-effect band over the
# measured x (alone medians) where the sweep says `x_measured`, and below
# them the quantity the family is about (hxfuse.sweep.families)
rule figure_family:
    input:
        summary="results/{target}/summary.csv",
        code=CODE["figure_family"],
    output:
        pdf=report(
            "results/{target}/figures/family_{sweep}.pdf",
            caption="../report/family.rst",
            category="Families",
            subcategory="{target}",
        ),
        png="results/{target}/figures/family_{sweep}.png",
    params:
        sweep=lambda wc: config["sweeps"][wc.sweep],
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/{target}/figures/family_{sweep}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_family.py"
