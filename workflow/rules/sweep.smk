# The sweeps: run every replicate of every point, check it, aggregate the
# target's summary, report tables, figures, timelines, the paper's tables and
# the mechanism checks (helpers: common.smk).


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
# JSON Lines and .npy back; sim.sh for the simulator).  On the phone the
# runner is hxrun-ap in mode ap (target_settings.hexagon.mode, the default)
# and hxrun in mode dsp-only (stage_runner).
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
        # hxrun, or the AP driver hxrun-ap in the phone's mode ap (common.smk)
        runner=stage_runner,
        manifest="results/{target}/stage/deploy.json",
        code=CODE["run_point"],
        # SDK targets: the first-day ladder passed first (build.smk, rule selftest_target)
        selftest=selftest_gate,
    output:
        jsonl=f"results/{{target}}/raw/{REP_WC}.jsonl",
        provenance=f"results/{{target}}/raw/{REP_WC}.provenance.json",
        # the verification round's arrays: the check's input only, deleted
        # once it has run (--notemp keeps them; docs/outputs.md)
        npy=temp(directory(f"results/{{target}}/npy/{REP_WC}")),
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
        # on Slurm: the node whole, or one phone (common.smk)
        gres=run_gres,
        slurm_extra=run_slurm_extra,
        # not a param: changing the timeout reruns nothing (per target:
        # target_settings.<target>.run.timeout_s over run.timeout_s; a string
        # because Snakemake resources are integers or strings)
        timeout_s=lambda wc: str(float(hxparams.run_settings(config, wc.target)["timeout_s"])),
        # measure, don't veto (hxfuse.runner.quiet): the bounded wait for a
        # quiet machine and the reruns of a disturbed replicate; not params,
        # so changing them reruns nothing
        quiet_wait_s=lambda wc: str(float(hxparams.run_settings(config, wc.target).get("quiet_wait_s", 0))),
        max_reruns=lambda wc: str(int(hxparams.run_settings(config, wc.target).get("max_reruns", 0))),
        # the analysis's limits of other work and of hypervisor steal
        # (hxfuse.analysis.environment)
        busy_per_core=str(hxenv.BUSY_PER_CORE),
        max_steal_share=str(hxenv.MAX_STEAL_SHARE),
    threads: all_cores
    log:
        f"logs/{{target}}/run/{REP_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/run_point.py"


# check: correctness of one replicate against a numpy reference computed from
# the verification round's .npy inputs, every trial's checksums against the
# verified ones, and the raw files' integrity (the end record's record count
# and digest, every file's SHA-256 against the provenance sidecar;
# hxfuse/runner/checks.py, hxfuse/runner/integrity.py).  A failing point is
# *marked* failed (the job succeeds) so that the summary can list it; it never
# enters a speedup.  The check is the .npy files' only reader: Snakemake
# deletes them when it has run (temp in rule run), so a default `all` keeps
# megabytes, not gigabytes; their hashes stay in the sidecar.
rule check:
    input:
        jsonl=f"results/{{target}}/raw/{REP_WC}.jsonl",
        npy=f"results/{{target}}/npy/{REP_WC}",
        provenance=f"results/{{target}}/raw/{REP_WC}.provenance.json",
        code=CODE["check"],
    output:
        f"results/{{target}}/check/{REP_WC}.json",
    params:
        rtol=config["check"]["f32_rtol"],
        atol=config["check"]["f32_atol"],
    log:
        f"logs/{{target}}/check/{REP_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/check.py"


# aggregate: the tidy per-trial table of every replicate of every point of a
# target and the per-point summary (hxfuse.analysis.aggregate: medians with bootstrap
# intervals, paired speedups, overlap efficiency, verdicts).  Failed points
# are listed in summary.json and never get a speedup.  Raw files whose
# SHA-256 differs from their provenance sidecar are refused.  Every value
# comes through inputs and params (points with x, label and parameters,
# analysis settings, config hash), so a change to any reruns it.
rule aggregate:
    input:
        raw=lambda wc: [f for p in target_points(wc.target) for f in all_reps(p, raw_of)],
        checks=lambda wc: [f for p in target_points(wc.target) for f in all_reps(p, check_of)],
        provenance=lambda wc: [
            f.replace(".jsonl", ".provenance.json") for p in target_points(wc.target) for f in all_reps(p, raw_of)
        ],
        code=CODE["aggregate"],
    output:
        trials="results/{target}/trials.csv.gz",
        summary="results/{target}/summary.csv",
        summary_json="results/{target}/summary.json",
    params:
        points=lambda wc: hxpoints.aggregate_points(config, wc.target),
        analysis=config["analysis"],
        tolerance=config["check"],
        config_hash=CONFIG_HASH,
        target_info=lambda wc: hxtargets.info(wc.target),
    log:
        "logs/{target}/aggregate.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/aggregate.py"


# report tables: the verdict table (every point x workload: intervals,
# per-task slowdown, host/device split, overlap evidence, verdict, conclusion,
# next step, noise and environment warnings) and the environment/provenance
# table, as HTML pages for `snakemake --report` (hxfuse.sweep.report).
rule report_tables:
    input:
        summary="results/{target}/summary.csv",
        summary_json="results/{target}/summary.json",
        code=CODE["report_tables"],
    output:
        verdicts=report(
            "results/{target}/report/verdicts.html",
            caption="../report/verdicts.rst",
            category="Verdicts",
            subcategory="{target}",
        ),
        verdicts_csv="results/{target}/verdicts.csv",
        environment=report(
            "results/{target}/report/environment.html",
            caption="../report/environment.rst",
            category="Environment",
            subcategory="{target}",
        ),
    log:
        "logs/{target}/report_tables.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/report_tables.py"


# figures: seaborn figures, PDF for the paper and PNG for viewing; the PNG is
# the one marked for `snakemake --report`, which shows it as an image in any
# browser (a PDF there depends on the browser's PDF viewer).  Inputs are
# results and the code the scripts import (CODE, derived from the imports), so
# editing hxfuse/sweep/plots.py or a script reruns figures, never trials.  The
# timeline of a point is drawn from its replicate 0.


rule figure_timeline:
    input:
        jsonl=f"results/{{target}}/raw/{POINT_WC}/rep0.jsonl",
        check=f"results/{{target}}/check/{POINT_WC}/rep0.json",
        code=CODE["figure_timeline"],
    output:
        pdf=f"results/{{target}}/figures/timeline/{POINT_WC}.pdf",
        png=report(
            f"results/{{target}}/figures/timeline/{POINT_WC}.png",
            caption="../report/timeline.rst",
            category="Timelines",
            subcategory="{target}",
            labels={"sweep": "{sweep}", "workload": "{workload}", "point": "{point}"},
        ),
    log:
        f"logs/{{target}}/figures/timeline/{POINT_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_timeline.py"


rule figure_speedup:
    input:
        summary="results/{target}/summary.csv",
        code=CODE["figure_speedup"],
    output:
        pdf="results/{target}/figures/speedup_{sweep}.pdf",
        png=report(
            "results/{target}/figures/speedup_{sweep}.png",
            caption="../report/speedup.rst",
            category="Speedup",
            subcategory="{target}",
            labels={"sweep": "{sweep}"},
        ),
    params:
        sweep=lambda wc: config["sweeps"][wc.sweep],
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/{target}/figures/speedup_{sweep}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_speedup.py"


rule figure_slowdown:
    input:
        trials="results/{target}/trials.csv.gz",
        code=CODE["figure_slowdown"],
    output:
        pdf="results/{target}/figures/slowdown_{sweep}.pdf",
        png=report(
            "results/{target}/figures/slowdown_{sweep}.png",
            caption="../report/slowdown.rst",
            category="Slowdown",
            subcategory="{target}",
            labels={"sweep": "{sweep}"},
        ),
    params:
        sweep=lambda wc: config["sweeps"][wc.sweep],
    log:
        "logs/{target}/figures/slowdown_{sweep}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_slowdown.py"


# one figure per family sweep (a sweep with `family`: granularity, ratio,
# share, bandwidth, wait): speedups with the minimum-effect band over the
# measured x (alone medians) where the sweep says `x_measured`, and below
# them the quantity the family is about (hxfuse.sweep.families)
rule figure_family:
    input:
        summary="results/{target}/summary.csv",
        code=CODE["figure_family"],
    output:
        pdf="results/{target}/figures/family_{sweep}.pdf",
        png=report(
            "results/{target}/figures/family_{sweep}.png",
            caption="../report/family.rst",
            category="Families",
            subcategory="{target}",
            labels={"sweep": "{sweep}"},
        ),
    params:
        sweep=lambda wc: config["sweeps"][wc.sweep],
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/{target}/figures/family_{sweep}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_family.py"


# timeline: a Chrome trace / Perfetto JSON per point (opens in
# ui.perfetto.dev or chrome://tracing).  One process per workload x group,
# one thread per lane (host, then the engines), the representative round of
# each group (median makespan) of the point's replicate 0, "X" slices in microseconds relative to the
# trial's first submit.  Built by hxfuse.analysis.timeline.perfetto_trace from
# hxfuse.analysis.timeline.gantt_intervals, the same intervals the Gantt figures draw
# (rule figure_timeline); the rule fails if the trace is malformed
# (hxfuse.analysis.timeline.trace_problems).
rule perfetto:
    input:
        jsonl=f"results/{{target}}/raw/{POINT_WC}/rep0.jsonl",
        check=f"results/{{target}}/check/{POINT_WC}/rep0.json",
        code=CODE["perfetto"],
    output:
        trace=report(
            f"results/{{target}}/timeline/{POINT_WC}.perfetto.json",
            caption="../report/perfetto.rst",
            category="Perfetto traces",
            subcategory="{target}",
            labels={"sweep": "{sweep}", "workload": "{workload}", "point": "{point}"},
        ),
    log:
        f"logs/{{target}}/timeline/{POINT_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/perfetto.py"


# table: the LaTeX results and evidence tables (Jinja2, booktabs) and a macros
# file of headline numbers.
rule table:
    input:
        summaries=expand("results/{target}/summary.csv", target=config["targets"]),
        summaries_json=expand("results/{target}/summary.json", target=config["targets"]),
        figures=[f for t in config["targets"] for f in sweep_figures(t, "pdf")],
        timelines=[timeline_of(p, "pdf") for p in POINTS],
        template=repo_path("workflow", "templates", "results_table.tex.j2"),
        evidence_template=repo_path("workflow", "templates", "evidence_table.tex.j2"),
        code=CODE["table"],
    output:
        table="paper/generated/results_table.tex",
        evidence="paper/generated/evidence_table.tex",
        macros="paper/generated/results_macros.tex",
    params:
        sweeps=config["sweeps"],
    log:
        "logs/table.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/table.py"


# the family figures for the paper (paper/generated/families.tex): one
# captioned figure per family sweep and target, saying what the family varies
# and how to read it
rule families_tex:
    input:
        figures=lambda wc: [f for t in config["targets"] for f in family_figures(t, "pdf")],
        code=CODE["families_tex"],
    output:
        tex="paper/generated/families.tex",
    params:
        targets=[t for t in config["targets"] if not is_emulated(t)],
        sweeps=config["sweeps"],
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/families_tex.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/families_tex.py"


# mechanism: the fused executor's mechanism checks (hxfuse/runner/mechanism.py) run
# on the host runner and recorded as data for the paper (about 5-30 s).  The
# checks pin threads and read timestamps, so the job is exclusive like a
# measurement (device resource, all cores).
rule mechanism:
    input:
        runner="results/host/build/hxrun",
        code=CODE["mechanism"],
    output:
        "results/host/mechanism.json",
    log:
        "logs/host/mechanism.log",
    resources:
        device=1,
    threads: all_cores
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/mechanism.py"
