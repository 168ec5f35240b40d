"""figures: per-task slowdown T_i^X / T_i per group against the swept variable."""

from hxfuse import intermediate
from hxfuse.sweep import plots

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    plots.slowdown_figure(
        sm.input.trials, sweep=sm.wildcards.sweep, sweep_cfg=sm.params.sweep, out=[sm.output.pdf, sm.output.png]
    )
