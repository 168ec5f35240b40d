"""paper_sections: the paper's generated sections (platform, scope,
mechanism, answers, evidence, limitations, figure layout; the sections of
the task graphs, the request stream and fixed vs searched)."""

import sys

from hxfuse.paper import sections as paper

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
paper.write_sections(
    summaries=snakemake.input.summaries,  # noqa: F821
    summaries_json=snakemake.input.summaries_json,  # noqa: F821
    out=dict(snakemake.output.items()),  # noqa: F821
    mechanism=snakemake.input.mechanism,  # noqa: F821
    sweeps=snakemake.params.sweeps,  # noqa: F821
    timelines=snakemake.params.timelines,  # noqa: F821
    evidence_figures=snakemake.params.evidence,  # noqa: F821
    external_csv=(snakemake.input.external or [None])[0],  # noqa: F821
    workloads=snakemake.params.workloads,
)  # noqa: F821
