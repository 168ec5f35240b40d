"""hxfuse.intermediate: a damaged intermediate file is named with the command
that redoes it, by kind (JSON, CSV, gzip'd CSV, runner output), and a job
script wrapped in intermediate.job stops with that one line, status 1, no
traceback.  The same damage on the real pipeline's files, through its
scripts: tests/pipeline/test_damaged_intermediates.py."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

from hxfuse import intermediate
from hxfuse.intermediate import DamagedFile
from pipeline_util import REPO

SUMMARY = "\n".join(
    [
        "target,sweep,point_id,point,x,label,workload,group,n",
        "host,s,s/mv/a,a,1,a,mv,A,4",
        "host,s,s/mv/b,b,2,b,mv,D,4",
        "",
    ]
)


def table(tmp_path, text, name="results/host/summary.csv"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_a_whole_table_passes(tmp_path):
    intermediate.check_table(table(tmp_path, SUMMARY))
    trials = SUMMARY.replace(",n\n", ",replicate\n")
    intermediate.check_table(table(tmp_path, trials, "results/host/trials.csv.gz"))
    # a table without rows (no point survived) selects nothing: no key columns needed
    intermediate.check_table(table(tmp_path, "target,sweep\n"))


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "empty"),
        (SUMMARY[: len(SUMMARY) // 2 + 7], "the last line does not end"),
        (SUMMARY + "host,s\n", "line 4 has 2 fields, the header 9"),
        (SUMMARY.replace("group,", "grp,"), "no column group"),
    ],
    ids=["empty", "cut", "short-row", "no-column"],
)
def test_a_damaged_table_is_named_with_its_redo_command(tmp_path, text, why, monkeypatch):
    monkeypatch.delenv(intermediate.CONFIG_ENV, raising=False)
    path = table(tmp_path, text)
    with pytest.raises(DamagedFile) as err:
        intermediate.check_table(path)
    msg = str(err.value)
    assert msg.startswith(f"hxfuse: {path}: damaged (") and why in msg, msg
    assert msg.endswith(f"; redo it with: snakemake --cores 4 -f {path} all"), msg


def test_a_cut_gzip_table_is_damaged(tmp_path):
    path = table(tmp_path, SUMMARY * 50, "results/host/trials.csv.gz")
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(DamagedFile, match=r"trials\.csv\.gz: damaged \(unreadable"):
        intermediate.check_table(path)


def test_json_and_runner_output(tmp_path):
    doc = tmp_path / "check.json"
    doc.write_text(json.dumps({"status": "ok"}))
    assert intermediate.read_json_object(doc) == {"status": "ok"}
    doc.write_text('{"status": "o')
    with pytest.raises(DamagedFile, match="check.json: damaged \\(not valid JSON"):
        intermediate.check_input(doc)
    doc.write_text("[1]")
    with pytest.raises(DamagedFile, match="not a JSON object"):
        intermediate.read_json_object(doc)
    raw = tmp_path / "rep0.jsonl"
    raw.write_text('{"record": "meta"}\n{"record": "tri')
    with pytest.raises(DamagedFile) as err:
        intermediate.check_input(raw)
    assert str(err.value).startswith(f"hxfuse: {raw}: damaged (malformed JSON"), err.value
    with pytest.raises(DamagedFile, match="missing"):
        intermediate.check_input(tmp_path / "gone.json")
    intermediate.check_input(tmp_path)  # a folder (the .npy files) is not judged here


def test_the_redo_command_repeats_the_config_and_picks_the_target(monkeypatch):
    args = ["-s", "Snakefile", "--cores", "2", "all", "--configfile", "my study.yaml", "--config", "study=smoke"]
    assert intermediate.config_args(args) == ["--configfile", "my study.yaml", "--config", "study=smoke"]
    assert intermediate.config_args(["--cores", "4", "all"]) == []
    monkeypatch.setenv(intermediate.CONFIG_ENV, "--configfile 'my study.yaml'")
    assert intermediate.redo_command("results/host/summary.csv") == (
        "snakemake --cores 4 -f results/host/summary.csv all --configfile 'my study.yaml'"
    )
    # the search's files are made by `searches`, not `all`
    assert intermediate.redo_command("results/host/search/s1/search.json", extra=[]) == (
        "snakemake --cores 4 -f results/host/search/s1/search.json searches"
    )


def run_job(tmp_path, body_input, checked=True):
    """A job script's body under intermediate.job, in its own interpreter: (rc, stderr, log)."""
    log = tmp_path / "job.log"
    code = f"""
import sys
from snakemake.iocontainers import InputFiles
from types import SimpleNamespace
from hxfuse import intermediate
from hxfuse.runner.jsonl import read_records
inputs = InputFiles([{str(body_input)!r}])
inputs._set_name("jsonl", 0)
sm = SimpleNamespace(input=inputs, log=[{str(log)!r}])
with intermediate.job(sm, unchecked=[] if {checked} else ["jsonl"]):
    read_records(sm.input.jsonl)
print("body done", file=sys.stderr)
"""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop(intermediate.CONFIG_ENV, None)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert log.exists(), res.stderr
    return res.returncode, res.stderr, log.read_text()


@pytest.mark.parametrize("checked", [True, False], ids=["found-first", "found-by-the-body"])
def test_a_job_with_a_damaged_input_stops_with_one_line(tmp_path, checked):
    raw = tmp_path / "rep0.jsonl"
    raw.write_text('{"record": "meta"}\n{"record": "tri')
    rc, err, log = run_job(tmp_path, raw, checked)
    assert rc == 1
    assert "Traceback" not in err + log
    want = f"hxfuse: {raw}: damaged (malformed JSON"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(want), err
    assert lines[0].endswith(f"redo it with: snakemake --cores 4 -f {raw} all"), err
    assert log.strip() == lines[0]


def test_damage_line_of_a_body_error():
    exc = intermediate.IncompleteRunError("results/x/rep0.jsonl:3: malformed JSON (Expecting value)")
    line = intermediate.damage_line(exc, ["results/x/rep0.jsonl"])
    assert line.startswith("hxfuse: results/x/rep0.jsonl: damaged (malformed JSON (Expecting value)); redo it")
