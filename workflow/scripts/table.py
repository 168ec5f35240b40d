"""table: LaTeX results table, evidence table and headline macros."""

import sys

from hxfuse.render import latex

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
latex.write_all(
    summaries=snakemake.input.summaries,  # noqa: F821
    summaries_json=snakemake.input.summaries_json,  # noqa: F821
    template=snakemake.input.template,  # noqa: F821
    sweeps=snakemake.params.sweeps,  # noqa: F821
    out_table=snakemake.output.table,
    out_macros=snakemake.output.macros,  # noqa: F821
    evidence_template=snakemake.input.evidence_template,  # noqa: F821
    out_evidence=snakemake.output.evidence,
)  # noqa: F821
