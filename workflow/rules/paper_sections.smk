# paper_sections: the paper's generated sections, every number read from the
# pipeline's outputs (hxfuse/paper/sections.py): the platform table and the statement
# of what was measured on which target, the mechanism-validation table, the
# answers to the plan's questions (hxfuse/paper/answers.py), the evidence figure's
# sentences, the limitations and the figure layout.
import hxfuse.paper.sections as hxpaper

PAPER_TIMELINES = hxpaper.representative_timelines(config["targets"], config["sweeps"])
# the evidence figure of every timed target (emulated timings are not performance)
# External B (ONNX Runtime, rule `external`, part of `all` where the host
# target runs): the paper reports it, and says it did not run otherwise.
PAPER_EXTERNAL = external_outputs()
PAPER_EVIDENCE = {t: f"results/{t}/figures/evidence.pdf" for t in config["targets"] if not is_emulated(t)}


include: "paper_inputs.smk"


rule figure_evidence:
    input:
        summary="results/{target}/summary.csv",
        code=CODE["figure_evidence"],
    output:
        pdf="results/{target}/figures/evidence.pdf",
        png="results/{target}/figures/evidence.png",
    log:
        "logs/{target}/figure_evidence.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_evidence.py"


rule paper_sections:
    input:
        summaries=expand("results/{target}/summary.csv", target=config["targets"]),
        summaries_json=expand("results/{target}/summary.json", target=config["targets"]),
        mechanism="results/host/mechanism.json",
        figures=[f for t in config["targets"] for f in sweep_figures(t, "pdf")],
        timelines=PAPER_TIMELINES,
        evidence=list(PAPER_EVIDENCE.values()),
        external=PAPER_EXTERNAL,
        workloads=PAPER_WORKLOAD_FILES,
        code=CODE["paper_sections"],
    output:
        setup="paper/generated/setup.tex",
        scope="paper/generated/scope.tex",
        platform_macros="paper/generated/platform_macros.tex",
        mechanism="paper/generated/mechanism.tex",
        answers="paper/generated/answers.tex",
        evidence="paper/generated/evidence.tex",
        limitations="paper/generated/limitations.tex",
        figures="paper/generated/paper_figures.tex",
        graph="paper/generated/graph.tex",
        serve="paper/generated/serve.tex",
        search="paper/generated/search.tex",
        workload_answers="paper/generated/workload_answers.tex",
    params:
        sweeps=config["sweeps"],
        timelines=PAPER_TIMELINES,
        evidence=PAPER_EVIDENCE,
        workloads=PAPER_WORKLOADS,
    log:
        "logs/paper_sections.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/paper_sections.py"
