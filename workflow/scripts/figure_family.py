"""figures: one figure per family sweep (speedups with the minimum-effect band
over the measured or nominal x, and the quantity the family is about)."""

import sys

from hxfuse.sweep import family_plots

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
family_plots.family_figure(
    snakemake.input.summary,
    sweep=snakemake.wildcards.sweep,  # noqa: F821
    sweep_cfg=snakemake.params.sweep,  # noqa: F821
    min_effect=snakemake.params.min_effect,  # noqa: F821
    out=[snakemake.output.pdf, snakemake.output.png],
)  # noqa: F821
