"""table: LaTeX results table, evidence table and headline macros."""

from hxfuse import intermediate
from hxfuse.render import latex

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    latex.write_all(
        summaries=sm.input.summaries,
        summaries_json=sm.input.summaries_json,
        template=sm.input.template,
        sweeps=sm.params.sweeps,
        out_table=sm.output.table,
        out_macros=sm.output.macros,
        evidence_template=sm.input.evidence_template,
        out_evidence=sm.output.evidence,
    )
