# run: one job per sweep point.  The runner does warm-up and interleaved A-D
# trials and writes JSON Lines (docs/runner.md).  workflow/scripts/run_point.py
# runs it under `timeout` (config run.timeout_s): a hung or crashed runner is
# killed, its point fails with a message naming it and its log, other points
# go on with --keep-going, and nothing is moved into place unless the runner
# finished (exit 0, or 4 = checksum mismatch recorded, which `check` then
# marks failed).  Outputs are written in a work directory and moved into
# place only on success.
#
# Targets: the runner is executed through the target's RUN_PREFIX (nothing
# on the host, qemu-hexagon for hexagon-qemu, kernels/hexagon/device.sh run
# -- for the phone, which pushes, runs under ADSP_LIBRARY_PATH and pulls the
# JSON Lines and .npy back; sim.sh for the simulator).
#
# Exclusive device: every run job takes the `device` resource (limit 1 in
# workflow/profiles/default/profile.yaml) and all cores (threads), so on the
# host no build or analysis job runs beside a measurement.
rule run:
    input:
        runner="results/{target}/stage/hxrun",
        manifest="results/{target}/stage/deploy.json",
    output:
        jsonl=f"results/{{target}}/raw/{POINT_WC}.jsonl",
        provenance=f"results/{{target}}/raw/{POINT_WC}.provenance.json",
        npy=directory(f"results/{{target}}/npy/{POINT_WC}"),
    params:
        # the runner's arguments: a change to this point's parameters reruns
        # this point only (rerun trigger `params`)
        args=lambda wc: hxconfig.runner_args(config, point_of(wc)),
        prefix=lambda wc: TARGET_PREFIX[wc.target],
    resources:
        device=1,
        # not a param: changing the timeout reruns nothing (per target:
        # target_settings.<target>.run.timeout_s over run.timeout_s)
        timeout_s=lambda wc: int(hxconfig.run_settings(config, wc.target)["timeout_s"]),
    threads: all_cores
    log:
        f"logs/{{target}}/run/{POINT_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/run_point.py"
