# ONNX Runtime as group B (docs/ort.md): every host fp32 point run again by
# `python -m hxfuse.ort` (groups A_ort, B_ort, B_ort_graph, alone), compared
# with the same point's hxrun raw file(s) by hxfuse.external, one CSV row per
# point x workload, all gathered in results/host/external.csv.
# Not part of `all`: `snakemake --cores 4 external`.
#
# Replicates: run.replicates where the config has it, else 3 independent
# invocations per point, each its own target file so one can be rerun alone;
# all use the point's seed for the inputs (hxrun's data) and a new seed for
# the round order.

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


# One ONNX Runtime invocation: takes the device and every core like `run`, so
# nothing runs beside it.
rule ort_run:
    output:
        jsonl=f"{EXTERNAL_DIR}/raw/{{sweep}}/{{workload}}/{{point}}/ort{{rep}}.jsonl",
    params:
        args=lambda wc: hxconfig.runner_args(config, external_point(wc)),
    wildcard_constraints:
        rep=r"\d+",
    resources:
        device=1,
    threads: all_cores
    log:
        f"logs/host/external/{{sweep}}/{{workload}}/{{point}}/ort{{rep}}.log",
    run:
        shell(ort_command(wildcards, output.jsonl, log[0]))


rule external_point:
    input:
        ort=ort_raws,
        runner=runner_raws,
    output:
        csv=f"{EXTERNAL_DIR}/{{sweep}}/{{workload}}/{{point}}.csv",
    params:
        python=sys.executable,
        min_effect=config["analysis"].get("min_effect", 0.03),
        bootstrap=config["analysis"]["bootstrap"],
    log:
        "logs/host/external/{sweep}/{workload}/{point}.log",
    shell:
        "{params.python:q} -m hxfuse.external --ort {input.ort:q} --runner {input.runner:q} --out {output.csv:q}"
        " --min-effect {params.min_effect} --bootstrap {params.bootstrap}"
        " --label sweep={wildcards.sweep} --label point={wildcards.point} > {log:q} 2>&1"


rule external:
    input:
        lambda wc: [f"{EXTERNAL_DIR}/{p.sweep}/{p.workload}/{p.point}.csv" for p in external_points()],
    output:
        "results/host/external.csv",
    run:
        from hxfuse.external import concat_csv

        concat_csv(input, output[0])
