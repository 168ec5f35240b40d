"""figures: paired speedups with their decision intervals against the swept
variable, and the band 1 +/- analysis.min_effect on every panel."""

from hxfuse import intermediate
from hxfuse.sweep import plots

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    plots.speedup_figure(
        sm.input.summary,
        sweep=sm.wildcards.sweep,
        sweep_cfg=sm.params.sweep,
        out=[sm.output.pdf, sm.output.png],
        min_effect=sm.params.min_effect,
    )
