"""Known answer for the runner's interference evidence (docs/runner.md,
Interference; the ``interfered`` rule in docs/columns.md).

An antagonist, a separate busy-loop process pinned to the core the whole
runner is pinned to, runs throughout one invocation and not during another.
Which of the first's trials it really hit is known independently of the
flag: with fixed work on one core, a trial's wall time beyond its tasks' own
CPU time is time the core spent on something else.  Every trial that lost
clearly more than the threshold must be flagged ``interfered``, no trial
that lost clearly less may be, and the antagonist must have hit most trials
(else the run tested nothing).  At most 5% of the clean invocation's trials
may be flagged.  Two invocations rather than one with the antagonist
switched on and off by time, so that the clean half is clean by construction.

Why this does not flake on a shared 2-core VM:

- Every runner thread (host and engines) and the antagonist share one core,
  and the tasks are calibration busy-waits on thread CPU time (``--calibrate``):
  the work is fixed, so each nanosecond another process holds that core is a
  nanosecond of makespan.  The scheduler does not give the antagonist a turn
  in every trial (a CI run saw 89% of them hit, and the rest had lost 0.3% of
  their makespan and measured no other CPU time: rightly unflagged), so the
  test judges the flag against the makespan each trial lost, not against a
  share of trials the antagonist was assumed to reach.
- Machine state: the clean half needs a core that other work leaves alone for
  about a second.  Other engineers' builds and tests are real interference
  too, and the evidence flags them: so the clean invocation is retried, and if
  every try was hit the test checks that the flags were real (the flagged
  trials' makespans grew by the other CPU time measured) and skips, saying the
  machine was busy.  Only flags that no makespan bears out fail it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from hxfuse.runner import records as io
from hxfuse.analysis import metrics as mx

from runner_util import build_runner, run_runner

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timing,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux scheduling and /proc"),
]

CALIB = "M=2000,V=2000,D=2000"
ROUNDS = 30
CLEAN_TRIES = 4
# "clearly" above or below the threshold: a factor off it, so that a trial
# on the boundary (the reading's rounding, the host thread's own wake-ups)
# decides nothing
CLEAR = 3.0
SPINNER = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


@pytest.fixture(scope="module")
def runner():
    return build_runner()


def _core() -> int:
    return max(os.sched_getaffinity(0))


def _run(runner, out, core):
    pin = ",".join(f"{e}={core}" for e in ("host", "vec", "mx", "dma"))
    args = ("--workloads", "mvd", "--calibrate", CALIB, "--affinity", pin, "--rounds", str(ROUNDS), "--warmup", "1")
    proc, records = run_runner(runner, out, *args)
    assert proc.returncode == 0, proc.stderr
    return records, mx.trial_metrics(io.read_run(out))


def _groups(tm: pd.DataFrame) -> pd.DataFrame:
    """The measured, non-empty trials of groups A-D (what speedups pair)."""
    m = mx.measured(tm)
    return m[m["group"].isin(mx.GROUPS)]


def _with_antagonist(runner, out, core):
    spin = subprocess.Popen([sys.executable, "-c", SPINNER, str(core)])
    try:
        time.sleep(0.3)  # let it start spinning before the first trial
        return _run(runner, out, core)
    finally:
        spin.kill()
        spin.wait()


def _flags_are_real(g: pd.DataFrame) -> float:
    """Share of the flagged trials that other work really hit: their other
    CPU time is over the threshold and their wall time beyond their tasks'
    CPU time is at least half of it (on one pinned core with fixed work, real
    interference costs wall time one for one)."""
    hit = g[g["interfered"] == 1]
    if hit.empty:
        return 1.0
    lost = hit["makespan_ns"] - hit["cpu_ns"]
    other = hit["other_cpu_ns"]
    over = other > mx.interference_threshold_ns(hit["makespan_ns"].to_numpy(float))
    return float((over & (lost >= 0.5 * other)).mean())


def test_records_carry_the_evidence(runner, tmp_path):
    core = _core()
    records, tm = _run(runner, tmp_path / "shape.jsonl", core)
    info = records[0]["interference"]
    assert info["cores"] == [core]  # every thread pinned there
    assert info["busy_source"] in ("/sys/fs/cgroup/cpuacct/cpuacct.usage_percpu", "/proc/stat")
    assert info["busy_resolution_ns"] >= 1 and info["read_cost_ns"] > 0
    trials = [r for r in records if r["record"] == "trial"]
    for r in trials:
        i = r["interference"]
        assert set(i) == {"involuntary_switches", "cores_busy_ns", "self_cpu_ns", "other_cpu_ns", "span_ns"}
        assert i["other_cpu_ns"] >= 0 and i["involuntary_switches"] >= 0
        # the readings lie outside the timed interval
        assert i["span_ns"] >= r["makespan_ns"]
        for t in r["tasks"]:
            assert (t["involuntary_switches"] is None) == r["empty"]
    assert tm["interfered"].notna().all()


def test_antagonist_rounds_are_flagged_and_clean_rounds_are_not(runner, tmp_path):
    core = _core()
    _, hit = _with_antagonist(runner, tmp_path / "antagonist.jsonl", core)
    g = _groups(hit)
    lost, limit = g["makespan_ns"] - g["cpu_ns"], mx.interference_threshold_ns(g["makespan_ns"].to_numpy(float))
    clear_hit, clear_miss = lost > CLEAR * limit, lost < limit / CLEAR
    flagged = g["interfered"] == 1
    # Premises first, each on a sample that is there: the runner measured its
    # trials (an empty table is a runner bug, not the machine), and the
    # antagonist really took the core in most of them.  Whether it did is the
    # scheduler's choice (a spinner pinned beside the runner): when it did not,
    # the flag is not tested here, and the test says so rather than passing.
    assert len(g) >= ROUNDS, f"{len(g)} measured trials of groups A-D for {ROUNDS} rounds"
    if clear_hit.mean() < 0.5:
        pytest.skip(f"the antagonist clearly hit only {clear_hit.mean():.0%} of the {len(g)} trials: nothing tested")
    cols = ["group", "makespan_ns", "cpu_ns", "other_cpu_ns"]
    assert flagged[clear_hit].mean() >= 0.98, g.loc[clear_hit & ~flagged, cols]
    # The trials the antagonist clearly missed must not be flagged.  It may hit
    # every trial (a 2-core AMD EPYC saw that): then there is no clear miss,
    # the mean of the empty selection is NaN, and this half of the claim rests
    # on the clean invocations below, which must have trials.
    if clear_miss.any():
        assert flagged[clear_miss].mean() <= 0.02, g.loc[clear_miss & flagged, cols]
    # a relation's round pairs two trials and is hit when either is: at least
    # as often as the more often hit of its two groups' trials
    shares = mx.interfered_round_shares(hit, "mvd")
    by_group = g.groupby("group")["interfered"].mean()
    for rel, share in shares.items():
        x, y = rel.split("/")
        assert share >= max(by_group[x], by_group[y]) - 1e-9, (rel, share, by_group.to_dict())
    # the measured other CPU time is what the makespans lost: the wall time
    # beyond the tasks' own CPU time (fixed work, one core)
    lost = g["makespan_ns"] - g["cpu_ns"]
    big = g["other_cpu_ns"] > 1e6
    # at least half the trials were clearly hit, each by over 3x the
    # threshold: some carry over 1 ms of other CPU time, or the evidence lost it
    assert big.sum() >= 3, g[cols]
    ratio = (lost[big] / g.loc[big, "other_cpu_ns"]).median()
    assert 0.7 < ratio < 1.3, ratio

    tries = []
    for k in range(CLEAN_TRIES):
        _, clean = _run(runner, tmp_path / f"clean{k}.jsonl", core)
        g = _groups(clean)
        assert len(g) >= ROUNDS, f"{len(g)} measured trials of groups A-D for {ROUNDS} rounds"
        shares = mx.interfered_round_shares(clean, "mvd")
        tries.append((float(g["interfered"].mean()), max(shares.values()), _flags_are_real(g)))
        # a group's round is its trial; a relation's round pairs two trials,
        # so its share of hit rounds is up to twice that and only reported
        if tries[-1][0] <= 0.05:
            return
    # Every try was hit: acceptable only if the flags were real interference.
    assert all(real >= 0.9 for _, _, real in tries), f"flags without a makespan cost: {tries}"
    pytest.skip(f"machine busy: every clean try was really interfered (trial share, worst relation, real): {tries}")


def test_flags_follow_the_other_cpu_time(runner, tmp_path):
    """Within one antagonist run the flag tracks the evidence: a trial is
    flagged when the other CPU time that did not fit into idle time on the
    runner's core (``displaced_cpu_ns``) is over the threshold, and a flag
    always has that much other CPU time behind it.  Comparing with the raw
    other CPU time alone (as this test did when the rule read it) failed in
    1 of 3 stress runs: the antagonist had spent 1.8 ms in a trial's idle
    time (the host blocked in its wait), which the rule rightly does not
    count."""
    core = _core()
    records, tm = _with_antagonist(runner, tmp_path / "a.jsonl", core)
    m = mx.measured(tm)
    assert len(m) >= ROUNDS, f"{len(m)} measured trials for {ROUNDS} rounds: nothing to compare"
    resolution = records[0]["interference"]["busy_resolution_ns"]
    limit = mx.interference_threshold_ns(m["makespan_ns"].to_numpy(float), resolution)
    other, displaced = m["other_cpu_ns"].to_numpy(float), m["displaced_cpu_ns"].to_numpy(float)
    if not (other > limit).any():
        pytest.skip(f"the antagonist took the core in none of the {len(m)} trials: nothing flagged to compare")
    flagged = m["interfered"].to_numpy(bool)
    assert np.array_equal(flagged, displaced > limit)
    # displaced time is other processes' time: never more, and every flag
    # has other CPU time over the threshold behind it
    assert (displaced <= other).all()
    assert (other[flagged] > limit[flagged]).all()
