# Workload 4, shared definitions (the rules are in graph.smk): the graph
# study and the paths of its points.
#
# Workload 4: task graphs from model blocks (docs/graphs.md).  The graph
# study (config.graph_study, checked by hxfuse/graph/study.py here, before any
# job) lists graph points; each is built into a graph file, run by hxgraph
# in groups A-D (run.replicates-like replicates of its own, each its own
# target file), checked against numpy, summarised, drawn and tabulated.
# Host target only: the graph runner is the POSIX one.
import hxfuse.graph.study as hxgraphstudy

try:
    GRAPH_STUDY = hxgraphstudy.load_study(config.get("graph_study"))
except hxload.ConfigError as err:
    raise ValueError(f"hxfuse: {err}") from None
GRAPH_POINTS = {p["name"]: p for p in GRAPH_STUDY["points"]}
GRAPH_RUN = GRAPH_STUDY["run"]
GRAPH_TARGETS = [t for t in config["targets"] if t == "host"]


wildcard_constraints:
    gpoint="[A-Za-z][A-Za-z0-9_-]*",


def graph_reps(target, what, ext):
    return [
        f"results/{target}/graph/{what}/{g}/rep{r}{ext}" for g in GRAPH_POINTS for r in range(GRAPH_RUN["replicates"])
    ]


def graph_kernel_sources(wc):
    """What hxgraph is built from (kernels/Makefile's list)."""
    from hxfuse.runner.sources import runner_sources

    srcs = runner_sources("hxgraph", wc.target, hxpreflight.make_vars(config, wc.target), REPO)
    return sorted(os.path.relpath(p) for p in srcs) + [repo_path("kernels", "targets", f"{wc.target}.mk")]


def graph_outputs():
    """What `all` asks of the graph study: checks, summary, figures, table.
    Nothing when the study has no points (graph_study: null): a summary of no
    runs is not a result, and graph_summary cannot concatenate nothing."""
    out = []
    for t in GRAPH_TARGETS if GRAPH_POINTS else []:
        out += graph_reps(t, "check", ".json")
        out += [f"results/{t}/graph/summary.csv", f"results/{t}/graph/trials.csv.gz"]
        for ext in ("pdf", "png"):
            out += [f"results/{t}/graph/figures/profile_{g}.{ext}" for g in GRAPH_POINTS]
            out += [f"results/{t}/graph/figures/timeline_{g}.{ext}" for g in GRAPH_POINTS]
            out.append(f"results/{t}/graph/figures/speedup.{ext}")
    if GRAPH_TARGETS and GRAPH_POINTS:
        out.append("paper/generated/graph_table.tex")
    return out
