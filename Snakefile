# hxfuse: horizontal fusion of independent tasks (M GEMM, V vector, D copy)
# measured in groups A-D.  See README.md.  Entry point: `snakemake --cores 4 all`.
from snakemake.utils import min_version

# The oldest Snakemake this workflow is run and tested with: 9.19.0 is the
# first that reads the workflow profile's profile.yaml (9.18.2 stops with
# "profile given but no config.yaml found"), and common.smk's
# global_resources.get("device").value needs 9.16.3.  pyproject.toml and the
# README say the same.
min_version("9.19.0")


# A YAML error in config.yaml is reported with file and line (Snakemake's
# own message names neither); study files are read the same way
# (hxfuse.config.load.load_yaml).  A --configfile is read by Snakemake before this
# file runs: `python3 -m hxfuse.config FILE` locates an error there.
import os as _os
import sys as _sys

# this checkout's package (current_basedir: also when another workflow
# imports this one as a module, where workflow.basedir is the importer's)
_sys.path.insert(0, str(workflow.current_basedir))
from hxfuse.config.load import ConfigError as _ConfigError, load_yaml as _load_yaml

# config.yaml of the working directory, the file `configfile:` reads (as in
# Snakemake's workflow template); a module given `config:` reads none.
if _os.path.isfile("config.yaml") and not workflow.modifier.skip_configfile:
    try:
        _load_yaml("config.yaml")
    except _ConfigError as _err:
        raise ValueError(f"hxfuse: {_err}") from None


configfile: "config.yaml"


# Exit as soon as the scheduler is done: its rate-limit Timers would hold
# the process for up to the profile's 10 s timespan (hxfuse/scheduler_exit.py).
from hxfuse.scheduler_exit import cancel_pending_timers as _cancel_pending_timers


onsuccess:
    _cancel_pending_timers()


onerror:
    _cancel_pending_timers()


# the report's front page (`snakemake --report report.html`, after `all`)
report: "workflow/report/workflow.rst"


# Helper files first, in this order (each may use the names of those before
# it): every function and shared name of the workflow, no rule.
include: "workflow/rules/common.smk"
include: "workflow/rules/external_common.smk"
include: "workflow/rules/graph_common.smk"
include: "workflow/rules/serve_common.smk"
include: "workflow/rules/search_common.smk"
# the paper's sections read the external, graph, serve and search names
include: "workflow/rules/paper_common.smk"
# Rule files, by stage and feature: rules only, using the helpers' names, so
# their order does not matter (tests/workflow/test_rule_files.py).
include: "workflow/rules/build.smk"
include: "workflow/rules/sweep.smk"
include: "workflow/rules/external.smk"
include: "workflow/rules/graph.smk"
include: "workflow/rules/serve.smk"
include: "workflow/rules/search.smk"
include: "workflow/rules/paper.smk"


rule all:
    input:
        all_outputs(),
        analysis_outputs(),
        external_outputs(),
        graph_outputs(),
        external_timeline_outputs(),
        serve_outputs(),
        paper_section_outputs(),
    default_target: True


# `--report` reads what `all` (or the targets given) made: before that has
# run, e.g. on a fresh clone, one line saying so (common.smk)
stop_if_report_before_run()
