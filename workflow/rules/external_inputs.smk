# Input functions and settings of the external target's rules
# (external.smk includes this file; Snakemake's linter wants functions and
# rules in separate files).

EXTERNAL_REPLICATES = int(config.get("run", {}).get("replicates") or 3)
EXTERNAL_DIR = "results/host/external"


def external_points():
    """Host points ONNX Runtime can run: fp32, real kernels (no calibration)."""
    return [p for p in POINTS if p.target == "host" and p.params["precision"] == "fp32"
            and not p.params["calibrate"]]


def external_point(wc):
    return hxconfig.find_point(config, "host", wc.sweep, wc.workload, wc.point)


def ort_raws(wc):
    return [f"{EXTERNAL_DIR}/raw/{wc.sweep}/{wc.workload}/{wc.point}/ort{r}.jsonl"
            for r in range(EXTERNAL_REPLICATES)]


def runner_raws(wc):
    # raw_of (common.smk) gives one file per point, or a list once replicates exist
    raw = raw_of(external_point(wc))
    return [raw] if isinstance(raw, str) else list(raw)


def ort_command(wc, output, log):
    p = external_point(wc)
    seed = int(hxconfig.run_settings(config, "host")["seed"])
    args = [sys.executable, "-m", "hxfuse.ort", "--out", output, *hxconfig.runner_args(config, p),
            "--order-seed", str(seed + 7919 * int(wc.rep)), "--label", f"replicate={wc.rep}",
            "--label", f"point={p.id}"]
    return shlex.join(args) + f" > {shlex.quote(log)} 2>&1"
