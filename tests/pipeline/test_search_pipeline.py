"""Fixed vs searched, end to end on the real runner: a tiny search through Snakemake.

The space is V workers {1, 2} x placement {spread, every engine pinned to
core 0}; the fixed default is the one-core placement with one V worker.  On
a machine with two free cores the one-core placement time-shares M, V and D
on one core and must be worse than spreading them: the search has to find a
spread configuration, every one-core candidate must be slower than the best
by more than the minimum effect, and the confirmation must give the fixed
(one-core) default a regret above the minimum effect.  Those timing
assertions are skipped, with the findings as the reason, when the runs' own
records (the runner's samples of other processes' busy cores) show that the
cores were not free.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil

import pytest

from pipeline_util import copy_repo, snakemake as _snakemake, write_config

pytestmark = pytest.mark.skipif(
    not shutil.which("make") or not shutil.which("cc"),
    reason="needs make and a C compiler: apt-get install build-essential",
)

ONE_CORE = {"host": 0, "vec": 0, "mx": 0, "dma": 0}
# tasks of about 1 ms each on the development VM
CFG = {
    "targets": ["host"],
    "run": {"timeout_s": 120, "warmup": 1, "rounds": 4, "seed": 3, "replicates": 1},
    "analysis": {"bootstrap": 500, "min_effect": 0.03},
    "defaults": {
        "m_shape": [300, 300, 300],
        "v_shape": [512, 1024],
        "v_passes": 1,
        "d_shape": [1024, 2048],
        "d_repeat": 4,
        "scratch_bytes": 8388608,
    },
    "sweeps": {"s": {"workloads": ["mv"], "points": [{"name": "p", "x": 0}]}},
    "searches": {
        "place": {
            "title": "placement x V workers",
            # mv: two compute tasks of similar length, so two cores against
            # one is close to 2x (with mvd the copy's memory traffic made the
            # one-core placement only 3% slower in one run of five)
            "workload": "mv",
            # one V worker: a second one (vec1) is not in ONE_CORE and would
            # float to the free core, so "one core" would not be one core
            "fixed": {"affinity": ONE_CORE, "m_tile": 256},
            "space": {"affinity": ["spread", ONE_CORE], "m_tile": [64, 256]},
            "budget": {"candidates": 4, "rounds": 8, "warmup": 1},
            # 8 pairs: with 3 (or 5) the two-level interval's lower end rests on the single
            # lowest pairs: regrets of +12% to +26% came out with lower ends of +1% to +2.6%
            "confirm": {"pairs": 8, "rounds": 10, "warmup": 1},
            "seed": 2,
        },
    },
}
OUT = "results/host/search/place"


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    wd = copy_repo(tmp_path_factory.mktemp("search"))
    write_config(wd, copy.deepcopy(CFG))
    res = snakemake(wd, "searches")
    assert res.returncode == 0, res.stderr[-4000:]
    return wd


def snakemake(workdir, *args, **kw):
    return _snakemake(workdir, *args, snakefile=workdir / "Snakefile", **kw)


def test_bad_space_stops_before_any_job(tmp_path):
    wd = copy_repo(tmp_path / "bad")
    cfg = copy.deepcopy(CFG)
    cfg["searches"]["place"]["space"]["v_worker"] = [1]
    cfg["searches"]["place"]["space"]["v_workers"] = [1, 9]
    write_config(wd, cfg)
    res = snakemake(wd, "searches")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "config.searches.place.space: unknown key(s) 'v_worker'" in out
    assert "config.searches.place.space.v_workers[1]: 9 is greater than the maximum of 8" in out
    assert not (wd / "results").exists()


def test_every_candidate_and_the_confirmation_are_cached_targets(work):
    doc = json.loads((work / OUT / "result.json").read_text())
    s, c = doc["search"], doc["confirmation"]
    # exactly the budget (the whole space: 2 x 2), plus the fixed default's reference run
    assert s["exhaustive"] and s["cost"]["candidates"] == 4 and s["cost"]["reference_runs"] == 1
    assert s["cost"]["d_rounds"] == 32 and s["cost"]["runner_seconds"] > 0
    for cid in ("c0", "c1", "c2", "c3", "fixed"):
        assert (work / OUT / "raw" / f"{cid}.jsonl").is_file()
        prov = json.loads((work / OUT / "raw" / f"{cid}.provenance.json").read_text())
        args = prov["runner_args"]
        assert args[args.index("--groups") + 1] == "D"
    assert all(r["status"] == "ok" for r in s["candidates"]), s["failed"]
    # the fixed default lies in the space: its candidate and its reference run are both marked
    assert s["fixed"]["candidate"] is not None and s["fixed"]["in_space"]
    assert [r["id"] for r in s["candidates"] if r["is_fixed"]] == [s["fixed"]["candidate"], "fixed"]
    # the confirmation: 8 pairs, alternating (fixed first in even pairs, best first in odd ones)
    assert [(r["pair"], r["side"]) for r in c["runs"]] == [
        (p, side) for p in range(8) for side in (("fixed", "best") if p % 2 == 0 else ("best", "fixed"))
    ]
    assert all(r["status"] == "ok" for r in c["runs"]) and c["pairs"] == 8
    for side in ("fixed", "best"):
        assert c[side]["d_makespan_ns"]["n"] == 80
        assert c[side]["D/A"]["value"] > 0 and c[side]["D/C"]["value"] > 0
    for ext in ("pdf", "png"):
        assert (work / f"results/host/figures/search_place.{ext}").stat().st_size > 0
    tex = (work / "paper/generated/search_table.tex").read_text()
    assert r"\label{tab:search}" in tex and "place" in tex
    # nothing left to do, and nothing reruns
    res = snakemake(work, "-n", "searches")
    assert "Nothing to be done" in res.stdout + res.stderr


@pytest.mark.timing
def test_search_finds_the_one_core_placement_worse(work):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs 2 cores: the one-core placement is worse only where a second core exists")
    doc = json.loads((work / OUT / "result.json").read_text())
    s, c = doc["search"], doc["confirmation"]
    findings = [f"candidate {r['id']}: {r['env_warning']}" for r in s["candidates"] if r["disturbed"]]
    findings += c["reasons"]
    if findings:
        # the verdict withholds itself for the same reason
        assert c["verdict"] == "inconclusive"
        pytest.skip("the runs' own records show the cores were not free: " + "; ".join(findings[:4]))
    best = s["best"]
    assert best["values"]["affinity"] == "spread", best
    m = c["min_effect"]
    rows = {r["id"]: r for r in s["candidates"]}
    plan_values = {r["id"]: r["label"] for r in s["candidates"]}
    one_core = [cid for cid, lab in plan_values.items() if "host:0" in lab]
    assert len(one_core) == 3  # the two pinned candidates (each M tile), and the fixed reference
    for cid in one_core:
        assert rows[cid]["d_median_ns"] > (1 + m) * best["d_median_ns"], (cid, rows[cid], best)
    assert c["regret"]["lo"] > m, c["regret"]
    assert c["verdict"] == "fixed>best"


def test_editing_analysis_code_reruns_no_measurement(work):
    """The selection is a checkpoint and the confirmation reads it as
    ancient: a rerun of the selection that picks the same candidate reruns
    the analysis only."""
    path = work / "hxfuse" / "search" / "compare.py"
    original, st = path.read_text(), path.stat()
    path.write_text(original + "\n# an edit\n")
    try:
        res = snakemake(work, "searches")
    finally:
        path.write_text(original)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert res.returncode == 0, res.stderr[-3000:]
    # the jobs that ran (the plan's job stats list the checkpoint's
    # dependants provisionally, before the checkpoint has run)
    ran = set(re.findall(r"^local(?:rule|checkpoint) (\w+):", res.stdout + res.stderr, re.M))
    assert {"search_select", "search_result"} <= ran, ran
    assert not ran & {"search_run", "search_confirm", "build", "deploy"}, ran
