"""graph_figure_profile: ready nodes per topological step and engine class."""

from hxfuse import intermediate
from hxfuse.graph import plots as graphplots
from hxfuse.graph.profile import ready_profile

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    graph = intermediate.read_json_object(sm.input.graph)
    graphplots.profile_figure(ready_profile(graph), f"ready profile: {sm.params.label}", [sm.output.pdf, sm.output.png])
