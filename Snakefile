# hxfuse: horizontal fusion of independent tasks (M GEMM, V vector, D copy)
# measured in groups A-D.  See README.md.  Entry point: `snakemake --cores 4 all`.
from snakemake.utils import min_version

min_version("8.0")


configfile: "config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/build.smk"
include: "workflow/rules/deploy.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/check.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/timeline.smk"
include: "workflow/rules/table.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/external.smk"


rule all:
    input:
        all_outputs(),
        analysis_outputs(),
    default_target: True
