# The paper: the evidence figure, the generated sections and the PDF
# (helpers: paper_common.smk).


# the evidence figure of every timed target (paper_common.smk, PAPER_EVIDENCE)
rule figure_evidence:
    input:
        summary="results/{target}/summary.csv",
        code=CODE["figure_evidence"],
    output:
        pdf="results/{target}/figures/evidence.pdf",
        png=report(
            "results/{target}/figures/evidence.png",
            caption="../report/evidence.rst",
            category="Evidence",
            subcategory="{target}",
            labels={"figure": "evidence"},
        ),
        points_pdf="results/{target}/figures/evidence_points.pdf",
        points_png=report(
            "results/{target}/figures/evidence_points.png",
            caption="../report/evidence_points.rst",
            category="Evidence",
            subcategory="{target}",
            labels={"figure": "evidence per point"},
        ),
    log:
        "logs/{target}/figure_evidence.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_evidence.py"


# paper_sections: the paper's generated sections, every number read from the
# pipeline's outputs (hxfuse/paper/sections.py): the platform table and the statement
# of what was measured on which target, the mechanism-validation table, the
# answers to the plan's questions (hxfuse/paper/answers.py), the evidence figure's
# sentences, the limitations and the figure layout.
rule paper_sections:
    input:
        summaries=expand("results/{target}/summary.csv", target=config["targets"]),
        summaries_json=expand("results/{target}/summary.json", target=config["targets"]),
        mechanism="results/host/mechanism.json",
        figures=[f for t in config["targets"] for f in sweep_figures(t, "pdf")],
        timelines=PAPER_TIMELINES,
        evidence=[f for p in PAPER_EVIDENCE.values() for f in (p, evidence_points_of(p))],
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


# paper: build paper/main.pdf with latexmk where LaTeX is installed; where it
# is not, fail at once saying how to install it.  Not part of `all` (its
# inputs, the generated sections and tables, are).
rule paper:
    input:
        main=repo_path("paper", "main.tex"),
        related=repo_path("paper", "related.tex"),
        # functions: the rules they name are defined wherever the Snakefile
        # includes their files, and are read only once all are
        generated=lambda wc: list(rules.table.output),
        sections=lambda wc: list(rules.paper_sections.output),
    output:
        "paper/main.pdf",
    log:
        "logs/paper.log",
    conda:
        "../../envs/paper.yaml"
    shell:
        r"""
        if ! command -v latexmk >/dev/null 2>&1; then
            echo "hxfuse: latexmk not found. Install LaTeX, e.g. on Debian/Ubuntu:" \
                 "apt-get install -y --no-install-recommends latexmk texlive-latex-recommended" \
                 "texlive-fonts-recommended lmodern (or use --sdm conda with envs/paper.yaml)" | tee {log} >&2
            exit 1
        fi
        mkdir -p paper/build
        [ -e paper/main.tex ] || cp {input.main} paper/main.tex
        [ -e paper/related.tex ] || cp {input.related} paper/related.tex
        (cd paper && latexmk -pdf -interaction=nonstopmode -halt-on-error \
            -outdir=build main.tex) > {log} 2>&1 || {{ echo "hxfuse: LaTeX failed, see {log}" >&2; exit 1; }}
        cp paper/build/main.pdf {output}
        """
