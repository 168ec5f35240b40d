# run: one job per sweep point.  The runner does warm-up and interleaved A-D
# trials and writes JSON Lines.  It runs under `timeout` (config
# run.timeout_s): a hung or crashed runner is killed, its point fails with a
# message in the log, other points go on with --keep-going, and nothing is
# moved into place unless the runner finished (exit 0, or 4 = checksum
# mismatch recorded, which `check` then marks failed).
#
# Exclusive device: every run job takes the `device` resource (limit 1 in
# workflow/profiles/default/profile.yaml) and, on the host, all cores, so no
# build or analysis job runs beside a measurement.
rule run:
    input:
        runner="results/{target}/stage/hxrun",
        manifest="results/{target}/stage/deploy.json",
    output:
        jsonl="results/{target}/raw/" + POINT_WC + ".jsonl",
        provenance="results/{target}/raw/" + POINT_WC + ".provenance.json",
        npy=directory("results/{target}/npy/" + POINT_WC),
    params:
        args=lambda wc: " ".join(hxconfig.runner_args(config, point_of(wc))),
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        pid=lambda wc: f"{wc.target}/{wc.sweep}/{wc.workload}/{wc.point}",
        work=lambda wc, output: output.jsonl + ".work",
    resources:
        device=1,
        timeout_s=lambda wc: int(config["run"]["timeout_s"]),
    threads: workflow.cores
    log:
        "logs/{target}/run/" + POINT_WC + ".log",
    conda:
        "../../envs/analysis.yaml"
    shell:
        r"""
        work={params.work}
        rm -rf "$work" && mkdir -p "$work/npy"
        load=$({PY} -m hxfuse.provenance loadavg)
        rc=0
        timeout --kill-after=10 {resources.timeout_s} {params.prefix} {input.runner} \
            --out "$work/trials.jsonl" --npy-dir "$work/npy" \
            --label point={params.pid} {params.args} > {log} 2>&1 || rc=$?
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            msg="hxfuse: point {params.pid}: runner killed after {resources.timeout_s} s (config run.timeout_s); no result kept"
        elif [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
            msg="hxfuse: point {params.pid}: runner exited with status $rc; no result kept"
        elif ! tail -n 1 "$work/trials.jsonl" 2>/dev/null | grep -q '"record" *: *"end"'; then
            msg="hxfuse: point {params.pid}: runner output has no end record; no result kept"
        else
            msg=""
        fi
        if [ -n "$msg" ]; then
            echo "$msg (log: {log})" | tee -a {log} >&2
            rm -rf "$work"
            exit 1
        fi
        {PY} -m hxfuse.provenance sidecar --point {params.pid} --jsonl "$work/trials.jsonl" \
            --runner {input.runner} --load-before "$load" --out "$work/provenance.json" 2>> {log}
        rm -rf {output.npy}
        mv "$work/npy" {output.npy}
        mv "$work/provenance.json" {output.provenance}
        mv "$work/trials.jsonl" {output.jsonl}
        rm -rf "$work"
        """
