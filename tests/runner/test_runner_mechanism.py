"""Mechanism validation of the fused executor, driving the
compiled host runner.  Calibration tasks busy-wait on *thread CPU time*, so a
task that is descheduled keeps running on the wall clock: the timestamp
arguments below hold on a loaded machine too."""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from hxfuse.runner.mechanism import ASYNC_LAUNCH_ARGS, C_EQUALS_D_ARGS, PUBLICATION_ARGS, WAIT_ARGS, calibration_args
from runner_util import MAX_STEAL_SHARE, build_runner, run_runner, steal_during, task, trials


@pytest.fixture(scope="module")
def hxrun():
    return build_runner("host")


def ok(proc, records):
    assert proc.returncode == 0, proc.stderr
    assert records[0]["record"] == "meta" and records[-1]["record"] == "end"
    assert records[-1]["status"] == "ok"
    return records


def test_async_launch_lets_vector_finish_while_matrix_runs(hxrun, tmp_path):
    # (a) M is ten times longer than V: in group D, V must run and be published
    # to the host while M is still running.
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "a.jsonl",
            *ASYNC_LAUNCH_ARGS,
        )
    )
    for t in trials(recs, group="D"):
        m, v = task(t, "M"), task(t, "V")
        assert v["engine"] == "vec" and m["engine"] == "mx"
        # M was launched before V ran and was still outstanding when V ended
        # (launch, not begin: on a loaded machine M's thread may wait for a core)
        assert m["launch"] <= v["begin"] and v["end"] < m["end"], t
        assert v["host_seen"] < m["end"], t  # early completion reached the host
        assert t["device"]["entry_begin"] <= m["begin"]


def test_wait_on_one_event_does_not_block_unrelated_engine(hxrun, tmp_path):
    # (b) The entry thread waits on eM (long); the copy engine still runs D
    # to completion during that wait.  In C the barrier serialises them.
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "b.jsonl",
            *WAIT_ARGS,
        )
    )
    for t in trials(recs, group="D"):
        m, d = task(t, "M"), task(t, "D")
        wait_em = next(w for w in t["waits"] if w["who"] == "vec" and w["on"] == "eM")
        assert d["end"] < wait_em["end"] and d["end"] < m["end"], t
    for t in trials(recs, group="C"):
        assert task(t, "D")["begin"] >= task(t, "M")["end"], t


def test_publication_makes_outputs_visible(hxrun, tmp_path):
    # (c) Thousands of rounds of small real tasks; the host checksums each
    # task's outputs immediately after observing its completion event.
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "c.jsonl",
            *PUBLICATION_ARGS,
            "1500",
        )
    )
    work = [t for t in recs if t["record"] == "trial" and not t["empty"]]
    assert len(work) >= 1500 * 5
    assert all(t["checksums_ok"] for t in work)
    assert recs[-1]["checksum_mismatches"] == 0


def test_groups_c_and_d_give_identical_outputs(hxrun, tmp_path):
    # (d) Every C and D trial of every workload reproduces the verified checksums.
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "d.jsonl",
            *C_EQUALS_D_ARGS,
        )
    )
    verified = {}
    for v in (r for r in recs if r["record"] == "verify"):
        for name, cs in v["checksums"].items():
            assert verified.setdefault(name, cs) == cs
    for group in "CD":
        for wl in ("mv", "md", "mvd"):
            ts = trials(recs, group=group, workload=wl)
            assert len(ts) == 5
            for t in ts:
                for x in t["tasks"]:
                    assert x["checksum"] == verified[x["task"]]


@pytest.mark.parametrize("hook,tasks", [("V-out-aliases-M-out", ("M", "V")), ("D-dst-aliases-V-scratch", ("V", "D"))])
def test_overlapping_ranges_are_rejected(hxrun, tmp_path, hook, tasks):
    # (e) A real address-range check: aliasing real buffers is refused with a
    # message naming both tasks, before any trial, and no output is left.
    out = tmp_path / "e.jsonl"
    proc, recs = run_runner(hxrun, out, "--inject-conflict", hook, "--rounds", "1")
    assert proc.returncode == 3
    assert "range conflict between task %s and task %s" % tasks in proc.stderr
    assert recs is None and not (tmp_path / "e.jsonl.tmp").exists()


def test_scratch_overflow_is_rejected(hxrun, tmp_path):
    proc, recs = run_runner(hxrun, tmp_path / "o.jsonl", "--scratch-bytes", "1048576", "--rounds", "1")
    assert proc.returncode == 3
    assert "scratch overflow" in proc.stderr and "V=4194304" in proc.stderr and "D=2097152" in proc.stderr
    assert recs is None


def _busy_union_us(trial):
    """Length of the union of the trial's task intervals, in us."""
    total, cur = 0, None
    for b, e in sorted((x["begin"], x["end"]) for x in trial["tasks"]):
        if cur is None or b > cur[1]:
            total += (cur[1] - cur[0]) if cur else 0
            cur = [b, e]
        else:
            cur[1] = max(cur[1], e)
    return (total + cur[1] - cur[0]) / 1000.0


def _interference_limit(trial) -> float:
    """Other CPU time above which the analysis calls a trial interfered
    (hxfuse.analysis.metrics.interference_threshold_ns)."""
    from hxfuse.analysis.metrics import interference_threshold_ns

    return float(interference_threshold_ns(trial["makespan_ns"]))


@pytest.mark.timing
def test_calibration_serial_is_sum_and_fused_concurrent_approaches_bound(hxrun, tmp_path):
    # (f) The plan's 100/80/60 us example.  With k cores for n tasks the bound
    # is max(max T, sum T / k); with too few cores we check the two-task case
    # (M=100, V=80) whose bound is the max on two cores.  The tasks' busy
    # union is the overlap evidence: C's is about the sum, D's close to the
    # bound.  The entry spans add wake-up latencies (tens of us on a VM; the
    # empty variants measure them), so they only have to order D < C.  Loose
    # on purpose: a mechanism check, not a performance bar.
    import os

    cores = os.cpu_count() or 1
    if cores >= 4:
        wl, cal, total, bound = "mvd", "M=100,V=80,D=60", 240, 100
    elif cores >= 2:
        wl, cal, total, bound = "mv", "M=100,V=80", 180, 100
    else:
        pytest.skip("needs at least two cores to overlap two engines")
    with steal_during(sorted(os.sched_getaffinity(0))) as steal:
        recs = ok(*run_runner(hxrun, tmp_path / "f.jsonl", *calibration_args(wl, cal)))
    span = lambda t: (t["device"]["entry_end"] - t["device"]["entry_begin"]) / 1000.0
    assert len(trials(recs, group="C")) == len(trials(recs, group="D")) == 200
    # The premise: the engines' cores were free.  With another process busy
    # on one of them (tests/stress.sh's load, a CI neighbour), M's engine
    # thread waits milliseconds for its core after V has begun and D ran M
    # and V one after the other, D ~ C as a serial D would be.  The runner's
    # own interference evidence (other processes' CPU time on its cores during
    # each trial, docs/runner.md) says which trials had the cores; it does not
    # depend on how the runner scheduled its tasks, so it cannot hide the
    # failure the test is for.  The medians below are of those trials.
    clean = {
        g: [t for t in trials(recs, group=g) if t["interference"]["other_cpu_ns"] <= _interference_limit(t)]
        for g in ("C", "D")
    }
    if min(len(v) for v in clean.values()) < 20:
        pytest.skip(
            "the engines' cores were not free: other processes ran on them during all but "
            f"{len(clean['C'])} C and {len(clean['D'])} D trials of 200"
        )
    # ... and the hypervisor gave them to us (runner_util.MAX_STEAL_SHARE)
    if steal["share"] > MAX_STEAL_SHARE:
        pytest.skip(steal["why"])
    med = lambda g, f: statistics.median(f(t) for t in clean[g])
    c_busy, d_busy = med("C", _busy_union_us), med("D", _busy_union_us)
    seen = (c_busy, d_busy, f"steal {steal['share']:.1%}")
    assert c_busy >= 0.95 * total, seen
    if c_busy > 1.5 * total:
        # the same premise seen from the tasks: serial C's busy-waits far
        # beyond their nominal sum means something the runner's interference
        # evidence cannot see took the cores (an oversubscribed VM's other
        # tenants; seen on a 2-vCPU VM, C at 330-365 us for its 180, D alike)
        pytest.skip(f"the busy-waits did not get their cores: serial C took {c_busy:.0f} us for {total} us of work")
    # at least half the overlap opportunity, as a ratio to C measured in the
    # same run: another process preempting the busy-waits stretches C and D
    # alike (C at 217 us for its 180 on a loaded CI machine, D at 149), so
    # an absolute bar fails the mechanism for the machine's load; D ~ C (no
    # overlap) still fails at any load
    assert d_busy <= c_busy * (bound + 0.5 * (total - bound)) / total, seen
    assert med("D", span) < med("C", span), seen


def test_jsonl_has_real_timelines_for_all_three_workloads(hxrun, tmp_path):
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "t.jsonl",
            "--workloads",
            "mv,md,mvd",
            "--m-shape",
            "96,96,96",
            "--v-shape",
            "64,512",
            "--d-shape",
            "256,1024",
            "--warmup",
            "1",
            "--rounds",
            "3",
        )
    )
    meta = recs[0]
    assert meta["tasks"]["M"]["flops"] == 2 * 96**3
    assert meta["clock"]["read_overhead_ns"] >= 0 and meta["online_cores"] >= 1
    expected = {"mv": {"M", "V"}, "md": {"M", "D"}, "mvd": {"M", "V", "D"}}
    for wl, names in expected.items():
        for group in "ABCD":
            for t in trials(recs, group=group, workload=wl):
                assert {x["task"] for x in t["tasks"]} == names
                h = t["host"]
                assert h["submit_begin"] <= h["submit_end"] <= h["wait_end"]
                assert t["makespan_ns"] == h["wait_end"] - h["submit_begin"] > 0
                for x in t["tasks"]:
                    assert h["submit_begin"] <= x["begin"] < x["end"] <= x["host_seen"] <= h["wait_end"]
                if group in "CD":
                    dev = t["device"]
                    assert dev["entry_begin"] <= min(x["begin"] for x in t["tasks"])
                    assert max(x["end"] for x in t["tasks"]) <= dev["entry_end"] <= h["wait_end"]
                if group == "A":  # one request at a time, in the fixed order M, D, V
                    order = sorted(t["tasks"], key=lambda x: x["begin"])
                    for a, b in zip(order, order[1:]):
                        assert a["host_seen"] <= b["begin"]
    for name in "MVD":
        assert len(trials(recs, group="alone", workload=name)) == 3
    # empty variants exist for every group and run zero work
    assert len(trials(recs, group="D", workload="mvd", empty=True)) == 3


def test_u8i8_outputs_match_numpy_exactly(hxrun, tmp_path):
    npy = tmp_path / "npy"
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "u.jsonl",
            "--precision",
            "u8i8",
            "--npy-dir",
            str(npy),
            "--m-shape",
            "37,53,71",
            "--v-shape",
            "13,77",
            "--v-passes",
            "3",
            "--d-shape",
            "33,100",
            "--d-repeat",
            "3",
            "--d-desc-rows",
            "8",
            "--warmup",
            "0",
            "--rounds",
            "2",
        )
    )
    A, B, C = (np.load(npy / "mvd" / f"M_{n}.npy") for n in "ABC")
    assert A.dtype == np.uint8 and B.dtype == np.int8 and C.dtype == np.int32
    assert np.array_equal(C, A.astype(np.int64) @ B.astype(np.int64))
    y = np.load(npy / "mvd" / "V_X.npy").astype(np.int32)
    for _ in range(3):
        y = (y * np.clip(y + 4096, 0, 8192)) >> 13
    assert np.array_equal(np.load(npy / "mvd" / "V_Y.npy"), y.astype(np.int16))
    assert np.array_equal(np.load(npy / "mvd" / "V_rowsum.npy"), y.sum(axis=1, dtype=np.int32))
    assert np.array_equal(np.load(npy / "mvd" / "V_rowmax.npy"), y.max(axis=1).astype(np.int16))
    # three source windows stream through one scratch window: it ends holding the last
    src, dst = np.load(npy / "mvd" / "D_src.npy"), np.load(npy / "mvd" / "D_dst.npy")
    assert np.array_equal(dst, src[:, :100])
    assert recs[0]["tasks"]["D"]["descriptors"] == 3 * 5 and recs[0]["tasks"]["D"]["bytes"] == 3 * 33 * 100
    assert recs[-1]["trials"] > 0


def test_fp32_outputs_match_numpy_within_tolerance(hxrun, tmp_path):
    npy = tmp_path / "npy"
    ok(
        *run_runner(
            hxrun,
            tmp_path / "f.jsonl",
            "--npy-dir",
            str(npy),
            "--m-shape",
            "50,70,300",
            "--v-variant",
            "compute",
            "--v-shape",
            "9,67",
            "--v-passes",
            "4",
            "--warmup",
            "0",
            "--rounds",
            "1",
        )
    )
    A, B, C = (np.load(npy / "mvd" / f"M_{n}.npy").astype(np.float64) for n in "ABC")
    np.testing.assert_allclose(C, A @ B, rtol=0, atol=1e-5 * (np.abs(A) @ np.abs(B)).max())
    y = np.load(npy / "mvd" / "V_X.npy").astype(np.float64)
    for _ in range(4):
        y = y / (1 + np.exp(-y))
    np.testing.assert_allclose(np.load(npy / "mvd" / "V_Y.npy"), y, rtol=1e-5, atol=1e-6)


def test_spread_affinity_places_engines_on_distinct_cores(hxrun, tmp_path):
    import os

    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two cores")

    def placed(workloads):
        proc, recs = run_runner(
            hxrun,
            tmp_path / "s.jsonl",
            "--workloads",
            workloads,
            "--affinity",
            "spread",
            "--m-shape",
            "16,16,16",
            "--v-shape",
            "8,64",
            "--d-shape",
            "16,64",
            "--warmup",
            "0",
            "--rounds",
            "1",
        )
        assert proc.returncode == 0, proc.stderr
        return recs[0]["affinity"]

    mv, md = placed("mv"), placed("md")
    assert mv["mx"] != mv["vec"]
    # without V the control thread shares the core of the engine it launches last
    assert md["mx"] != md["dma"] and md["vec"] == md["dma"]
    # the host is pinned: to a free core, else beside the engine B submits to last
    cores = os.cpu_count()
    assert mv["host"] == (2 if cores > 2 else mv["vec"])
    assert md["host"] == (2 if cores > 2 else md["dma"])


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--affinity", "mx=1000"], "core does not exist"),
        (["--rounds", "0"], "--rounds"),
        (["--workloads", "mx"], "--workloads"),
        (["--m-shape", "1,2"], "--m-shape"),
        (["--precision", "fp16"], "--precision"),
        (["--frobnicate", "1"], "unknown option"),
        (["--d-shape", "10,100", "--d-src-stride", "50"], "--d-src-stride"),
        (["--calibrate", "X=5"], "--calibrate"),
    ],
)
def test_bad_arguments_fail_clearly(hxrun, tmp_path, args, needle):
    proc, recs = run_runner(hxrun, tmp_path / "x.jsonl", *args)
    assert proc.returncode == 2
    assert "hxrun: error:" in proc.stderr and needle in proc.stderr
    assert recs is None


# --- Progress evidence: CPU time, launch and placement records (schema 2) ---


def _parallelism(trial):
    """Sum of the tasks' thread CPU time over the trial's makespan: about 1
    when the tasks took turns on one core, about k with k at once."""
    return sum(x["cpu_ns"] for x in trial["tasks"]) / trial["makespan_ns"]


def _median_parallelism(records):
    return statistics.median(_parallelism(t) for t in trials(records, group="D", workload="mv"))


CALIBRATED_MV = (
    "--workloads",
    "mv",
    "--groups",
    "D",
    "--calibrate",
    "M=3000,V=3000",
    "--warmup",
    "3",
    "--rounds",
    "40",
)


@pytest.mark.timing
def test_tasks_sharing_one_core_show_no_parallel_progress(hxrun, tmp_path):
    # Known answer: M and V pinned to one core can only take turns, however
    # much their wall-clock spans overlap.  Busy-waits on thread CPU time
    # make each task 3 ms of real progress.
    import os

    host = ["host=1"] if (os.cpu_count() or 1) > 1 else []
    recs = ok(
        *run_runner(hxrun, tmp_path / "one.jsonl", *CALIBRATED_MV, "--affinity", ",".join(host + ["vec=0", "mx=0"]))
    )
    ds = trials(recs, group="D", workload="mv")
    assert len(ds) == 40, len(ds)  # --rounds 40: the sample is there
    for t in ds:
        m, v = task(t, "M"), task(t, "V")
        assert {m["cpu_begin"], m["cpu_end"], v["cpu_begin"], v["cpu_end"]} == {0}, t
    par = _median_parallelism(recs)
    assert par <= 1.15, par
    # The point: the spans overlap all the same, and wall-clock overlap is
    # not progress.  That the two 3 ms busy-waits interleave at all is the
    # scheduler's choice (a kernel whose time slice exceeds 3 ms may run one
    # to its end first); the premise is checked on the run's own spans, and
    # the claim asked of the trials that have it.
    overlap = lambda t: (
        min(task(t, "M")["end"], task(t, "V")["end"]) - max(task(t, "M")["begin"], task(t, "V")["begin"])
    )
    both = [t for t in ds if overlap(t) > 1_000_000]
    if len(both) < 5:
        pytest.skip(f"the scheduler ran M and V one after the other: {len(both)} of {len(ds)} trials overlap by 1 ms")
    assert statistics.median(_parallelism(t) for t in both) <= 1.15


@pytest.mark.timing
def test_tasks_on_two_free_cores_progress_in_parallel(hxrun, tmp_path):
    # Known answer: the same tasks on two cores nobody else uses run at once.
    import os

    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two cores: parallel progress cannot be shown on one")
    with steal_during((0, 1)) as steal:
        recs = ok(*run_runner(hxrun, tmp_path / "two.jsonl", *CALIBRATED_MV, "--affinity", "host=0,vec=0,mx=1"))
    if steal["share"] > MAX_STEAL_SHARE:
        pytest.skip(steal["why"])
    meta, end = recs[0], recs[-1]
    for t in trials(recs, group="D", workload="mv"):
        assert task(t, "M")["cpu_begin"] == 1 and task(t, "V")["cpu_begin"] == 0, t
    # Other processes (other runs, builds) can take the cores from the
    # busy-waits, and then parallel progress cannot be shown.  The direct
    # evidence is in the run: the share of each task's time from launch to
    # end that its thread actually ran.  At 90% for both, two overlapped 3 ms
    # tasks still reach 1.78.  A serialised entry keeps both shares near 1,
    # so this cannot hide the failure the test is for; misplacement is
    # asserted above.  (The 200 ms /proc/stat samples around the run are
    # reported but do not decide: short-sleeping engines win their cores
    # back from long-running batch work, which the samples count as busy.)
    share = statistics.median(
        min(x["cpu_ns"] / (x["end"] - x["launch"]) for x in t["tasks"]) for t in trials(recs, group="D", workload="mv")
    )
    busy = max(meta["other_busy_cores_before"], end["other_busy_cores_after"])
    if meta["online_cores"] < 2 or share < 0.9:
        pytest.skip(
            f"fewer than two free cores: {meta['online_cores']} online; the tasks ran {share:.0%} of "
            f"their time from launch to end ({busy:.2f} cores kept busy by other processes around the run)"
        )
    par = _median_parallelism(recs)
    assert par >= 1.7, par


def _in_range(cpu, cores):
    return cpu is None or 0 <= cpu < cores


@pytest.mark.parametrize("vworkers", [1, 2])
def test_task_records_carry_launch_cpu_time_and_placement(hxrun, tmp_path, vworkers):
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "s.jsonl",
            "--workloads",
            "mv,md,mvd",
            "--v-workers",
            str(vworkers),
            "--m-shape",
            "96,96,96",
            "--v-shape",
            "64,512",
            "--d-shape",
            "256,1024",
            "--affinity",
            "spread",
            "--warmup",
            "1",
            "--rounds",
            "4",
        )
    )
    meta, end = recs[0], recs[-1]
    cores = meta["online_cores"]
    assert meta["schema_version"] == 2
    extra = ["vec1"] if vworkers == 2 else []
    assert meta["engines"] == ["host", "vec", *extra, "mx", "dma"]
    assert set(meta["affinity"]) == {"host", "vec", "mx", "dma", *extra}
    assert meta["affinity"]["host"] >= 0 and meta["args"]["affinity"] == "spread"
    all_trials = [r for r in recs if r["record"] == "trial"]
    for t in all_trials:
        h = t["host"]
        assert len(h["submits"]) == h["requests"] and sum(h["submits"]) == h["submit_ns"], h
        assert h["cpu"] == meta["affinity"]["host"] or h["cpu"] is None, h  # the pin holds
        for x in t["tasks"]:
            assert h["submit_begin"] <= x["launch"] <= x["begin"] <= x["end"] <= x["host_seen"], x
            assert _in_range(x["cpu_begin"], cores) and _in_range(x["cpu_end"], cores), x
            ws = x["workers"]
            assert len(ws) >= 1 and sum(w["cpu_ns"] for w in ws) == x["cpu_ns"], x
            for w in ws:
                assert x["begin"] <= w["begin"] <= w["end"] <= x["end"], x
                assert _in_range(w["cpu_begin"], cores) and _in_range(w["cpu_end"], cores), x
                pinned = meta["affinity"][w["engine"]]
                assert w["cpu_begin"] in (None, pinned) and w["cpu_end"] in (None, pinned), (w, pinned)
                # one thread cannot consume more CPU than wall time (clock slack only)
                assert w["cpu_ns"] <= (w["end"] - w["begin"]) * 1.002 + 5000, w
            if t["empty"]:
                assert x["cpu_ns"] == 0, x  # no work, and the CPU clock is not even read
            else:
                assert x["cpu_ns"] > 0, x
            if x["task"] == "V" and not t["empty"] and vworkers == 2:
                # the quota of two: one row chunk on the entry thread, one on vec1
                assert [w["engine"] for w in ws] == ["vec", "vec1"], x
            else:
                assert len(ws) == 1 and ws[0]["engine"] == x["engine"], x
                assert (ws[0]["begin"], ws[0]["end"], ws[0]["cpu_ns"]) == (x["begin"], x["end"], x["cpu_ns"])
            if t["group"] in ("A", "B", "alone"):
                assert x["launch"] in [h["submit_begin"]] or h["submit_begin"] < x["launch"] <= h["submit_end"], x
            elif x["task"] == "V":
                assert x["launch"] == x["begin"], x  # run inline by the entry: no queue
            else:
                assert t["device"]["entry_begin"] <= x["launch"], x
    measured = [t for t in all_trials if not t["warmup"]]
    limit = end["submit_outlier_ns"]
    assert end["submit_outliers"] == sum(max(t["host"]["submits"]) > limit for t in measured)
    assert sum(end["submit_outliers_by_group"].values()) == end["submit_outliers"]
    late = [
        t
        for t in measured
        if t["group"] == "B" and max(x["launch"] for x in t["tasks"]) - min(x["launch"] for x in t["tasks"]) > limit
    ]
    assert end["b_handover_outliers"] == len(late)


def test_explicit_placement_is_honoured(hxrun, tmp_path):
    import os

    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two cores")
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "p.jsonl",
            "--workloads",
            "mv",
            "--v-workers",
            "2",
            "--affinity",
            "host=1,vec=1,vec1=0,mx=0",
            "--m-shape",
            "64,64,64",
            "--v-shape",
            "64,256",
            "--warmup",
            "0",
            "--rounds",
            "3",
        )
    )
    assert recs[0]["affinity"] == {"host": 1, "vec": 1, "vec1": 0, "mx": 0, "dma": -1}
    for t in (r for r in recs if r["record"] == "trial"):
        assert t["host"]["cpu"] == 1
        for x in t["tasks"]:
            for w in x["workers"]:
                core = {"vec": 1, "vec1": 0, "mx": 0}[w["engine"]]
                assert w["cpu_begin"] == w["cpu_end"] == core, w
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "n.jsonl",
            "--workloads",
            "mv",
            "--affinity",
            "none",
            "--m-shape",
            "16,16,16",
            "--v-shape",
            "8,64",
            "--warmup",
            "0",
            "--rounds",
            "1",
        )
    )
    assert set(recs[0]["affinity"].values()) == {-1}


@pytest.mark.parametrize(
    "spec,needle",
    [
        ("gpu=0", "unknown engine 'gpu'"),
        ("host=0,host=1", "placed twice"),
        ("vec1=0", "no such vector worker"),
        ("mx=-1", "expected a core number"),
        ("mx", "engine=core pairs"),
        ("dma=4095", "core does not exist"),
    ],
)
def test_bad_placement_fails_before_any_work(hxrun, tmp_path, spec, needle):
    proc, recs = run_runner(hxrun, tmp_path / "x.jsonl", "--affinity", spec)
    assert proc.returncode == 2, proc.stderr
    assert "hxrun: error: --affinity" in proc.stderr and needle in proc.stderr, proc.stderr
    assert recs is None
