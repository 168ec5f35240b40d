"""table: the family figures for the paper, one captioned figure per family sweep."""

import sys
from pathlib import Path

from hxfuse.sweep import families

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
Path(snakemake.output.tex).write_text(  # noqa: F821
    families.families_tex(
        snakemake.params.targets,
        snakemake.params.sweeps,  # noqa: F821
        snakemake.params.min_effect,
    )
)  # noqa: F821
