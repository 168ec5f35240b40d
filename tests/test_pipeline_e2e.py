"""End to end: the real pipeline on a tiny config in a temporary directory.

One module-scoped run (build, deploy, run, check, aggregate, figures, table)
on a copy of the workflow and its sources is shared by the assertions; each
later step (dry run, forced point, edited code) works on the same directory
in order.
"""
import copy
import json
import shutil

import pandas as pd
import pytest

from pipeline_util import TINY, copy_repo, job_counts, snakemake as _snakemake, write_config

pytestmark = pytest.mark.skipif(not shutil.which("make") or not shutil.which("cc"),
                                reason="needs make and a C compiler: apt-get install build-essential")

POINTS = [f"tiny/{w}/{p}" for w in ("mv", "md", "mvd") for p in ("small", "big")]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    wd = copy_repo(tmp_path_factory.mktemp("pipe"))
    write_config(wd, copy.deepcopy(TINY))
    res = snakemake(wd, "all")
    assert res.returncode == 0, res.stderr[-4000:]
    return wd


def snakemake(workdir, *args, **kw):
    """Snakemake with the copied workflow when there is one in workdir."""
    snakefile = workdir / "Snakefile"
    return _snakemake(workdir, *args, snakefile=snakefile if snakefile.exists() else None, **kw)


def test_every_point_produced_and_checked(work):
    for pid in POINTS:
        raw = work / "results/host/raw" / f"{pid}.jsonl"
        assert raw.is_file()
        assert json.loads(raw.read_text().splitlines()[-1])["record"] == "end"
        prov = json.loads((work / "results/host/raw" / f"{pid}.provenance.json").read_text())
        for key in ("config_hash", "git_commit", "git_dirty", "compiler", "target", "runner_env",
                    "point_hash", "runner_sha256"):
            assert key in prov, key
        assert prov["target"] == "host" and prov["runner_env"]["cpu_model"]
        check = json.loads((work / "results/host/check" / f"{pid}.json").read_text())
        assert check["status"] == "ok", check["reasons"]
    assert not list((work / "results").rglob("*.work")), "no work directories may remain"


def test_summary_table_and_figures(work):
    s = pd.read_csv(work / "results/host/summary.csv")
    d = s[s["group"] == "D"]
    assert sorted(d["point_id"]) == sorted(POINTS)
    assert d["speedup_over_A"].notna().all() and (d["speedup_over_A_lo"] <= d["speedup_over_A_hi"]).all()
    t = pd.read_csv(work / "results/host/trials.csv.gz")
    assert set(t["group"]) >= {"A", "B", "C", "D", "alone"} and t["check_ok"].all()
    doc = json.loads((work / "results/host/summary.json").read_text())
    assert doc["failed_points"] == [] and doc["n_points"] == 6
    assert doc["provenance"]["config_hash"] and "git_commit" in doc["provenance"]
    for ext in ("pdf", "png"):
        for pid in POINTS:
            assert (work / f"results/host/figures/timeline/{pid}.{ext}").stat().st_size > 1000
        for kind in ("speedup", "slowdown"):
            assert (work / f"results/host/figures/{kind}_tiny.{ext}").stat().st_size > 1000
    table = (work / "paper/generated/results_table.tex").read_text()
    assert r"\toprule" in table and r"\bottomrule" in table and table.count(r"\hxspd{") == 24
    macros = (work / "paper/generated/results_macros.tex").read_text()
    assert r"\newcommand{\hxNpoints}{6}" in macros and r"\hxMedianDAmvd" in macros


def test_second_run_has_nothing_to_do(work):
    res = snakemake(work, "-n", "all")
    assert res.returncode == 0
    assert "Nothing to be done" in res.stdout + res.stderr


def test_forcing_one_point_reruns_it_and_downstream_only(work):
    target = "results/host/raw/tiny/md/big.jsonl"
    before = {p: (work / "results/host/raw" / f"{p}.jsonl").stat().st_mtime_ns for p in POINTS}
    res = snakemake(work, "-f", target, "all")
    assert res.returncode == 0, res.stderr[-3000:]
    counts = job_counts(res.stdout + res.stderr)
    assert counts.get("run") == 1 and counts.get("check") == 1, counts
    assert counts.get("figure_timeline") == 1 and counts.get("aggregate") == 1, counts
    assert "build" not in counts and "deploy" not in counts, counts
    after = {p: (work / "results/host/raw" / f"{p}.jsonl").stat().st_mtime_ns for p in POINTS}
    assert [p for p in POINTS if after[p] != before[p]] == ["tiny/md/big"]
    assert "Nothing to be done" in (lambda r: r.stdout + r.stderr)(snakemake(work, "-n", "all"))


def test_changing_one_point_reruns_that_point_only(work):
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][0]["v_passes"] = 2   # point "small", all workloads
    write_config(work, cfg)
    try:
        res = snakemake(work, "-n", "all")
        counts = job_counts(res.stdout + res.stderr)
        assert counts.get("run") == 3, counts  # mv, md, mvd of point small
        assert "build" not in counts
    finally:
        write_config(work, copy.deepcopy(TINY))


def test_plot_code_change_reruns_figures_not_trials(work):
    plots = work / "hxfuse" / "plots.py"
    original = plots.read_text()
    try:
        plots.write_text(original + "\n# an edit to the plotting code\n")
        counts = job_counts((lambda r: r.stdout + r.stderr)(snakemake(work, "-n", "all")))
        assert counts.get("figure_timeline") == 6 and counts.get("figure_speedup") == 1, counts
        assert counts.get("figure_slowdown") == 1 and counts.get("table") == 1, counts
        assert not {"build", "deploy", "run", "check", "aggregate"} & set(counts), counts
        counts = job_counts((lambda r: r.stdout + r.stderr)(
            snakemake(work, "-n", "all", "-R", "figure_speedup")))
        assert "run" not in counts
    finally:
        plots.write_text(original)


def test_hung_runner_is_killed_and_leaves_nothing(tmp_path):
    cfg = copy.deepcopy(TINY)
    cfg["run"].update({"timeout_s": 2, "rounds": 2, "warmup": 0})
    cfg["sweeps"] = {"hang": {"workloads": ["mv"], "points": [
        {"name": "stuck", "x": 1, "calibrate": {"M": 9_000_000, "V": 10.5}},  # 9 s busy task
        {"name": "fine", "x": 2},
    ]}}
    write_config(tmp_path, cfg)
    res = snakemake(tmp_path, "--keep-going", "results/host/check/hang/mv/stuck.json",
                    "results/host/check/hang/mv/fine.json")
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert "hxfuse: point host/hang/mv/stuck FAILED: runner killed after 2 s (config run.timeout_s)" in out
    log = (tmp_path / "logs/host/run/hang/mv/stuck.log").read_text()
    assert "runner killed after 2 s" in log
    assert not (tmp_path / "results/host/raw/hang/mv/stuck.jsonl").exists()
    assert not (tmp_path / "results/host/npy/hang/mv/stuck").exists()
    assert not list((tmp_path / "results").rglob("*.work"))
    assert json.loads((tmp_path / "results/host/check/hang/mv/fine.json").read_text())["status"] == "ok"


def test_bad_config_stops_before_any_job(tmp_path):
    cfg = copy.deepcopy(TINY)
    cfg["run"]["rounds"] = 0
    cfg["run"]["colour"] = "red"
    write_config(tmp_path, cfg)
    res = snakemake(tmp_path, "all")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "config.run.rounds: 0 is less than the minimum of 1" in out
    assert "config.run: unknown key(s) 'colour'" in out
    assert not (tmp_path / "results").exists()
