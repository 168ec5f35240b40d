# Shared definitions of the paper's rules (paper.smk): the inputs of its
# generated sections.  Read after the other helper files: the sections
# report the external comparison, the graph, serve and search studies.
import hxfuse.paper.sections as hxpaper

PAPER_TIMELINES = hxpaper.representative_timelines(config["targets"], config["sweeps"])
# External B (ONNX Runtime, rule `external`, part of `all` where the host
# target runs): the paper reports it, and says it did not run otherwise.
PAPER_EXTERNAL = external_outputs()
# the evidence figure of every timed target (emulated timings are not performance)
PAPER_EVIDENCE = {t: f"results/{t}/figures/evidence.pdf" for t in config["targets"] if not is_emulated(t)}


def evidence_points_of(path):
    """The per-point evidence figure beside evidence.pdf (rule figure_evidence)."""
    return path.replace("evidence.pdf", "evidence_points.pdf")


def paper_workloads():
    """The inputs of the further workloads' sections (hxfuse/paper/workloads.py),
    as {name: path or list or {key: path}}; a workload that is not configured
    has none, and its section says it did not run.

    Task graphs (graph_outputs) and the service mode (serve_outputs) are part
    of `all` wherever their target runs, so the paper asks for them like any
    result.  Fixed vs searched is not part of `all`: its results are inputs
    only when the config declares searches (SEARCH_PLANS, e.g.
    `--config study=search`), never picked up because files happen to exist.
    A check for existing files when the workflow is read would put outputs
    Snakemake does not track into the paper: a search left over from another
    config (another study, other candidates) would be reported as this
    build's, and a search that finishes later would not rebuild the paper.
    Declared in the config, the search is part of the DAG when it is asked
    for and absent otherwise, so a plain `snakemake paper` never starts it
    and the section says in one line how to produce it."""
    out = {}
    if GRAPH_TARGETS and GRAPH_POINTS:
        t = GRAPH_TARGETS[0]
        out |= {
            "graph_summary": f"results/{t}/graph/summary.csv",
            "graph_files": [f"results/{t}/graph/json/{g}.json" for g in GRAPH_POINTS],
            "graph_profiles": {g: f"results/{t}/graph/figures/profile_{g}.pdf" for g in GRAPH_POINTS},
            "graph_speedup": f"results/{t}/graph/figures/speedup.pdf",
            "graph_table": "paper/generated/graph_table.tex",
        }
    if serve_outputs():
        out |= {
            "serve_summary": f"{SERVE_DIR}/summary.csv",
            "serve_figures": {n: f"{SERVE_DIR}/figures/{n}.pdf" for n in ("latency_cdf", "vs_rate", "vs_window")},
            "serve_table": f"{SERVE_DIR}/serve_table.tex",
        }
    if SEARCH_PLANS:
        out |= {
            "search_results": [f"results/{t}/search/{n}/result.json" for (t, n) in SEARCH_PLANS],
            "search_figures": {f"{t}/{n}": f"results/{t}/figures/search_{n}.pdf" for (t, n) in SEARCH_PLANS},
            "search_table": "paper/generated/search_table.tex",
        }
    return out


PAPER_WORKLOADS = paper_workloads()


def _paths(v):
    return list(v.values()) if isinstance(v, dict) else (v if isinstance(v, list) else [v])


PAPER_WORKLOAD_FILES = [f for v in PAPER_WORKLOADS.values() for f in _paths(v)]


def paper_section_outputs():
    """What `all` makes of the paper: its generated sections, every number of
    the text (not the PDF: LaTeX may be missing, rule `paper` builds it).
    Only where the host target runs, like the other host-side outputs of
    `all`: the mechanism section needs the host runner's checks."""
    if "host" not in config["targets"]:
        return []
    # called by `all` in the Snakefile, once rule paper_sections is defined
    return list(rules.paper_sections.output)
