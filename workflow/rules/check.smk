# check: correctness of one replicate against a numpy reference computed from
# the verification round's .npy inputs, every trial's checksums against the
# verified ones, and the raw file's integrity (its end record's record count
# and digest; hxfuse/runner/checks.py, hxfuse/runner/integrity.py).  A failing point is *marked* failed (the
# job succeeds) so that the summary can list it; it never enters a speedup.
rule check:
    input:
        jsonl=f"results/{{target}}/raw/{REP_WC}.jsonl",
        npy=f"results/{{target}}/npy/{REP_WC}",
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
