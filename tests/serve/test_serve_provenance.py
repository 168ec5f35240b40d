"""The service mode's raw files are kept like the sweeps': hxserve runs
through the run wrapper (hxfuse.runner.runpoint, as rule serve_run does),
which writes a provenance sidecar with the SHA-256 of every raw file, and
serve_summary refuses a raw file that differs from its sidecar, naming it.

Known answer: a raw file rewritten after the run with a consistent end
record (its record count and digest recomputed, so the runner's own
integrity check passes) makes serve_summary fail with a message naming
that file; the untouched run is summarised."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
import types
from pathlib import Path

import pytest

from hxfuse.runner.integrity import fnv1a64, raw_hashes, verify_end_record
from hxfuse.runner.runpoint import run_point
from hxfuse.serve import stats as serve
from hxfuse.serve.check import check_run

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "workflow" / "scripts" / "serve_summary.py"
MS = 1_000_000


@pytest.fixture(scope="module")
def hxserve() -> Path:
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "TARGET=host", "hxserve"], check=True)
    return REPO / "kernels" / "build" / "host" / "hxserve"


@pytest.fixture(scope="module")
def served(hxserve, tmp_path_factory) -> dict:
    """One replicate of one point run as serve_run runs it, and its check."""
    d = tmp_path_factory.mktemp("served")
    trace = d / "trace.csv"
    rows = [(0, "compute", 64), (1, "bandwidth", 128), (3, "compute", 64), (4, "bandwidth", 128)]
    body = "".join(f"{a * MS},{k},{s},{50 * MS}\n" for a, k, s in rows)
    trace.write_text("arrival_ns,kind,size,deadline_ns\n" + body)
    out = {k: d / f for k, f in (("jsonl", "rep0.jsonl"), ("provenance", "rep0.provenance.json"), ("npy", "npy"))}
    args = ["--trace", str(trace), "--reps", "1", "--window-us", "1000", "--gemm-nk", "64,64", "--gemv-cols", "256"]
    args += ["--copy-row-bytes", "256", "--copy-src-stride", "512", "--label", "replicate=0"]
    point = {"target": "host", "sweep": "serve", "workload": "serve", "point": "p", "replicate": 0, "params": {}}
    rc = run_point(
        runner=str(hxserve),
        args=args,
        prefix="",
        timeout_s=60.0,
        env={},
        point=point,
        out_jsonl=str(out["jsonl"]),
        out_provenance=str(out["provenance"]),
        out_npy=str(out["npy"]),
        log=str(d / "run.log"),
        timeout_setting="serve.timeout_s",
    )
    assert rc == 0, (d / "run.log").read_text()
    res = check_run(out["jsonl"], out["npy"], trace)
    assert res["ok"], res["reasons"]
    res["point"], res["replicate"] = "p", 0
    (d / "check.json").write_text(json.dumps(res))
    return {**out, "check": d / "check.json", "dir": d}


class _InputFiles(list):
    """What a script sees as snakemake.input: the files, in order, and by
    name (the damaged-input checks iterate them)."""

    def __init__(self, **named):
        super().__init__(f for files in named.values() for f in files)
        self.__dict__.update(named)

    def get(self, name, default=None):
        return self.__dict__.get(name, default)


def summarise(served: dict, raw: Path, tmp_path: Path, monkeypatch) -> Path:
    """serve_summary's script on one replicate, with *raw* as its raw file;
    returns its log."""
    out = {k: str(tmp_path / f) for k, f in (("summary", "s.csv"), ("replays", "r.csv"), ("requests", "q.csv.gz"))}
    sm = types.SimpleNamespace(
        input=_InputFiles(
            checks=[str(served["check"])],
            raws=[str(raw)],
            provenance=[str(served["provenance"])],
            npy=[str(served["npy"])],
        ),
        output=types.SimpleNamespace(**out, json=str(tmp_path / "s.json")),
        params=types.SimpleNamespace(
            points=[{"name": "p", "rate": 400.0, "window_us": 1000}], replicates=1, bootstrap=50, ci=0.95
        ),
        log=[str(tmp_path / "summary.log")],
    )
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # the script sends it to its log
    runpy.run_path(str(SCRIPT), init_globals={"snakemake": sm})
    return tmp_path / "summary.log"


def test_the_run_wrapper_writes_a_sidecar_with_the_raw_files_hashes(served):
    side = json.loads(served["provenance"].read_text())
    assert side["raw_sha256"] == raw_hashes(served["jsonl"], served["npy"])
    assert side["runner_exit"] == 0 and side["point"] == "p"
    assert any(k.startswith("npy/") for k in side["raw_sha256"])
    # the wrapper's label names the point; hxserve's own names the replicate
    labels = serve.read_records(served["jsonl"])[0]["labels"]
    assert labels == {"point": "host/serve/serve/p/rep0", "replicate": "0"}


def test_the_untouched_run_is_summarised(served, tmp_path, monkeypatch):
    summarise(served, served["jsonl"], tmp_path, monkeypatch)
    assert json.loads((tmp_path / "s.json").read_text())["replays"] == 3  # policies A, B, D


def test_a_tampered_raw_file_is_refused_naming_it(served, tmp_path, monkeypatch, capfd):
    # a request's latency shortened and the end record made consistent again:
    # the runner's digest no longer tells, the sidecar's SHA-256 does
    lines = served["jsonl"].read_text().splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if json.loads(line)["record"] == "request")
    rec = json.loads(lines[i])
    rec["end_ns"] -= 1000
    lines[i] = json.dumps(rec, separators=(",", ":")) + "\n"
    end = json.loads(lines[-1])
    end["digest"] = f"fnv1a64:{fnv1a64(''.join(lines[:-1]).encode()):016x}"
    lines[-1] = json.dumps(end, separators=(",", ":")) + "\n"
    tampered = served["dir"] / "tampered" / "rep0.jsonl"
    tampered.parent.mkdir(exist_ok=True)
    tampered.write_text("".join(lines))
    verify_end_record(tampered)  # consistent: only the SHA-256 tells
    with pytest.raises(SystemExit) as exc:
        summarise(served, tampered, tmp_path, monkeypatch)
    assert exc.value.code == 1
    log = (tmp_path / "summary.log").read_text()
    want = f"{tampered}: SHA-256 differs from its provenance sidecar"
    assert want in log and want in capfd.readouterr().err, log
    assert not (tmp_path / "s.csv").exists()
