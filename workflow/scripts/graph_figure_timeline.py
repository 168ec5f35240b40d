"""graph_figure_timeline: per group the median round of replicate 0, nodes on
their engines (hxfuse.graph.plots)."""

from hxfuse import intermediate
from hxfuse.graph import plots as graphplots
from hxfuse.graph import stats as graphstats

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    recs = graphstats.read_records(sm.input.jsonl)
    graphplots.timeline_figure(
        graphstats.node_table(recs),
        graphstats.trial_table(recs, sm.wildcards.gpoint, 0),
        f"timeline: {sm.params.label} (replicate 0, median round per group)",
        [sm.output.pdf, sm.output.png],
    )
