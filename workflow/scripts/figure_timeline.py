"""figures: Gantt timeline of the median round of each group for one point."""
import sys

from hxfuse import plots

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
w = snakemake.wildcards  # noqa: F821
plots.timeline_figure(snakemake.input.jsonl, snakemake.input.check,  # noqa: F821
                      title=f"{w.target}: {w.sweep} / {w.workload} / {w.point}",
                      out=[snakemake.output.pdf, snakemake.output.png])  # noqa: F821
