"""Provenance: where a result came from.

Every raw result gets a sidecar ``<point>.provenance.json`` written by the
``run`` rule (hxfuse.sweep.pipeline.run_point), and the summary carries the same
fields.  Fields:

- ``git_commit`` / ``git_dirty``: the source tree's HEAD and whether tracked
  files differed from it (results/ and build outputs are ignored by git);
- ``point_hash`` (what this replicate's runner invocation depends on: target
  and runner arguments; see hxfuse.config) and ``replicate``; the summary
  carries the whole config's ``config_hash`` (a job parameter of aggregate);
- ``raw_sha256``: SHA-256 of every raw file of the replicate (the JSON Lines
  and each ``.npy``), recomputed by aggregation (hxfuse.runner.integrity);
- ``compiler``: the runner's compiler and version as the runner recorded it in
  its ``meta`` record, plus ``cc --version`` of the build machine;
- ``target``, ``runner_sha256`` (the staged binary), ``runner_args``;
- ``runner_env``: the runner's own environment record (cpu model, cores,
  clock, engines, affinity, warnings, ``emulated``, ``group_mapping``: what
  groups A-D are on the target), copied from ``meta``;
- ``run_prefix`` (what executed the runner: nothing, qemu-hexagon, device.sh)
  and ``emulated`` (added by the run rule);
- ``host``: hostname, platform, python, load average before/after the run;
- ``packages``: the installed version of each package of the analysis stack
  (:data:`ANALYSIS_STACK`; ``None`` where one is not installed), read from the
  distributions' metadata without importing them.  The environment is pinned
  by ``constraints.txt``; this records what a result was really made with,
  so a result from a drifted environment can be told apart.

Standard library only (and hxfuse.runner.jsonl, which is too), and no dependence
on hxfuse.config: the run wrapper
imports this module, and every value it records comes in through the run
job's params.
"""

from __future__ import annotations

import hashlib
import os
import platform
import socket
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from hxfuse.runner.jsonl import read_meta  # the meta record of a runner output (one reader: hxfuse.runner.jsonl)

REPO_ROOT = Path(__file__).resolve().parents[2]
META_ENV_KEYS = (
    "schema_version",
    "target",
    "emulated",
    "group_mapping",
    "kernels",
    "compiler",
    "cflags",
    "cpu_model",
    "online_cores",
    "hw_threads",
    "engines",
    "affinity",
    "engines_exceed_cores",
    "clock",
    "wait",
    "spin_ns",
    "early_completion",
    "calibration",
    "warnings",
    "labels",
    # hxrun-ap (the application-processor driver): how the groups crossed the
    # AP-DSP boundary, and the DSP's own description of itself
    "transport",
    "device",
)
# The packages whose versions can change a result or its presentation:
# numbers (numpy, pandas), figures (matplotlib, seaborn), tables (jinja2), what
# ran (snakemake) and the external target's group B (onnxruntime).
ANALYSIS_STACK = ("numpy", "pandas", "seaborn", "matplotlib", "jinja2", "snakemake", "onnxruntime")


def _git(*args: str, cwd: Path = REPO_ROOT) -> str | None:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=20
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def git_info(repo: Path = REPO_ROOT) -> dict:
    """{'git_commit': sha or None, 'git_dirty': bool or None}."""
    commit = _git("rev-parse", "HEAD", cwd=repo)
    status = _git("status", "--porcelain", "--untracked-files=no", cwd=repo)
    return {"git_commit": commit, "git_dirty": None if status is None else bool(status)}


def compiler_version(cc: str | None = None) -> str | None:
    cc = cc or os.environ.get("CC", "cc")
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=20)
        return out.stdout.splitlines()[0].strip() if out.stdout else None
    except (OSError, subprocess.SubprocessError):
        return None


def sha256_file(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def loadavg() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def package_versions(names: tuple[str, ...] = ANALYSIS_STACK) -> dict[str, str | None]:
    """{package: installed version, or None when it is not installed}."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def base_record(config_hash: str | None = None) -> dict:
    """Fields shared by sidecars and the summary."""
    rec = {
        "created_unix": time.time(),
        **git_info(),
        "build_cc": compiler_version(),
        "python": sys.version.split()[0],
        "packages": package_versions(),
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
    }
    if config_hash is not None:
        rec["config_hash"] = config_hash
    return rec


def sidecar(point: dict, jsonl: Path, runner: Path, runner_args: list[str], load_before: list | None = None) -> dict:
    """The provenance record of one replicate.  *point*: target, sweep,
    workload, point, replicate, x, params and point_hash (the run job's
    params)."""
    meta = read_meta(jsonl)
    rec = base_record()
    rec.update(
        {k: point.get(k) for k in ("target", "sweep", "workload", "point", "replicate", "x", "params", "point_hash")}
    )
    rec.update(
        {
            "runner_args": list(runner_args),
            "runner_sha256": sha256_file(runner),
            "compiler": meta.get("compiler"),
            "runner_env": {k: meta.get(k) for k in META_ENV_KEYS if k in meta},
            "load_before": load_before,
            "load_after": loadavg(),
        }
    )
    return rec
