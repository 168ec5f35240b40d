"""A damaged intermediate file of a finished run (a table cut short, emptied
or without a column, a runner output or a JSON file cut in half) stops the
job that reads it with one line naming the file and the command that redoes
it, carrying the run's --configfile; no traceback, in the output or the log.

One kind of damage per kind of reader (the sweep, graph, service-mode and
ONNX Runtime comparison scripts, the timelines and traces), all in one copy
of the shared finished run (the tiny_run fixture of tests/conftest.py), and one Snakemake
call that forces exactly the jobs reading them (--keep-going; the damaged
files keep their times, so nothing upstream reruns): about 20 s.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil

import pytest

from pipeline_util import snakemake


def cut(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def empty(path):
    path.write_bytes(b"")


def drop_column(name):
    def damage(path):
        text = gzip.decompress(path.read_bytes()).decode() if path.name.endswith(".gz") else path.read_text()
        rows = [line.split(",") for line in text.splitlines()]
        i = rows[0].index(name)
        path.write_text("".join(",".join(r[:i] + r[i + 1 :]) + "\n" for r in rows))

    damage.__name__ = f"drop_{name}"
    return damage


# (damaged file, damage, the output of the job that reads it: forced)
CASES = [
    ("results/host/summary.csv", cut, "results/host/figures/speedup_tiny.png"),
    ("results/host/trials.csv.gz", cut, "results/host/figures/slowdown_tiny.png"),
    ("results/host/raw/tiny/mv/small/rep0.jsonl", cut, "results/host/figures/timeline/tiny/mv/small.png"),
    ("results/host/check/tiny/md/small/rep0.json", empty, "results/host/timeline/tiny/md/small.perfetto.json"),
    ("results/host/graph/summary.csv", drop_column("point"), "results/host/graph/figures/speedup.png"),
    ("results/host/graph/json/mobilenetv2.json", cut, "results/host/graph/figures/profile_mobilenetv2.png"),
    (
        "results/host/graph/raw/mobilenetv2/rep0.jsonl",
        cut,
        "results/host/graph/figures/timeline_mobilenetv2.png",
    ),
    ("results/host/serve/summary.csv", empty, "results/host/serve/serve_table.tex"),
    ("results/host/serve/requests.csv.gz", cut, "results/host/serve/figures/latency_cdf.png"),
    ("results/host/external/tiny/mv/big.csv", drop_column("workload"), "results/host/external.csv"),
]


@pytest.fixture(scope="module")
def damaged(tiny_run, tmp_path_factory):
    wd = tmp_path_factory.mktemp("damaged") / "run"
    shutil.copytree(tiny_run, wd, symlinks=True)
    for rel, damage, _ in CASES:
        path = wd / rel
        st = path.stat()
        damage(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # nothing upstream looks changed
    targets = [out for _, _, out in CASES]
    res = snakemake(wd, "--keep-going", "--rerun-triggers", "mtime", "-f", *targets)
    return wd, res, res.stdout + res.stderr


def test_only_the_jobs_reading_them_ran(damaged):
    wd, res, out = damaged
    assert res.returncode != 0
    started = re.findall(r"^(?:local)?rule (\w+):", out, re.M)
    failed = re.findall(r"^Error in rule (\w+):", out, re.M)
    assert len(started) == len(failed) == len(CASES), out[-4000:]


@pytest.mark.parametrize("rel, damage, target", CASES, ids=[f"{c[0]}:{c[1].__name__}" for c in CASES])
def test_damaged_file_is_named_with_the_command_that_redoes_it(damaged, rel, damage, target):
    wd, res, out = damaged
    # one line, which Snakemake shows again with the failed job's log
    lines = sorted({line for line in out.splitlines() if line.startswith(f"hxfuse: {rel}: ")})
    assert len(lines) == 1, (rel, out[-6000:])
    line = lines[0]
    assert line.startswith(f"hxfuse: {rel}: damaged ("), line
    assert line.endswith(f"); redo it with: snakemake --cores 4 -f {rel} all --configfile {wd / 'config.yaml'}"), line
    assert "Traceback" not in out
    assert not (wd / target).exists(), f"{target} left behind"
    # the job's log has the same line and no traceback either
    logs = [p for p in (wd / "logs").rglob("*.log") if line in p.read_text()]
    assert logs, f"no log holds {line!r}"
    assert all("Traceback" not in p.read_text() for p in logs)
