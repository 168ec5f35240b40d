"""graph_figure_profile: ready nodes per topological step and engine class."""

import json
import sys

from hxfuse.graph import plots as graphplots
from hxfuse.graph.profile import ready_profile

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
graph = json.load(open(sm.input.graph))
graphplots.profile_figure(ready_profile(graph), f"ready profile: {sm.params.label}", [sm.output.pdf, sm.output.png])
