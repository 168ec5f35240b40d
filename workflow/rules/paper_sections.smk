# paper_sections: the paper's generated sections, every number read from the
# pipeline's outputs (hxfuse/paper.py): the platform table and the statement
# of what was measured on which target, the mechanism-validation table and
# the answers to the plan's questions (hxfuse/answers.py).
rule paper_sections:
    input:
        summaries=expand("results/{target}/summary.csv", target=config["targets"]),
        summaries_json=expand("results/{target}/summary.json", target=config["targets"]),
        mechanism="results/host/mechanism.json",
        code=CODE["paper_sections"],
    output:
        setup="paper/generated/setup.tex",
        scope="paper/generated/scope.tex",
        platform_macros="paper/generated/platform_macros.tex",
        mechanism="paper/generated/mechanism.tex",
        answers="paper/generated/answers.tex",
    log:
        "logs/paper_sections.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/paper_sections.py"
