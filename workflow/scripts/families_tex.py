"""table: the family figures for the paper, one captioned figure per family sweep."""

from pathlib import Path

from hxfuse import intermediate
from hxfuse.sweep import families

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    Path(sm.output.tex).write_text(
        families.families_tex(
            sm.params.targets,
            sm.params.sweeps,
            sm.params.min_effect,
        )
    )
