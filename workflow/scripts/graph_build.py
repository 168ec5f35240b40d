"""graph_build: the graph file of one graph point (hxfuse.graph.build)."""

import sys

from hxfuse.graph.build import build, write_graph

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
p = sm.params.point
write_graph(build(p["model"], p["params"], p["reuse"]), sm.output[0])
