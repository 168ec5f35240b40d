"""A release request from the NPU's resource manager (docs/runner.md,
"Preemption"), driven on the host by the runner's test hook: the run stops at
the next trial boundary, marks exactly the trial the request came in, names
the preemption in its end record, and neither the check nor the analysis
lets that trial count."""

from __future__ import annotations

import math

import pytest

from hxfuse.analysis import metrics as mx
from hxfuse.runner.checks import check_point
from hxfuse.runner.records import read_run
from runner_util import build_runner, run_runner

TINY = ("--m-shape", "32,32,32", "--v-shape", "8,64", "--d-shape", "16,64", "--precision", "u8i8")


@pytest.fixture(scope="module")
def hxrun():
    return build_runner("host")


def _kinds(trials):
    return [(t["group"], t["workload"], t["empty"]) for t in trials]


def test_the_run_ends_at_the_boundary_of_the_trial_the_request_came_in(hxrun, tmp_path):
    args = (*TINY, "--warmup", "1", "--rounds", "3")
    _, base = run_runner(hxrun, tmp_path / "b.jsonl", *args)
    base_trials = [r for r in base if r["record"] == "trial"]
    # the last measured group trial of round 0 (after the warm-up round): the
    # other groups of that round ran before it
    at = max(i for i, t in enumerate(base_trials) if t["round"] == 0 and t["group"] in mx.GROUPS and not t["empty"])
    out, npy = tmp_path / "p.jsonl", tmp_path / "npy"
    proc, recs = run_runner(hxrun, out, *args, "--npy-dir", str(npy), "--preempt-at-trial", str(at))
    assert proc.returncode == 6, proc.stderr
    assert "preempted" in proc.stderr and "trial boundary" in proc.stderr
    trials = [r for r in recs if r["record"] == "trial"]
    # the trials up to it ran as without the request, it is marked, none follows
    assert _kinds(trials) == _kinds(base_trials[: at + 1])
    assert [i for i, t in enumerate(trials) if t["preempted"]] == [at]
    end = recs[-1]
    assert end["status"] == "preempted" and end["trials"] == at + 1
    p = end["preemption"]
    assert p["trial"] == at and p["round"] == 0
    assert p["asked_ns"] <= p["released_ns"] and p["release_latency_ns"] == p["released_ns"] - p["asked_ns"]
    assert p["release_bound_ns"] == 5_000_000 and p["within_bound"] is (p["release_latency_ns"] <= 5_000_000)
    res = check_point(out, npy)
    assert res["status"] == "failed"
    assert any("runner preempted" in r and f"trial {at} (marked preempted)" in r for r in res["reasons"])

    tm = mx.trial_metrics(read_run(out))
    assert tm["preempted"].tolist() == [i == at for i in range(at + 1)]
    m = mx.measured(tm)
    assert at not in set(m["trial_id"])
    assert len(m) == int((~tm["warmup"] & ~tm["empty"]).sum()) - 1
    # its round pairs its group with no other: every speedup with it is NaN
    group, workload = trials[at]["group"], trials[at]["workload"]
    sp = mx.paired_speedups(tm, workload)
    pairs = [f"speedup_{x}_over_{y}" for x, y in mx.SPEEDUP_PAIRS if group in (x, y)]
    others = [f"speedup_{x}_over_{y}" for x, y in mx.SPEEDUP_PAIRS if group not in (x, y)]
    assert pairs and all(math.isnan(sp.loc[0, c]) for c in pairs)
    assert all(math.isfinite(sp.loc[0, c]) for c in others)


def test_without_a_request_no_trial_is_marked(hxrun, tmp_path):
    proc, recs = run_runner(hxrun, tmp_path / "q.jsonl", *TINY, "--warmup", "0", "--rounds", "1")
    assert proc.returncode == 0, proc.stderr
    assert not any(r["preempted"] for r in recs if r["record"] == "trial")
    assert recs[-1]["status"] == "ok" and recs[-1]["preemption"] is None
