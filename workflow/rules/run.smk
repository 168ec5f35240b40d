# run: one job per replicate of a sweep point (run.replicates independent
# runner invocations, replicate r with seed run.seed + r; each its own target
# file, so one replicate can be rerun alone).  The runner does warm-up and
# interleaved A-D trials and writes JSON Lines (docs/runner.md).
# hxfuse.runner.runpoint runs it in its own process group with run.timeout_s
# (fractions honoured): a hung or crashed runner is killed, its replicate
# fails with a message naming it, how it ended and its log; on SIGINT/SIGTERM
# (or when Snakemake is gone) the runner's group is killed before the job
# exits; other points go on with --keep-going; nothing is moved into place
# unless the runner finished (exit 0, or 4 = checksum mismatch recorded, which
# `check` then marks failed) and its end record's digest matches.  Outputs
# are written in a work directory and moved into place only on success.
#
# Targets: the runner is executed through the target's RUN_PREFIX (nothing
# on the host, qemu-hexagon for hexagon-qemu, kernels/hexagon/device.sh run
# -- for the phone, which pushes, runs under ADSP_LIBRARY_PATH and pulls the
# JSON Lines and .npy back; sim.sh for the simulator).
#
# Exclusive device: every run job takes the `device` resource and all cores
# (threads), so on the host no build or analysis job runs beside a
# measurement.  The limit is 1, or the number of phones of the hexagon
# target's device farm (target_settings.hexagon.device_serials; set in
# common.smk): there a run job takes one thread (the measurement is on the
# phone) and device.sh leases one free phone per run through a lock file, so
# two runs never share a phone; the runner's records name it
# (labels.device_serial) and the provenance sidecar too (device_serial).
rule run:
    input:
        runner="results/{target}/stage/hxrun",
        manifest="results/{target}/stage/deploy.json",
        code=CODE["run_point"],
        # SDK targets: the first-day ladder passed first (selftest.smk)
        selftest=selftest_gate,
    output:
        jsonl=f"results/{{target}}/raw/{REP_WC}.jsonl",
        provenance=f"results/{{target}}/raw/{REP_WC}.provenance.json",
        npy=directory(f"results/{{target}}/npy/{REP_WC}"),
    params:
        # the runner's arguments: a change to this point's parameters reruns
        # this point only (rerun trigger `params`)
        args=lambda wc: hxpoints.runner_args(config, point_of(wc), int(wc.rep)),
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        env=lambda wc: hxpreflight.run_env(config, wc.target),
        point=run_point_info,
        emulated=lambda wc: is_emulated(wc.target),
    resources:
        device=1,
        # not a param: changing the timeout reruns nothing (per target:
        # target_settings.<target>.run.timeout_s over run.timeout_s; a string
        # because Snakemake resources are integers or strings)
        timeout_s=lambda wc: str(float(hxparams.run_settings(config, wc.target)["timeout_s"])),
    threads: all_cores
    log:
        f"logs/{{target}}/run/{REP_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/run_point.py"
