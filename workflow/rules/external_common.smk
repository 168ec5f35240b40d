# Input functions and settings of the external target's rules (external.smk;
# Snakemake's linter wants functions and rules in separate files).

import hxfuse.external.ort as hxort

# as many ONNX Runtime invocations per point as the runner has replicates
EXTERNAL_REPLICATES = hxparams.replicates(config, "host") if "host" in config["targets"] else 1
EXTERNAL_DIR = "results/host/external"


def external_points():
    """Host points ONNX Runtime can run: those whose every option the harness
    honours or records (fp32, real kernels, no option that changes the tasks'
    work in a way ONNX Runtime cannot express: hxfuse.external.ort.args_problems)."""
    return [p for p in POINTS if p.target == "host" and not hxort.args_problems(hxpoints.runner_args(config, p))]


def external_default_points():
    """The middle point of the first sweep, every workload of that sweep, where
    ONNX Runtime can run it (the point the paper's timelines show too)."""
    if "host" not in config["targets"] or not config["sweeps"]:
        return []
    sweep, sw = next(iter(config["sweeps"].items()))
    mid = sw["points"][len(sw["points"]) // 2]["name"]
    return [p for p in external_points() if p.sweep == sweep and p.point == mid]


def external_outputs():
    """What `all` adds: the comparison of the default points and its table."""
    if not external_default_points():
        return []
    return ["results/host/external.csv", "paper/generated/external_table.tex"]


def external_timeline_outputs():
    """What `all` adds beside: ONNX Runtime's timelines at the default points."""
    return external_timelines(external_default_points())


def external_timelines(points):
    """ONNX Runtime's timeline figure (PDF, PNG) and Perfetto trace of each
    point, from its replicate 0 (rules ort_figure_timeline, ort_perfetto)."""
    return [
        f"{EXTERNAL_DIR}/{kind}/{p.sweep}/{p.workload}/{p.point}.{ext}"
        for p in points
        for kind, ext in (("figures/timeline", "pdf"), ("figures/timeline", "png"), ("timeline", "perfetto.json"))
    ]


def external_point(wc):
    return hxpoints.find_point(config, "host", wc.sweep, wc.workload, wc.point)


def ort_raws(wc):
    return [f"{EXTERNAL_DIR}/raw/{wc.sweep}/{wc.workload}/{wc.point}/ort{r}.jsonl" for r in range(EXTERNAL_REPLICATES)]


def ort_match_raw(wc):
    """The runner replicate ONNX Runtime's replicate *rep* is matched to and
    paired with (the same index; replicate 0 where the runner has fewer)."""
    p = external_point(wc)
    reps = list(replicates_of(p))
    return raw_of(p, int(wc.rep) if int(wc.rep) in reps else reps[0])


def runner_raws(wc):
    # every replicate of the point's hxrun run (common.smk)
    return all_reps(external_point(wc), raw_of)
