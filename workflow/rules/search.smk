# Fixed vs searched (docs/families.md, "Fixed vs searched"): for each search
# of the config (`searches`, e.g. config/studies/search.yaml) and target
# with real timings,
#   search_run     one runner invocation of group D per candidate (the plan's
#                  candidates are fixed before any job: hxfuse/search/space.py);
#   search_select  checks every candidate, tabulates its D medians and picks
#                  the best that passed -> search.json, candidates.csv
#                  (a checkpoint: the confirmation's arguments are the best's);
#   search_confirm the best and the fixed default in interleaved pairs of
#                  invocations (groups A, C, D) -> confirm/ (hxfuse/search/confirm.py);
#   search_result  checks them, regret with its paired interval, D/A and D/C
#                  of each, the verdict -> result.json (hxfuse/search/compare.py);
#   figure_search, search_table: the figure and the LaTeX table.
# Not part of `all`: `snakemake --cores 4 searches --config study=search`.

# (Definitions: search_common.smk.)


# One candidate: the `run` job's runner call (hxfuse.runner.runpoint), with the
# search's own rounds and group D only; a candidate whose runner fails is kept
# as a failed candidate (no number) instead of stopping the search.  Takes
# the device and every core.
rule search_run:
    input:
        runner=stage_runner,
        manifest="results/{target}/stage/deploy.json",
        code=CODE["search_run"],
        # SDK targets: the first-day ladder passed first (build.smk, rule selftest_target)
        selftest=selftest_gate,
    output:
        jsonl=f"{SEARCH_DIR}/raw/{{cand}}.jsonl",
        provenance=f"{SEARCH_DIR}/raw/{{cand}}.provenance.json",
        npy=directory(f"{SEARCH_DIR}/npy/{{cand}}"),
    params:
        args=lambda wc: search_candidate(wc)["args"],
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        env=lambda wc: hxpreflight.run_env(config, wc.target),
        point=search_run_info,
        emulated=lambda wc: is_emulated(wc.target),
    resources:
        device=1,
        gres=run_gres,
        slurm_extra=run_slurm_extra,
        timeout_s=lambda wc: str(float(hxparams.run_settings(config, wc.target)["timeout_s"])),
    threads: all_cores
    log:
        f"logs/{{target}}/search/{{search}}/run/{{cand}}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/search_run.py"


checkpoint search_select:
    input:
        raw=lambda wc: search_files(wc, "raw"),
        npy=lambda wc: search_files(wc, "npy"),
        provenance=lambda wc: search_files(wc, "provenance"),
        code=CODE["search_select"],
    output:
        json=f"{SEARCH_DIR}/search.json",
        csv=f"{SEARCH_DIR}/candidates.csv",
    params:
        plan=search_plan_light,
        tolerance=config["check"],
        analysis=config["analysis"],
    log:
        f"logs/{{target}}/search/{{search}}/select.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/search_select.py"


rule search_confirm:
    input:
        search=search_json_of,
        runner=stage_runner,
        manifest="results/{target}/stage/deploy.json",
        code=CODE["search_confirm"],
        # SDK targets: the first-day ladder passed first (build.smk, rule selftest_target)
        selftest=selftest_gate,
    output:
        directory(f"{SEARCH_DIR}/confirm"),
    params:
        fixed_args=lambda wc: search_plan(wc)["fixed"]["confirm_args"],
        best=search_best,
        prefix=lambda wc: TARGET_PREFIX[wc.target],
        env=lambda wc: hxpreflight.run_env(config, wc.target),
        point=lambda wc: {
            "target": wc.target,
            "sweep": hxsearchspace.SWEEP_PREFIX + wc.search,
            "workload": search_plan(wc)["workload"],
            "fixed_params": search_plan(wc)["fixed"]["params"],
            "point_hash": None,
        },
    resources:
        device=1,
        gres=run_gres,
        slurm_extra=run_slurm_extra,
        timeout_s=lambda wc: str(float(hxparams.run_settings(config, wc.target)["timeout_s"])),
    threads: all_cores
    log:
        f"logs/{{target}}/search/{{search}}/confirm.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/search_confirm.py"


rule search_result:
    input:
        search=f"{SEARCH_DIR}/search.json",
        confirm=f"{SEARCH_DIR}/confirm",
        code=CODE["search_result"],
    output:
        json=f"{SEARCH_DIR}/result.json",
    params:
        tolerance=config["check"],
        analysis=config["analysis"],
    log:
        f"logs/{{target}}/search/{{search}}/result.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/search_result.py"


rule figure_search:
    input:
        result=f"{SEARCH_DIR}/result.json",
        code=CODE["figure_search"],
    output:
        pdf="results/{target}/figures/search_{search}.pdf",
        png=report(
            "results/{target}/figures/search_{search}.png",
            caption="../report/search.rst",
            category="Fixed vs searched",
            subcategory="{target}",
            labels={"search": "{search}"},
        ),
    params:
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/{target}/figure_search_{search}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figure_search.py"


rule search_table:
    input:
        results=lambda wc: [f"results/{t}/search/{n}/result.json" for (t, n) in SEARCH_PLANS],
        template=repo_path("workflow", "templates", "search_table.tex.j2"),
        code=CODE["search_table"],
    output:
        "paper/generated/search_table.tex",
    params:
        min_effect=config["analysis"]["min_effect"],
    log:
        "logs/search_table.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/search_table.py"


rule searches:
    input:
        search_outputs(),
