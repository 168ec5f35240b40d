"""paper_sections: the paper's generated sections (platform, scope,
mechanism, answers, evidence, limitations, figure layout; the sections of
the task graphs, the request stream and fixed vs searched)."""

from hxfuse import intermediate
from hxfuse.paper import sections as paper

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    paper.write_sections(
        summaries=sm.input.summaries,
        summaries_json=sm.input.summaries_json,
        out=dict(sm.output.items()),
        mechanism=sm.input.mechanism,
        sweeps=sm.params.sweeps,
        timelines=sm.params.timelines,
        evidence_figures=sm.params.evidence,
        external_csv=(sm.input.external or [None])[0],
        workloads=sm.params.workloads,
    )
