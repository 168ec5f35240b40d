"""figures: paired speedups with intervals against the swept variable."""

import sys

from hxfuse.sweep import plots

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
plots.speedup_figure(
    snakemake.input.summary,
    sweep=snakemake.wildcards.sweep,  # noqa: F821
    sweep_cfg=snakemake.params.sweep,  # noqa: F821
    out=[snakemake.output.pdf, snakemake.output.png],
)  # noqa: F821
