"""Helpers for the pipeline tests: run Snakemake on a config in a temp dir."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
SNAKEFILE = REPO / "Snakefile"


def write_config(workdir: Path, cfg: dict) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def copy_repo(dest: Path) -> Path:
    """A copy of the workflow and its sources (no results, no git), so a test
    can edit code without touching the checkout."""
    import shutil

    ignore = shutil.ignore_patterns("build", "__pycache__", "*.pyc", ".snakemake", "results", "logs")
    dest.mkdir(parents=True, exist_ok=True)
    # config/: the study files (the graph study's default is one of them)
    for d in ("workflow", "hxfuse", "kernels", "envs", "config"):
        shutil.copytree(REPO / d, dest / d, ignore=ignore)
    (dest / "paper").mkdir(exist_ok=True)
    for tex in ("main.tex", "related.tex"):  # what rule paper reads
        shutil.copy2(REPO / "paper" / tex, dest / "paper" / tex)
    shutil.copy2(SNAKEFILE, dest / "Snakefile")
    return dest


def snakemake(
    workdir: Path,
    *args: str,
    cores: int | None = 2,
    timeout: int = 600,
    snakefile: Path | None = None,
    env: dict | None = None,
) -> subprocess.CompletedProcess:
    """Run Snakemake on workdir/config.yaml.  With a snakefile from copy_repo
    (by default the workdir's own, when it is such a copy), job scripts
    import that copy's hxfuse (PYTHONPATH).  *env* replaces the
    environment (default: this process's).  cores=None passes no --cores
    (a cluster executor: its jobs' cores are the cluster's)."""
    import os

    if snakefile is None:
        own = Path(workdir) / "Snakefile"
        snakefile = own if own.exists() else SNAKEFILE
    env = dict(os.environ if env is None else env)
    if snakefile != SNAKEFILE:
        env["PYTHONPATH"] = os.pathsep.join([str(snakefile.parent), env.get("PYTHONPATH", "")])
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(snakefile),
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        *(["--cores", str(cores)] if cores is not None else []),
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def job_counts(output: str) -> dict[str, int]:
    """The 'Job stats' table of a Snakemake run or dry run, as {rule: count}."""
    m = re.search(r"Job stats:\n(.*?)\n\s*\n", output + "\n\n", re.S)
    if not m:
        return {}
    counts = {}
    for line in m.group(1).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            counts[parts[0]] = int(parts[1])
    return counts


TINY = {
    "targets": ["host"],
    "run": {"timeout_s": 60, "warmup": 1, "rounds": 4, "seed": 3, "replicates": 2},
    "analysis": {"bootstrap": 200},
    "defaults": {
        "m_shape": [48, 48, 48],
        "v_shape": [32, 256],
        "v_passes": 1,
        "d_shape": [64, 512],
        "scratch_bytes": 1048576,
    },
    "sweeps": {
        "tiny": {
            "title": "tiny sweep",
            "variable": "M size",
            # a family sweep, so the end-to-end tests draw its family figure
            # (measured x: the longest alone time)
            "family": "granularity",
            "x_measured": "longest",
            "workloads": ["mv", "md", "mvd"],
            "points": [
                {"name": "small", "x": 1},
                {"name": "big", "x": 2, "m_shape": [64, 64, 64]},
            ],
        }
    },
}


# The hexagon-qemu target on the tiny sweep: integer kernels, emulation-sized
# shapes forced on every point (target_settings), few rounds.
# the service mode's one point, small (docs/serve.md)
TINY["serve"] = {
    "requests": 40,
    "replicates": 1,
    "reps": 1,
    "points": [{"name": "tiny", "rate": 400, "window_us": 300}],
}

TINY_QEMU = {
    **TINY,
    "targets": ["hexagon-qemu"],
    "target_settings": {
        "hexagon-qemu": {
            "run": {"warmup": 1, "rounds": 3, "timeout_s": 120, "replicates": 1},
            "params": {"precision": "u8i8", "v_shape": [32, 256], "d_shape": [64, 512]},
        }
    },
}


def zig_and_qemu() -> tuple[bool, str]:
    """(available, skip message) for the hexagon-qemu target's tools."""
    import shutil

    from hxfuse.config.preflight import target_problems
    from hxfuse.config.targets import ZIG_PIN

    missing = target_problems({"targets": ["hexagon-qemu"]})
    if not missing:
        return True, ""
    names = " and ".join(
        n
        for n, bad in (("zig", any("zig" in m for m in missing)), ("qemu-hexagon", not shutil.which("qemu-hexagon")))
        if bad
    )
    return False, (f"missing {names}: install with `pip install ziglang=={ZIG_PIN}` and `apt-get install qemu-user`")


def aggregate_synthetic(
    out: Path, cfg: dict, target: str, records_of, check_of=None, prov_extra: dict | None = None, damage=None
) -> dict:
    """Write synthetic raw files for every replicate of every point of *target*
    in the pipeline's layout under *out* (raw/<id>/rep<r>.jsonl, sidecars with
    raw_sha256, check json) and aggregate them as the aggregate job does.
    *records_of(point, replicate, index)* returns a run's records;
    *check_of(point, replicate)* the check dict (default: ok); *damage(out)*
    runs after the files are written, before they are aggregated."""
    import json

    from hxfuse.config import points as hxpoints
    from hxfuse.config import targets as hxtargets
    from hxfuse.runner import integrity
    from hxfuse.sweep.pipeline import aggregate_target

    pts = hxpoints.aggregate_points(cfg, target)
    raws, checks, provs = [], [], []
    i = 0
    for p in pts:
        for r in range(p["replicates"]):
            raw = out / "raw" / p["id"] / f"rep{r}.jsonl"
            raw.parent.mkdir(parents=True, exist_ok=True)
            raw.write_text("".join(json.dumps(x) + "\n" for x in records_of(p, r, i)))
            chk = out / "check" / p["id"] / f"rep{r}.json"
            chk.parent.mkdir(parents=True, exist_ok=True)
            chk.write_text(json.dumps(check_of(p, r) if check_of else {"status": "ok", "reasons": []}))
            prov = out / "raw" / p["id"] / f"rep{r}.provenance.json"
            prov.write_text(
                json.dumps(
                    {
                        "git_commit": "abc",
                        "git_dirty": False,
                        "compiler": "cc 1",
                        "runner_sha256": "0",
                        "replicate": r,
                        "point_hash": p["point_hashes"][r],
                        "raw_sha256": integrity.raw_hashes(raw, None),
                        **(prov_extra or {}),
                    }
                )
            )
            raws.append(str(raw)), checks.append(str(chk)), provs.append(str(prov))
            i += 1
    if damage is not None:
        damage(out)
    return aggregate_target(
        target,
        pts,
        raws,
        checks,
        provs,
        None,
        cfg["analysis"],
        cfg["check"],
        hxpoints.config_hash(cfg),
        hxtargets.info(target),
        str(out / "trials.csv.gz"),
        str(out / "summary.csv"),
        str(out / "summary.json"),
    )
