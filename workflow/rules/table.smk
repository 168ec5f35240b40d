# table: the LaTeX results and evidence tables (Jinja2, booktabs) and a macros
# file of headline numbers.
rule table:
    input:
        summaries=expand("results/{target}/summary.csv", target=config["targets"]),
        summaries_json=expand("results/{target}/summary.json", target=config["targets"]),
        figures=[f for t in config["targets"] for f in sweep_figures(t, "pdf")],
        timelines=[timeline_of(p, "pdf") for p in POINTS],
        template=repo_path("workflow", "templates", "results_table.tex.j2"),
        evidence_template=repo_path("workflow", "templates", "evidence_table.tex.j2"),
        code=CODE["table"],
    output:
        table="paper/generated/results_table.tex",
        evidence="paper/generated/evidence_table.tex",
        macros="paper/generated/results_macros.tex",
    params:
        sweeps=config["sweeps"],
    log:
        "logs/table.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/table.py"


# the family figures for the paper (paper/generated/families.tex): one
# captioned figure per family sweep and target, saying what the family varies
# and how to read it
rule families_tex:
    input:
        figures=lambda wc: [f for t in config["targets"] for f in family_figures(t, "pdf")],
        code=CODE["families_tex"],
    output:
        tex="paper/generated/families.tex",
    params:
        targets=[t for t in config["targets"] if not is_emulated(t)],
        sweeps=config["sweeps"],
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/families_tex.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/families_tex.py"
