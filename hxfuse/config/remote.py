"""What a job's own Snakemake does differently from the main process.

On a cluster (Snakemake's Slurm executor) every job runs a Snakemake of its
own that reads the Snakefile again, in ``--mode remote``: in the batch job,
and again in the job step the plugin starts in it with srun.  The
main process has already run the targets' preflight (a missing tool stops
the workflow before any job) and asked make for each target's run prefix;
doing both again in every job would cost a make per target per job and could
fail a job on a node for a reason the main process has already ruled on.
So a job's Snakemake skips the preflight and takes the run prefixes (and
the rules' code dependencies) from the environment the main process
exported to it (the Slurm plugin submits
with ``--export=ALL``); where that is missing (a cluster that does not pass
the environment on) it asks make itself, as before.

``HXFUSE_PREFLIGHT_LOG``, when set, names a file that every read of the
Snakefile appends one line to: whether it ran the preflight and make or
skipped them, and in which of Snakemake's modes (the scale-out test counts
them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

PREFIX_ENV = "HXFUSE_TARGET_PREFIX"
CODE_ENV = "HXFUSE_CODE_DEPS"
LOG_ENV = "HXFUSE_PREFLIGHT_LOG"


def from_main(name: str, main: bool, compute, environ: dict | None = None):
    """A value the main process computes once and exports (JSON in the
    environment variable *name*); a job's Snakemake (*main* false) takes it
    from there, and computes it itself only where it is missing.  For
    what is the same in every job and costs time at each read of the
    Snakefile (the rules' code dependencies: about 1-2 s of parsing the
    package's modules)."""
    environ = os.environ if environ is None else environ
    if not main:
        try:
            value = json.loads(environ.get(name) or "null")
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    value = compute()
    environ[name] = json.dumps(value)
    return value


def target_prefixes(config: dict, kernels, main: bool, ask, environ: dict | None = None) -> tuple[dict, bool]:
    """({target: run prefix}, whether make was asked).  The main process
    asks ``ask(config, target, kernels)`` (make) for each target and exports
    the answers in ``HXFUSE_TARGET_PREFIX``; a job's Snakemake (*main*
    false) reads them from there when every target is in it."""
    environ = os.environ if environ is None else environ
    targets = list(config["targets"])
    if not main:
        try:
            given = json.loads(environ.get(PREFIX_ENV) or "{}")
        except ValueError:
            given = {}
        if isinstance(given, dict) and all(isinstance(given.get(t), str) for t in targets):
            return {t: given[t] for t in targets}, False
    prefixes = {t: ask(config, t, kernels) for t in targets}
    environ[PREFIX_ENV] = json.dumps(prefixes)
    return prefixes, True


def note(mode: str, preflight: bool, make: bool, environ: dict | None = None) -> None:
    """Append this read of the Snakefile to ``HXFUSE_PREFLIGHT_LOG`` (if set)."""
    environ = os.environ if environ is None else environ
    path = environ.get(LOG_ENV)
    if not path:
        return
    line = f"mode={mode} preflight={'ran' if preflight else 'skipped'} make={'ran' if make else 'skipped'}"
    # where it ran: the Slurm job and step (when in one) and the CPUs this
    # process may run on, which its job's measurement inherits
    for key in ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_CPUS_ON_NODE"):
        line += f" {key}={environ.get(key, '-')}"
    line += f" cpus={len(os.sched_getaffinity(0))} pid={os.getpid()}"
    with Path(path).open("a") as f:
        f.write(line + "\n")
