"""paper_sections: the paper's generated sections (platform, scope, ...)."""
import sys

from hxfuse import paper

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
paper.write_sections(summaries=snakemake.input.summaries,  # noqa: F821
                     summaries_json=snakemake.input.summaries_json,  # noqa: F821
                     out=dict(snakemake.output.items()),  # noqa: F821
                     mechanism=snakemake.input.mechanism)  # noqa: F821
