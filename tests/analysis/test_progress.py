"""Known answers for the checkpoint progress evidence (hxfuse.analysis.progress, docs/metrics.md).

(a) Pure functions on synthetic checkpoint series whose answers are exact.
(b) The real runner (marked slow): M and V pinned to one core overlap in
    wall-clock span but never advance together; on two free cores they do.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hxfuse.runner import records as io
from hxfuse.analysis import metrics as mx
from hxfuse.analysis import progress as pg
from runner_util import MAX_STEAL_SHARE, build_runner, children_cpu_s, cpu_busy_s, run_runner, steal_during

MS = 1_000_000.0
ENGINE = {"M": "mx", "V": "vec", "D": "dma"}


def steady(t0: float, t1: float, blocks: int = 8, w0: float = 0.0, w1: float = 1.0) -> pg.Curve:
    """A thread doing its work [w0, w1] at a constant rate from t0 to t1."""
    return (list(np.linspace(t0, t1, blocks + 1)), list(np.linspace(w0, w1, blocks + 1)))


ALONE_3MS = 1.0 / (3 * MS)


def test_two_tasks_advancing_fully_at_once():
    tasks = [[steady(0, 3 * MS)], [steady(0, 3 * MS, blocks=5)]]
    assert pg.concurrent_progress_ns(tasks, [ALONE_3MS, ALONE_3MS]) == pytest.approx(3 * MS)


def test_taking_turns_gives_zero():
    # one core: A runs its 3 ms, then B its 3 ms; their spans do not even need
    # to be disjoint for this, see the slice-interleaved case below
    tasks = [[steady(0, 3 * MS)], [steady(3 * MS, 6 * MS)]]
    assert pg.concurrent_progress_ns(tasks, [ALONE_3MS, ALONE_3MS]) == 0.0


def test_time_slices_inside_overlapping_spans_give_zero():
    # One core alternating in 1 ms slices: A runs [0,1], [2,3], [4,5] and B
    # [1,2], [3,4], [5,6], a checkpoint after each third of the work.  Each
    # needs 2.5 ms alone.  An interval that spans a slice lost to the other
    # task does 1/3 of the work in 2 ms: 42% of the alone rate.
    a = ([0, 1 * MS, 3 * MS, 5 * MS], [0, 1 / 3, 2 / 3, 1])
    b = ([1 * MS, 2 * MS, 4 * MS, 6 * MS], [0, 1 / 3, 2 / 3, 1])
    alone = 1.0 / (2.5 * MS)
    assert pg.concurrent_progress_ns([[a], [b]], [alone, alone]) == 0.0
    # the broken rule (any progress counts: threshold 0) reports the spans' overlap
    assert pg.concurrent_progress_ns([[a], [b]], [alone, alone], threshold=0.0) == pytest.approx(4 * MS)


def test_a_task_at_40_percent_of_its_alone_rate_does_not_count():
    fast = [steady(0, 3 * MS)]
    slow = [steady(0, 7.5 * MS)]  # the same work at 40% of the alone rate
    assert pg.concurrent_progress_ns([fast, slow], [ALONE_3MS, ALONE_3MS]) == 0.0
    assert pg.advancing_ns(slow, ALONE_3MS) == 0.0
    assert pg.advancing_ns(fast, ALONE_3MS) == pytest.approx(3 * MS)
    # at 60% it does, for as long as both run
    slow60 = [steady(0, 5 * MS)]
    assert pg.concurrent_progress_ns([fast, slow60], [ALONE_3MS, ALONE_3MS]) == pytest.approx(3 * MS)


def test_partial_overlap_and_workers_add_up():
    # V with two workers, each half of the work in 3 ms: the task advances at
    # its alone rate (1 / 3 ms) while both run; M runs [1 ms, 4 ms].
    v = [steady(0, 3 * MS, w1=0.5), steady(0, 3 * MS, w1=0.5)]
    m = [steady(1 * MS, 4 * MS)]
    assert pg.mean_rate(v) == pytest.approx(ALONE_3MS)
    assert pg.concurrent_progress_ns([m, v], [ALONE_3MS, ALONE_3MS]) == pytest.approx(2 * MS)
    # one V worker alone: the task runs at half its alone rate, which counts
    assert pg.concurrent_progress_ns([m, v[:1]], [ALONE_3MS, ALONE_3MS]) == pytest.approx(2 * MS)
    t, w = pg.progress_curve(v)
    assert w[0] == 0.0 and w[-1] == pytest.approx(1.0) and np.all(np.diff(t) > 0)


def test_undefined_cases_are_nan():
    a = [steady(0, 3 * MS)]
    assert math.isnan(pg.concurrent_progress_ns([a], [ALONE_3MS]))  # one task
    assert math.isnan(pg.concurrent_progress_ns([a, []], [ALONE_3MS, ALONE_3MS]))  # no checkpoints
    assert math.isnan(pg.concurrent_progress_ns([a, a], [ALONE_3MS, math.nan]))  # no alone rate
    assert math.isnan(pg.mean_rate([]))


def _trial(group, workload, tasks, trial_round=0, seq=0):
    """A minimal trial record whose tasks carry checkpoints; tasks = {T: (t0, t1, cpu_ns)}."""
    recs = []
    for name, (t0, t1, cpu) in tasks.items():
        ck, work = steady(t0, t1, blocks=4)
        worker = {"engine": ENGINE[name], "begin": t0, "end": t1, "cpu_ns": cpu}
        worker |= {"cpu_begin": 0, "cpu_end": 0, "checkpoints": ck, "checkpoint_work": work}
        recs.append({"task": name, "engine": worker["engine"], "launch": t0, "begin": t0, "end": t1})
        recs[-1] |= {"host_seen": t1, "cpu_ns": cpu, "cpu_begin": 0, "cpu_end": 0, "workers": [worker]}
        recs[-1]["checksum"] = "0" * 16
    end = max(t1 for _, t1, _ in tasks.values())
    host = {"submit_begin": 0, "submit_end": 1, "wait_begin": 1, "wait_end": end, "submit_ns": 1, "wait_ns": end - 1}
    host |= {"requests": 1, "submits": [1], "cpu": 0}
    return {
        "record": "trial",
        "round": trial_round,
        "seq": seq,
        "warmup": False,
        "workload": workload,
        "group": group,
        "empty": False,
        "host": host,
        "device": {"entry_begin": 0, "entry_end": end} if group in "CD" else None,
        "tasks": recs,
        "waits": [],
        "scratch_peak_bytes": 0,
        "makespan_ns": end,
        "checksums_ok": True,
    }


def _run(synth, trials):
    records = [synth.meta_record(online_cores=2), *trials]
    lines = [json.dumps(r) for r in records]
    lines.append(json.dumps({"record": "end", "records": len(lines), "status": "ok"}))
    return io.parse_records(lines)


def test_trial_columns_and_null_cpu_time(synth):
    # Alone: M and V take 3 ms each.  D trial: both advance at once for
    # 3 ms; C trial: they take turns.  cpu_ns null (a platform whose thread
    # counters do not advance): parallelism NaN, never 0.
    alone = [_trial("alone", t, {t: (0, 3 * MS, None)}, seq=i) for i, t in enumerate("MV")]
    d = _trial("D", "mv", {"M": (0, 3 * MS, None), "V": (0, 3 * MS, None)}, seq=2)
    c = _trial("C", "mv", {"M": (0, 3 * MS, None), "V": (3 * MS, 6 * MS, None)}, seq=3)
    tm = mx.trial_metrics(_run(synth, [*alone, d, c])).set_index("group")
    assert mx.alone_progress_rates(_run(synth, alone)) == pytest.approx({"M": ALONE_3MS, "V": ALONE_3MS})
    assert tm.loc["D", "concurrent_progress_ns"] == pytest.approx(3 * MS)
    assert tm.loc["D", "concurrent_progress_share"] == pytest.approx(1.0)
    assert tm.loc["C", "concurrent_progress_ns"] == 0.0
    assert tm.loc["D", "M_advancing_ns"] == pytest.approx(3 * MS)
    assert math.isnan(tm.loc["alone", "concurrent_progress_ns"].iloc[0])
    assert tm["parallelism"].isna().all() and tm["M_cpu_ns"].isna().all()


# ---------------------------------------------------------------- the runner

# M (GEMM) and V (vector) at the study's default sizes (config.yaml): ~6 ms each
# alone on the 2-core Xeon with the AVX-512 kernels, both longer than the
# scheduler's slice, so that on one core they interleave in every trial.
RUNNER_ARGS = ("--workloads", "mv", "--groups", "D", "--m-shape", "704,704,704", "--v-shape", "512,1024")
RUNNER_ARGS += ("--v-passes", "6", "--rounds", "10", "--warmup", "2")


def _d_trials(tmp_path, affinity: str, attempt: int):
    out = tmp_path / f"run_{affinity.replace(',', '_').replace('=', '')}_{attempt}.jsonl"
    proc, _ = run_runner(build_runner(), out, *RUNNER_ARGS, "--affinity", affinity, "--seed", str(attempt + 1))
    assert proc.returncode == 0, proc.stderr
    run = io.read_run(out)
    tm = mx.measured(mx.trial_metrics(run))
    return run, tm, tm[tm["group"] == "D"]


@pytest.mark.timing
@pytest.mark.slow
def test_runner_one_core_spans_overlap_without_concurrent_progress(tmp_path):
    run, _, d = _d_trials(tmp_path, "mx=0,vec=0", 0)
    assert len(d) == 10, len(d)  # --rounds 10: the sample is there
    # the two tasks never advance together: measured ~0.00 in every trial
    assert d["concurrent_progress_share"].median() <= 0.15
    # The premise of the contrast: the spans overlap almost entirely (what
    # wall-clock evidence would call overlap).  Whether two 6 ms tasks on one
    # core interleave is the scheduler's choice (its time slice); checked on
    # the run's own spans, and the rules told apart on the trials that have it.
    d = d[d["overlap_mx_vec"] > 0.8]
    if len(d) < 3:
        pytest.skip(f"the scheduler ran M and V one after the other: {len(d)} of 10 trials' spans overlap")
    assert d["concurrent_progress_share"].median() <= 0.15
    # The broken rule (any progress counts, threshold 0) reads the overlap of
    # the checkpointed work instead, so the bound above tells the rules
    # apart -- on the trials whose progress curves overlap in time.  The
    # threads' spans may overlap without that: a thread that began, lost the
    # core before its first checkpoint and ran after the other had ended (M
    # at 3 ms, one scheduler slice, on a fast machine: its whole GEMM in one
    # slice) has an overlapping span and curves one after the other, where
    # both rules rightly read 0 and tell nothing apart.
    curves, alone = mx.task_curves(run), mx.alone_progress_rates(run)
    shorter = min(1.0 / alone["M"], 1.0 / alone["V"])

    def curve_overlap(t: int) -> float:
        (m,), (v,) = curves[t]["M"], curves[t]["V"]
        return (min(m[0][-1], v[0][-1]) - max(m[0][0], v[0][0])) / shorter

    both = [int(t) for t in d["trial_id"] if curve_overlap(int(t)) >= 0.8]
    if len(both) < 3:
        pytest.skip(
            f"the tasks' progress curves overlap in {len(both)} of {len(d)} overlapping trials: nothing to contrast"
        )
    broken = [
        pg.concurrent_progress_ns([curves[t]["M"], curves[t]["V"]], [alone["M"], alone["V"]], threshold=0.0) / shorter
        for t in both
    ]
    assert np.median(broken) > 0.5, broken
    share = d.set_index("trial_id")["concurrent_progress_share"]
    assert share.loc[both].median() <= 0.15


def _d_trials_with_foreign_load(tmp_path, attempt: int):
    """The two-core D trials and the share of cores 0 and 1 that anything else took meanwhile.

    The premise "two free cores" is read from the kernel's per-CPU counters,
    not from the runner's own records, so that a runner which serialises its
    tasks (one thread waiting on the other) cannot talk its way into a skip:
    foreign load = (busy ticks on cores 0 and 1 - the runner's own CPU time)
    over the two cores' wall time; steal (the hypervisor running someone else
    on our vCPU) counts as busy, and is returned on its own as well: a
    twentieth of the cores stolen is already no longer two free cores
    (runner_util.MAX_STEAL_SHARE), where other jobs may take 15%.
    """
    cpu0, busy0, wall0 = children_cpu_s(), cpu_busy_s((0, 1)), time.monotonic()
    with steal_during((0, 1)) as steal:
        _, tm, d = _d_trials(tmp_path, "mx=0,vec=1", attempt)
    wall = time.monotonic() - wall0
    others = (cpu_busy_s((0, 1)) - busy0) - (children_cpu_s() - cpu0)
    return tm, d, max(0.0, others) / (2 * wall), steal["share"]


# The second premise, per trial: each task ran its instructions at the rate
# it has alone, i.e. its CPU time in D is no more than 1 / 0.75 of its CPU
# time alone.  On a VM whose two vCPUs the host sometimes places on two
# hyperthreads of one physical core (invisible to this kernel, even as
# steal), M's GEMM then runs at ~0.6 of its rate beside V while its thread
# holds its core throughout (run share ~1): seen on a 2-core AMD EPYC KVM
# guest in 3 of 20 quiet runs, M 13.1 ms of CPU in D against 7.7 ms alone,
# and the 50% progress threshold reads it as no concurrent progress
# (medians 0.00-0.05 where the other runs give 0.7-0.95).  A runner that
# serialises its tasks leaves their CPU times as they are alone (a task
# waiting for its turn does not run): its trials stay in the sample and fail.
MIN_INSTRUCTION_RATE = 0.75


def instruction_rates(tm, d):
    """Per D trial of *d*: the lower of M's and V's CPU time alone (the
    median of the run's measured trials *tm*) over its CPU time in that
    trial (1: as fast as alone)."""
    alone = {t: tm.loc[(tm["group"] == "alone") & (tm["workload"] == t), f"{t}_cpu_ns"].median() for t in "MV"}
    return pd.concat([alone[t] / d[f"{t}_cpu_ns"] for t in "MV"], axis=1).min(axis=1)


@pytest.mark.timing
@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/stat").exists() or (os.cpu_count() or 1) < 2, reason="needs Linux, 2 cores")
def test_runner_two_cores_progress_concurrently(tmp_path):
    # What is checked: M and V pinned to two cores advance together, where on
    # one core (the test above) they never do (measured 0.00).  Measured
    # median share of the shorter task's alone time: ~0.98 on an idle 2-core
    # Xeon VM, 0.51 on a CI VM whose two vCPUs each ran the tasks at about
    # half their alone rate (sharing one physical core, or its memory
    # bandwidth): the 50% progress threshold then cuts through the middle.
    # How fast two cores are is the machine's business and belongs in
    # benchmarks/bench_runner.py; 0.3 is far above a runner that serialises
    # its tasks (~0) and below the slowest honest pair seen.
    # The premise, two free cores, is checked twice: per run, the kernel's
    # counters say how much of cores 0 and 1 other jobs took
    # (_d_trials_with_foreign_load: at most 15%, the hypervisor at most 5%);
    # per trial, the tasks' own
    # CPU times say whether the two cores were two (instruction_rates: at
    # least MIN_INSTRUCTION_RATE), which the counters cannot see on a VM.
    # The trials that fail it are left out; a run with fewer than 5 of 10
    # left, or too busy, is retried, four at most, then skipped saying what
    # was measured.  A run whose premise held is asserted on, never retried.
    seen = []
    for attempt in range(4):
        tm, d, foreign, steal = _d_trials_with_foreign_load(tmp_path, attempt)
        assert len(d) == 10, len(d)
        rate = instruction_rates(tm, d)
        kept = d[rate >= MIN_INSTRUCTION_RATE]
        seen.append(f"others took {foreign:.2f} (steal {steal:.2f}), {len(kept)} of 10 trials at full instruction rate")
        if foreign <= 0.15 and steal <= MAX_STEAL_SHARE and len(kept) >= 5:
            break
    else:
        pytest.skip("cores 0 and 1 were not two free cores in any attempt: " + "; ".join(seen))
    share = kept["concurrent_progress_share"]
    assert share.median() >= 0.3, (seen[-1], share.describe())


def test_timeline_progress_curves_and_perfetto_counters(synth):
    from hxfuse.analysis import timeline as tl

    alone = [_trial("alone", t, {t: (0, 3 * MS, 3 * MS)}, seq=i) for i, t in enumerate("MV")]
    d = _trial("D", "mv", {"M": (0, 3 * MS, 3 * MS), "V": (0, 2 * MS, 2 * MS)}, seq=2)
    run = _run(synth, [*alone, d])
    pc = tl.progress_curves(run)
    m = pc[(pc["group"] == "D") & (pc["task"] == "M")]
    assert m["work"].iloc[0] == 0.0 and m["work"].iloc[-1] == pytest.approx(1.0)
    assert m["t_rel_ns"].iloc[-1] == pytest.approx(3 * MS)
    # V at 1.5x its alone rate for 2 ms, M at its alone rate: 2 ms together
    tid = int(run.trials.loc[run.trials["group"] == "D", "trial_id"].iloc[0])
    assert tl.trial_concurrent_progress(run, [tid])[tid] == pytest.approx(2 * MS)
    trace = tl.perfetto_trace(run)
    assert tl.trace_problems(trace) == []
    counters = [e for e in trace["traceEvents"] if e["ph"] == "C"]
    assert {e["name"] for e in counters} == {"progress M", "progress V"}
    assert max(e["args"]["work"] for e in counters) == pytest.approx(1.0)
    bad = {"ph": "C", "pid": 1, "name": "progress M", "ts": -1.0, "args": {"work": "x"}}
    assert len(tl.trace_problems({"traceEvents": [bad]})) == 2
