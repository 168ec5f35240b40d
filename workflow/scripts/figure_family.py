"""figures: one figure per family sweep (speedups with the minimum-effect band
over the measured or nominal x, and the quantity the family is about)."""

from hxfuse import intermediate
from hxfuse.sweep import family_plots

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    family_plots.family_figure(
        sm.input.summary,
        sweep=sm.wildcards.sweep,
        sweep_cfg=sm.params.sweep,
        min_effect=sm.params.min_effect,
        out=[sm.output.pdf, sm.output.png],
    )
