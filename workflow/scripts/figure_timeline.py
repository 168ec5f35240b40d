"""figures: Gantt timeline of the median round of each group for one point
(the runner's, or ONNX Runtime's groups for rule ort_figure_timeline)."""

from hxfuse import intermediate
from hxfuse.sweep import plots

sm = snakemake  # noqa: F821
w = sm.wildcards
with intermediate.job(sm):
    plots.timeline_figure(
        sm.input.jsonl,
        sm.input.get("check"),
        title=sm.params.get("title") or f"{w.target}: {w.sweep} / {w.workload} / {w.point}",
        out=[sm.output.pdf, sm.output.png],
    )
