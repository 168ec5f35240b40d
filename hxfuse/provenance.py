"""Provenance: where a result came from.

Every raw result gets a sidecar ``<point>.provenance.json`` written by the
``run`` rule (hxfuse.pipeline.run_point), and the summary carries the same
fields.  Fields:

- ``git_commit`` / ``git_dirty``: the source tree's HEAD and whether tracked
  files differed from it (results/ and build outputs are ignored by git);
- ``config_hash`` (whole validated config) and ``point_hash`` (what this point
  depends on; see hxfuse.config);
- ``compiler``: the runner's compiler and version as the runner recorded it in
  its ``meta`` record, plus ``cc --version`` of the build machine;
- ``target``, ``runner_sha256`` (the staged binary), ``runner_args``;
- ``runner_env``: the runner's own environment record (cpu model, cores,
  clock, engines, affinity, warnings, ``emulated``, ``group_mapping``: what
  groups A-D are on the target), copied from ``meta``;
- ``run_prefix`` (what executed the runner: nothing, qemu-hexagon, device.sh)
  and ``emulated`` (added by the run rule);
- ``host``: hostname, platform, python, load average before/after the run.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

from . import config as hxconfig

REPO_ROOT = hxconfig.REPO_ROOT
META_ENV_KEYS = ("schema_version", "target", "emulated", "group_mapping", "kernels", "compiler",
                 "cflags", "cpu_model",
                 "online_cores", "engines", "affinity", "engines_exceed_cores", "clock",
                 "wait", "spin_ns", "early_completion", "calibration", "warnings", "labels")


def _git(*args: str, cwd: Path = REPO_ROOT) -> str | None:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              check=True, timeout=20).stdout.strip()
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


def read_meta(jsonl: Path | str) -> dict:
    with open(jsonl) as fh:
        first = json.loads(fh.readline())
    if first.get("record") != "meta":
        raise ValueError(f"{jsonl}: first record is not 'meta'")
    return first


def loadavg() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def base_record(cfg: dict | None = None) -> dict:
    """Fields shared by sidecars and the summary."""
    rec = {"created_unix": time.time(), **git_info(),
           "build_cc": compiler_version(), "python": sys.version.split()[0],
           "hostname": socket.gethostname(), "platform": platform.platform()}
    if cfg is not None:
        rec["config_hash"] = hxconfig.config_hash(cfg)
    return rec


def sidecar(cfg: dict, point: "hxconfig.Point", jsonl: Path, runner: Path,
            load_before: list | None = None) -> dict:
    meta = read_meta(jsonl)
    rec = base_record(cfg)
    rec.update({
        "target": point.target, "sweep": point.sweep, "workload": point.workload,
        "point": point.point, "x": point.x, "params": point.params,
        "point_hash": hxconfig.point_hash(cfg, point),
        "runner_args": hxconfig.runner_args(cfg, point),
        "runner_sha256": sha256_file(runner),
        "compiler": meta.get("compiler"),
        "runner_env": {k: meta.get(k) for k in META_ENV_KEYS if k in meta},
        "load_before": load_before, "load_after": loadavg(),
    })
    return rec


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hxfuse.provenance")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sidecar", help="write the provenance sidecar of one raw result")
    s.add_argument("--config", required=True, help="the validated config as a JSON file")
    s.add_argument("--point", required=True, help="target/sweep/workload/point")
    s.add_argument("--jsonl", required=True)
    s.add_argument("--runner", required=True)
    s.add_argument("--load-before", default=None, help="JSON list")
    s.add_argument("--out", required=True)
    sub.add_parser("loadavg", help="print the load average as JSON")
    a = ap.parse_args(argv)
    if a.cmd == "loadavg":
        print(json.dumps(loadavg()))
        return 0
    with open(a.config) as fh:
        cfg = json.load(fh)
    p = hxconfig.find_point(cfg, *a.point.split("/"))
    rec = sidecar(cfg, p, Path(a.jsonl), Path(a.runner),
                  json.loads(a.load_before) if a.load_before else None)
    tmp = Path(a.out + ".tmp")
    tmp.write_text(json.dumps(rec, indent=1, sort_keys=True, default=str) + "\n")
    tmp.replace(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
