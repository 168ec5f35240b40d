# Shared definitions of the service mode (rules: serve.smk; docs/serve.md).
# Host target only (hxserve's dispatcher sleeps on a Linux futex
# with a timeout).  The configuration (config.serve, config.serve_study) is
# validated here, when the workflow is read, before any job
# (hxfuse/serve/config.py).
import hxfuse.serve.config as hxserve_cfg

try:
    SERVE = hxserve_cfg.resolve(config)
except hxserve_cfg.ServeConfigError as err:
    raise ValueError(f"hxfuse: {err}") from None
SERVE_POINTS = {p.name: p for p in hxserve_cfg.points(SERVE)}
# A serve study writes beside the default point, not over it (its point
# names may repeat the config's).
_serve_study = config.get("serve_study")
SERVE_DIR = "results/host/serve" + (f"-{Path(_serve_study).stem}" if _serve_study else "")
SERVE_LOG = SERVE_DIR.replace("results/", "logs/", 1)
SERVE_REP = "{spoint}/rep{rep}"


wildcard_constraints:
    spoint="|".join(sorted(SERVE_POINTS, key=len, reverse=True)),


def serve_sources(wc):
    """What hxserve is built from (kernels/Makefile's list, host target)."""
    from hxfuse.runner.sources import runner_sources

    srcs = runner_sources("hxserve", "host", hxpreflight.make_vars(config, "host"), REPO)
    return sorted(os.path.relpath(p) for p in srcs) + [repo_path("kernels", "targets", "host.mk")]


def serve_reps(path_of):
    return [path_of(p, r) for p in SERVE_POINTS for r in range(SERVE["replicates"])]


def serve_raw(p, r):
    return f"{SERVE_DIR}/raw/{p}/rep{r}.jsonl"


def serve_check_of(p, r):
    return f"{SERVE_DIR}/check/{p}/rep{r}.json"


def serve_provenance_of(p, r):
    return f"{SERVE_DIR}/raw/{p}/rep{r}.provenance.json"


def serve_run_info(wc):
    """The serve_run job's description of its replicate (its sidecar records
    it; the run wrapper's messages and label name it target/sweep/workload/
    point/rep).  The serve directory stands for the sweep, so a serve
    study's runs are named apart from the default point's."""
    p = SERVE_POINTS[wc.spoint]
    return {
        "target": "host",
        "sweep": Path(SERVE_DIR).name,
        "workload": "serve",
        "point": p.name,
        "replicate": int(wc.rep),
        "params": {"rate": p.rate, "window_us": p.window_us},
    }


SERVE_FIGURES = [
    f"{SERVE_DIR}/figures/{name}.{ext}" for name in ("latency_cdf", "vs_rate", "vs_window") for ext in ("pdf", "png")
]
# the figures' names in `snakemake --report` (category "Service mode")
SERVE_FIGURE_LABELS = {
    "latency_cdf": "latency CDF",
    "vs_rate": "against the arrival rate",
    "vs_window": "against the pairing window",
}


def serve_report_figures():
    """SERVE_FIGURES as the outputs of serve_figures, with the PNGs marked
    for `snakemake --report`, each with its caption.  Marked there only: the
    same paths flagged in an input list (serve_all, all) would be registered
    with the job of that list instead."""
    out = []
    for f in SERVE_FIGURES:
        name, ext = Path(f).stem, Path(f).suffix
        caption, labels = f"../report/serve_{name}.rst", {"figure": SERVE_FIGURE_LABELS[name]}
        sub = SERVE_DIR.removeprefix("results/")
        out.append(
            f if ext != ".png" else report(f, caption=caption, category="Service mode", subcategory=sub, labels=labels)
        )
    return out


def serve_outputs():
    """What `all` makes of the service mode: nothing when the host is not a
    configured target (hxserve measures the host; `serve_all` still runs it)
    or when `serve: null` turns it off, as `graph_study: null` does the graph
    study (`serve_all` then runs the defaults)."""
    if "host" not in config["targets"] or ("serve" in config and config["serve"] is None):
        return []
    return (
        serve_reps(serve_check_of)
        + SERVE_FIGURES
        + [f"{SERVE_DIR}/summary.csv", f"{SERVE_DIR}/summary.json", f"{SERVE_DIR}/serve_table.tex"]
    )
