# check: correctness of one point against a numpy reference computed from the
# verification round's .npy inputs, and every trial's checksums against the
# verified ones (hxfuse/checks.py).  A failing point is *marked* failed (the
# job succeeds) so that the summary can list it; it never enters a speedup.
rule check:
    input:
        jsonl=f"results/{{target}}/raw/{POINT_WC}.jsonl",
        npy=f"results/{{target}}/npy/{POINT_WC}",
        code=str(REPO / "hxfuse" / "checks.py"),
    output:
        f"results/{{target}}/check/{POINT_WC}.json",
    params:
        rtol=config["check"]["f32_rtol"],
        atol=config["check"]["f32_atol"],
    log:
        f"logs/{{target}}/check/{POINT_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/check.py"
