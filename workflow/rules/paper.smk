# paper: build paper/main.pdf with latexmk where LaTeX is installed; where it
# is not, fail at once saying how to install it.  Not part of `all` (its
# inputs, the generated sections and tables, are).
rule paper:
    input:
        main=repo_path("paper", "main.tex"),
        related=repo_path("paper", "related.tex"),
        generated=rules.table.output,
        sections=rules.paper_sections.output,
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
