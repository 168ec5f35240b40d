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
        ),
    log:
        f"logs/{{target}}/timeline/{POINT_WC}.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/perfetto.py"
