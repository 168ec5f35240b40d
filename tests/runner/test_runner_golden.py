"""Golden records of the three host runners (hxrun, hxgraph, hxserve).

Each runner is built, run once with a fixed seed and small shapes, and what
the code alone decides is compared with a pinned JSON file in
tests/data/runner_golden/<runner>.json: the meta record without the fields
that depend on the machine or the moment (compiler, CPU, load, clock cost,
epoch, warnings about the core count), the end record likewise, the order of
the trials (the seeded round shuffle) and every checksum.  A refactor of the
C code that moves, shares or rewrites code must leave these identical.

The runners run with HXFUSE_HOST_ISA=avx2: the host's fp32 GEMM variant is
chosen per CPU at run time (meta.kernels names it), and AVX2 is the variant
every machine these pins are checked on executes (the AVX-512 variant's
results are bit-identical to it: tests/runner/test_host_kernel_variants.py).

To re-pin after an intended change of the records:
    HX_UPDATE_GOLDEN=1 python3 -m pytest tests/runner/test_runner_golden.py
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hxfuse.graph import build as graphs

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "kernels" / "build" / "host"
PINS = REPO / "tests" / "data" / "runner_golden"

# Fields whose values come from the machine or the moment, not the code:
# dropped wherever they appear in a meta or end record.  The outlier counts
# are timing (a submit slower than a threshold); the digest covers the
# timestamps; the warnings name the core count.
VOLATILE = {
    "compiler",
    "compiler_version",
    "cpu_model",
    "online_cores",
    "cpu_governor",
    "load_average_before",
    "load_average_after",
    "other_busy_cores_before",
    "other_busy_cores_after",
    "steal_share",
    "engines_exceed_cores",
    "interference",
    "epoch",
    "read_overhead_ns",
    "resolution_ns",
    "clock_resolution_ns",
    "prep_ns",
    "warnings",
    "warning_codes",
    "digest",
    "wall_ns",
    "submit_outliers",
    "submit_outliers_by_group",
    "b_handover_outliers",
}


def scrub(value):
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def built() -> Path:
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "TARGET=host", "all", "hxgraph", "hxserve"], check=True)
    return BUILD


def run(binary: Path, cwd: Path, *args: str) -> list[dict]:
    # Relative paths, run from cwd: the paths are copied into meta.args.
    env = {**os.environ, "HXFUSE_HOST_ISA": "avx2"}
    proc = subprocess.run([str(binary), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return read(cwd / "out.jsonl")


def golden_hxrun(recs: list[dict]) -> dict:
    out = {"meta": None, "verify": [], "trials": [], "end": None}
    for r in recs:
        kind = r["record"]
        if kind in ("meta", "end"):
            out[kind] = scrub(r)
        elif kind == "verify":
            out["verify"].append(r)
        elif kind == "trial":
            ident = {k: r[k] for k in ("round", "seq", "warmup", "workload", "group", "empty")}
            ident["checksums"] = {t["task"]: t["checksum"] for t in r["tasks"]}
            out["trials"].append(ident)
        else:
            out.setdefault(kind, []).append(scrub(r))
    return out


def golden_hxgraph(recs: list[dict]) -> dict:
    out = {"meta": None, "verify": [], "trials": [], "end": None}
    for r in recs:
        kind = r["record"]
        if kind in ("meta", "end"):
            out[kind] = scrub(r)
        elif kind == "verify":
            out["verify"].append(r)
        elif kind == "trial":
            keys = ("round", "warmup", "index", "group", "mismatched_buffers", "checksums_ok")
            ident = {k: r[k] for k in keys}
            ident["nodes"] = [(n["name"], n["engine"]) for n in r["nodes"]]
            out["trials"].append(ident)
        else:
            out.setdefault(kind, []).append(scrub(r))
    return out


def golden_hxserve(recs: list[dict]) -> dict:
    # Pairing under policy D and every time depend on the scheduler; the
    # order of the policies (seeded), the inputs chosen and the checksums
    # do not.
    out = {"meta": None, "replays": [], "requests": [], "end": None}
    for r in recs:
        kind = r["record"]
        if kind in ("meta", "end"):
            out[kind] = scrub(r)
        elif kind == "replay":
            out["replays"].append({k: r[k] for k in ("rep", "slot", "policy")})
        elif kind == "request":
            keys = ("rep", "policy", "id", "kind", "size", "input", "checksum")
            out["requests"].append({k: r[k] for k in keys})
    out["requests"].sort(key=lambda q: (q["rep"], q["policy"], q["id"]))
    return out


def case_hxrun(bindir: Path, tmp: Path) -> dict:
    args = ["--out", "out.jsonl", "--seed", "7", "--rounds", "2", "--warmup", "1", "--affinity", "none"]
    args += ["--m-shape", "16,16,16", "--v-shape", "16,64", "--d-shape", "8,64"]
    args += ["--workloads", "mv,md,mvd"]
    return golden_hxrun(run(bindir / "hxrun", tmp, *args))


def case_hxgraph(bindir: Path, tmp: Path) -> dict:
    graph = graphs.build("decoder", {"tokens": 8, "d_model": 16, "heads": 2, "d_ff": 32, "micro_batches": 2})
    graphs.write_graph(graph, tmp / "g.json")
    args = ["--graph", "g.json", "--out", "out.jsonl", "--seed", "3", "--rounds", "2", "--warmup", "1"]
    return golden_hxgraph(run(bindir / "hxgraph", tmp, *args, "--affinity", "none"))


def case_hxserve(bindir: Path, tmp: Path) -> dict:
    rows = [(0, "compute", 16), (1_000_000, "bandwidth", 32), (3_000_000, "compute", 16), (4_000_000, "bandwidth", 8)]
    text = "arrival_ns,kind,size,deadline_ns\n" + "".join(f"{a},{k},{s},50000000\n" for a, k, s in rows)
    (tmp / "trace.csv").write_text(text)
    args = ["--trace", "trace.csv", "--out", "out.jsonl", "--reps", "2", "--seed", "5", "--window-us", "2000"]
    args += ["--gemm-nk", "16,16", "--gemv-cols", "64", "--copy-row-bytes", "64", "--copy-src-stride", "128"]
    return golden_hxserve(run(bindir / "hxserve", tmp, *args))


CASES = {"hxrun": case_hxrun, "hxgraph": case_hxgraph, "hxserve": case_hxserve}


@pytest.mark.parametrize("runner", sorted(CASES))
def test_runner_records_match_the_pins(built, tmp_path, runner):
    got = json.loads(json.dumps(CASES[runner](built, tmp_path)))  # tuples -> lists, as pinned
    pin = PINS / f"{runner}.json"
    if os.environ.get("HX_UPDATE_GOLDEN") == "1":
        PINS.mkdir(parents=True, exist_ok=True)
        pin.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    want = json.loads(pin.read_text())
    for section in want:
        assert got.get(section) == want[section], f"{runner}: {section} differs from {pin.name}"
    assert set(got) == set(want)
