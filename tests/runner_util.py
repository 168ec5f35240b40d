"""Build and drive the compiled runner from tests (shared by the runner tests)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build_runner(target: str = "host") -> Path:
    """Builds kernels/build/<target>/hxrun with the project's one build command."""
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), f"TARGET={target}"], check=True)
    return REPO / "kernels" / "build" / target / "hxrun"


def run_runner(binary: Path, out: Path, *args: str, prefix: tuple[str, ...] = (), timeout: float = 600):
    """Runs hxrun and returns (completed process, parsed records or None)."""
    proc = subprocess.run(
        [*prefix, str(binary), "--out", str(out), *args], capture_output=True, text=True, timeout=timeout
    )
    records = None
    if out.exists():
        records = [json.loads(line) for line in out.read_text().splitlines()]
    return proc, records


def trials(records, *, group=None, workload=None, empty=False, warmup=False):
    return [
        r
        for r in records
        if r["record"] == "trial"
        and (group is None or r["group"] == group)
        and (workload is None or r["workload"] == workload)
        and r["empty"] == empty
        and r["warmup"] == warmup
    ]


def task(trial, name):
    return next(t for t in trial["tasks"] if t["task"] == name)
