"""Runner options that sweeps vary: each must change what it claims to change,
be recorded in the metadata, and fail with exit 2 on a bad value.  Tiny
shapes and few rounds: these check mechanism, not performance."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import numpy as np
import pytest

from hxfuse.runner.checks import check_point
from runner_util import build_runner, children_cpu_s, cpu_busy_s, run_runner, task, trials

TINY = ("--m-shape", "32,32,64", "--v-shape", "8,64", "--d-shape", "32,256", "--warmup", "1")


@pytest.fixture(scope="module")
def hxrun():
    return build_runner("host")


def ok(proc, records):
    assert proc.returncode == 0, proc.stderr
    assert records[-1]["record"] == "end" and records[-1]["status"] == "ok"
    return records


def verified(records):
    return {v["workload"]: v["checksums"] for v in records if v["record"] == "verify"}


def test_m_tile_changes_the_blocking_and_stays_correct(hxrun, tmp_path):
    # k = 64 in blocks of 8: the fp32 sums are added into C eight times
    # instead of once, so the rounding (and the checksum) differs from the
    # default blocking while numpy still agrees; integer sums stay exact.
    base = ok(*run_runner(hxrun, tmp_path / "b.jsonl", "--workloads", "md", "--groups", "A", *TINY, "--rounds", "2"))
    npy = tmp_path / "npy"
    tiled = ok(
        *run_runner(
            hxrun,
            tmp_path / "t.jsonl",
            "--workloads",
            "md",
            "--groups",
            "A",
            *TINY,
            "--rounds",
            "2",
            "--m-tile",
            "8",
            "--npy-dir",
            str(npy),
        )
    )
    assert tiled[0]["args"]["m_tile"] == 8 and tiled[0]["tasks"]["M"]["tile_k"] == 8
    assert base[0]["args"]["m_tile"] == 256
    assert verified(tiled)["md"]["M"] != verified(base)["md"]["M"]
    assert check_point(tmp_path / "t.jsonl", npy)["status"] == "ok"
    u = [
        verified(
            ok(
                *run_runner(
                    hxrun,
                    tmp_path / f"u{t}.jsonl",
                    "--workloads",
                    "md",
                    "--groups",
                    "A",
                    "--precision",
                    "u8i8",
                    *TINY,
                    "--rounds",
                    "1",
                    *tile,
                )
            )
        )["md"]["M"]
        for t, tile in ((0, ()), (1, ("--m-tile", "8")))
    ]
    assert u[0] == u[1]


def test_d_buffers_two_reserve_one_more_window_with_identical_outputs(hxrun, tmp_path):
    common = ("--workloads", "mvd", *TINY, "--d-repeat", "3", "--rounds", "3")
    one = ok(*run_runner(hxrun, tmp_path / "1.jsonl", *common, "--d-buffers", "1"))
    npy = tmp_path / "npy"
    two = ok(*run_runner(hxrun, tmp_path / "2.jsonl", *common, "--d-buffers", "2", "--npy-dir", str(npy)))
    window = 32 * 256
    assert one[0]["scratch"]["reserved"]["D"] == window
    assert two[0]["scratch"]["reserved"]["D"] == 2 * window
    assert two[0]["scratch"]["total"] - one[0]["scratch"]["total"] == window
    assert two[0]["args"]["d_buffers"] == 2 and two[0]["tasks"]["D"]["buffers"] == 2
    assert verified(one) == verified(two)
    assert check_point(tmp_path / "2.jsonl", npy)["status"] == "ok"
    # every group of the double-buffered run used both windows
    for t in trials(two, workload="mvd"):
        assert t["scratch_peak_bytes"] >= 2 * window, t


@pytest.mark.timing
def test_v_release_at_entry_end_raises_the_scratch_peak_of_group_d(hxrun, tmp_path):
    # V is tiny and runs inline while D streams four 2 MiB windows: released
    # at completion, V's slot is free when D acquires its second window, so
    # the peak is D's two windows; held to the entry's end it adds V's slot.
    # The premise (V done before D's first window is) must hold whatever the
    # machine does: windows of 2 MiB take D ~100 us against V's few us, and
    # vec and dma are pinned to different cores (with 1 MiB windows and
    # floating threads a busy machine made V finish late in half the rounds).
    common = (
        "--workloads",
        "mvd",
        "--m-shape",
        "16,16,16",
        "--v-shape",
        "8,64",
        "--d-shape",
        "512,4096",
        "--d-repeat",
        "4",
        "--d-buffers",
        "2",
        "--groups",
        "D",
        "--affinity",
        "spread",
        "--warmup",
        "1",
        "--rounds",
        "8",
    )
    peaks = {}
    for mode in ("at-completion", "at-entry-end"):
        recs = ok(*run_runner(hxrun, tmp_path / f"{mode}.jsonl", *common, "--v-release", mode))
        assert recs[0]["args"]["v_release"] == mode and recs[0]["v_release"] == mode
        peaks[mode] = [t["scratch_peak_bytes"] for t in trials(recs, group="D")]
        res = recs[0]["scratch"]["reserved"]
    full = res["V"] + res["D"]
    assert all(p == full for p in peaks["at-entry-end"]), peaks
    assert statistics.median(peaks["at-completion"]) == res["D"], peaks
    # groups A/B release every request's scratch at its completion either way


@pytest.mark.parametrize("window", ["1", "2"])
def test_window_bounds_the_tasks_in_flight(hxrun, tmp_path, window):
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "w.jsonl",
            "--workloads",
            "mvd",
            "--groups",
            "C,D",
            *TINY,
            "--rounds",
            "5",
            "--window",
            window,
        )
    )
    assert recs[0]["args"]["window"] == int(window)
    n = int(window)
    for t in trials(recs, group="D"):
        spans = [(x["launch"], x["end"]) for x in t["tasks"]]
        # at any task's start, count the tasks in flight (launched, not ended)
        for b, _ in spans:
            assert sum(1 for lb, e in spans if lb <= b < e) <= n, t
        m, d, v = task(t, "M"), task(t, "D"), task(t, "V")
        if n == 1:
            assert m["end"] <= d["launch"] and d["end"] <= v["begin"], t
        else:  # M and D may be in flight together; V waits for the oldest (M)
            assert m["end"] <= v["begin"], t
    default = ok(
        *run_runner(hxrun, tmp_path / "a.jsonl", "--workloads", "mvd", "--groups", "D", *TINY, "--rounds", "1")
    )
    assert default[0]["args"]["window"] == "all"
    assert verified(default) == verified(recs)


def test_stream_variant_matches_numpy_and_is_cheap(hxrun, tmp_path):
    npy = tmp_path / "npy"
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "s.jsonl",
            "--workloads",
            "mv",
            "--groups",
            "A",
            "--m-shape",
            "16,16,16",
            "--v-variant",
            "stream",
            "--v-shape",
            "16,100",
            "--v-passes",
            "2",
            "--warmup",
            "0",
            "--rounds",
            "2",
            "--npy-dir",
            str(npy),
        )
    )
    v = recs[0]["tasks"]["V"]
    assert v["variant"] == "stream" and v["activation"] == "hardswish" and not v["in_scratch"]
    assert v["kernel"] == recs[0]["kernels"]
    x = np.load(npy / "mv" / "V_X.npy")
    y = x.copy()
    for _ in range(2):
        y = (y * np.clip(y + np.float32(3), 0, 6).astype(np.float32)) * (np.float32(1) / np.float32(6))
    got = np.load(npy / "mv" / "V_Y.npy")
    assert np.array_equal(got, y)  # the same float32 operations in the same order
    np.testing.assert_allclose(
        np.load(npy / "mv" / "V_rowsum.npy"), y.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4
    )
    assert np.array_equal(np.load(npy / "mv" / "V_rowmax.npy"), y.max(axis=1))
    assert check_point(tmp_path / "s.jsonl", npy)["status"] == "ok"
    # the default variant is still SiLU: the same input gives other outputs
    recs2 = ok(
        *run_runner(
            hxrun,
            tmp_path / "d.jsonl",
            "--workloads",
            "mv",
            "--groups",
            "A",
            "--m-shape",
            "16,16,16",
            "--v-variant",
            "ddr",
            "--v-shape",
            "16,100",
            "--v-passes",
            "2",
            "--warmup",
            "0",
            "--rounds",
            "1",
        )
    )
    assert recs2[0]["tasks"]["V"]["activation"] == "silu"
    assert verified(recs2)["mv"]["V"] != verified(recs)["mv"]["V"]


def _idlest_core(sample_s: float = 0.2) -> int:
    """The core of this process's set that other work kept least busy over *sample_s*."""
    cores = sorted(os.sched_getaffinity(0))
    before = {c: cpu_busy_s((c,)) for c in cores}
    time.sleep(sample_s)
    return min(cores, key=lambda c: (cpu_busy_s((c,)) - before[c], c))


# The premise of the streaming check: the antagonist's core was not taken by
# other work.  Pinned beside a busy loop, a woken antagonist can wait out a
# whole short run (seen: 0 bytes read in 6 ms of activity, 1 of 20 runs with a
# loop pinned to its core, 2-core AMD EPYC KVM guest).  So the test pins it
# to the core that other work left idlest just before, and afterwards reads
# the kernel's count of that core's busy time: whatever of it exceeds all the
# CPU time the runner used, on any core, was certainly someone else's.  A
# runner that never streams uses less CPU, which only lowers that bound: it
# cannot turn its failure into a skip.
MAX_FOREIGN_SHARE = 0.5


@pytest.mark.timing
@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs Linux's /proc/stat")
def test_antagonist_streams_during_trials_and_is_recorded(hxrun, tmp_path):
    core = _idlest_core()
    cpu0, busy0, wall0 = children_cpu_s(), cpu_busy_s((core,)), time.monotonic()
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "bw.jsonl",
            "--workloads",
            "md",
            "--groups",
            "A",
            *TINY,
            "--d-repeat",
            "8",
            "--rounds",
            "40",
            "--antagonist",
            "1",
            "--antagonist-bytes",
            str(4 << 20),
            "--affinity",
            f"bw0={core}",
        )
    )
    wall = time.monotonic() - wall0
    foreign = (cpu_busy_s((core,)) - busy0) - (children_cpu_s() - cpu0)
    meta, end = recs[0], recs[-1]
    assert meta["antagonist"]["threads"] == 1 and meta["antagonist"]["buffer_bytes"] == 4 << 20
    assert meta["affinity"]["bw0"] == core and "bw0" in meta["engines"]
    if foreign > MAX_FOREIGN_SHARE * wall:
        pytest.skip(
            f"other work kept core {core} busy for at least {foreign:.2f} s of the run's {wall:.2f} s: "
            "the antagonist pinned there had no core to stream on"
        )
    # active through every trial: at least as long as the trials' makespans together
    spans = sum(t["makespan_ns"] for t in recs if t["record"] == "trial")
    assert end["antagonist_active_ns"] >= spans > 0
    # it read at least its whole buffer while the trials ran, at a real rate
    assert end["antagonist_bytes"] >= 4 << 20 and end["antagonist_bytes_per_s"] > 1e8
    spread = ok(
        *run_runner(
            hxrun,
            tmp_path / "s.jsonl",
            "--workloads",
            "md",
            "--groups",
            "A",
            *TINY,
            "--rounds",
            "1",
            "--antagonist",
            "2",
            "--antagonist-bytes",
            str(1 << 20),
            "--affinity",
            "spread",
        )
    )
    cores = spread[0]["online_cores"]
    assert all(0 <= spread[0]["affinity"][f"bw{i}"] < cores for i in range(2))
    plain = ok(
        *run_runner(
            hxrun, tmp_path / "p.jsonl", "--workloads", "md", "--groups", "A", *TINY, "--d-repeat", "8", "--rounds", "1"
        )
    )
    assert plain[0]["antagonist"] is None and "antagonist_bytes" not in plain[-1]
    assert verified(plain) == verified(recs)


def test_wait_options_are_recorded_per_run(hxrun, tmp_path):
    recs = ok(
        *run_runner(
            hxrun,
            tmp_path / "w.jsonl",
            "--workloads",
            "md",
            "--groups",
            "D",
            *TINY,
            "--rounds",
            "1",
            "--wait",
            "spin",
            "--spin-ns",
            "5000",
            "--early-completion",
            "off",
        )
    )
    a = recs[0]["args"]
    assert (a["wait"], a["spin_ns"], a["early_completion"]) == ("spin", 5000, False)


@pytest.mark.parametrize(
    "args,needle",
    [
        (("--m-tile", "12"), "--m-tile"),
        (("--m-tile", "0"), "--m-tile"),
        (("--m-tile", "16384"), "--m-tile"),
        (("--d-buffers", "3"), "--d-buffers"),
        (("--d-buffers", "0"), "--d-buffers"),
        (("--v-release", "never"), "--v-release"),
        (("--window", "0"), "--window"),
        (("--window", "4"), "--window"),
        (("--window", "some"), "--window"),
        (("--v-variant", "streams"), "--v-variant"),
        (("--antagonist", "9"), "--antagonist"),
        (("--antagonist", "-1"), "--antagonist"),
        (("--antagonist", "1", "--antagonist-bytes", "1000"), "--antagonist-bytes"),
        (("--affinity", "bw0=0"), "no such antagonist"),
        (("--antagonist", "1", "--affinity", "bw8=0"), "unknown engine"),
    ],
)
def test_bad_option_values_exit_2(hxrun, tmp_path, args, needle):
    out = tmp_path / "bad.jsonl"
    proc, recs = run_runner(hxrun, out, *args)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr and "hxrun: error:" in proc.stderr
    assert recs is None and not out.with_name("bad.jsonl.tmp").exists()
