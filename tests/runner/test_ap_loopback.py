"""The application-processor driver (hxrun-ap) against the loopback stand-in
for libcdsprpc.so: the real driver, stub, skel and executor code, loaded
through the same dlopen layer as on a phone, with the skel running in this
process on the POSIX platform (docs/ap-host.md).

What is checked here is the code path, never a device timing: every record
of the stand-in says so (meta.emulated, meta.transport.stand_in), and the
analysis treats it as emulated.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from runner_util import REPO, build_runner, run_runner, trials

AP = REPO / "kernels" / "build" / "host" / "ap"
SMALL = ("--m-shape", "64,64,64", "--v-shape", "64,256", "--d-shape", "128,1024")
# The fixed task order of the requests (exec_host.c) and each task's queue.
TASKS = ("M", "V", "D")


@pytest.fixture(scope="module")
def ap_build():
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "TARGET=host", "ap-loopback"], check=True)
    for f in ("hxrun-ap", "libhxfuse_skel.so", "libcdsprpc.so"):
        assert (AP / f).exists(), f
    return AP


@pytest.fixture(scope="module")
def hxrun():
    return build_runner("host")


def run_ap(tmp_path: Path, *args: str, env: dict | None = None, name: str = "r", skel_dir: Path | None = None):
    """Runs hxrun-ap through the stand-in; returns (proc, records, stats)."""
    out, stats = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.stats.json"
    e = dict(os.environ)
    e.update({"ADSP_LIBRARY_PATH": str(skel_dir or AP), "HX_LOOPBACK_STATS": str(stats)})
    e.update(env or {})
    proc = subprocess.run(
        [str(AP / "hxrun-ap"), "--cdsprpc", str(AP / "libcdsprpc.so"), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=e,
    )
    recs = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else None
    st = json.loads(stats.read_text()) if stats.exists() else None
    return proc, recs, st


def ok(proc, recs):
    assert proc.returncode == 0, proc.stderr
    assert recs and recs[-1]["record"] == "end" and recs[-1]["status"] == "ok", recs and recs[-1]
    return recs


def expected_packets(recs):
    """Per queue (the task its engine runs): TASK and FUSED packets the
    records imply: one TASK per task of an A, B or alone trial on that task's
    queue; one FUSED per C or D trial, and per verification round, on V's
    queue (the entry thread's)."""
    want = {q: {"task": 0, "fused": 0} for q in TASKS}
    for r in recs:
        if r["record"] == "verify":
            want["V"]["fused"] += 1
        elif r["record"] == "trial":
            if r["group"] in ("C", "D"):
                want["V"]["fused"] += 1
            else:
                for t in r["tasks"]:
                    want[t["task"]]["task"] += 1
    return want


def observed_packets(stats):
    """The stand-in's own counts, keyed like expected_packets.  Queues are
    listed in creation order, which is the wire's queue index (HX_WIRE_Q_*:
    M, V, D)."""
    qs = stats["queues"]
    assert len(qs) == 3, qs
    return {q: {k: int(s["request_ops"].get(k, 0)) for k in ("task", "fused")} for q, s in zip(TASKS, qs)}


@pytest.mark.parametrize("group", ["A", "B", "C", "D"])
def test_each_group_crosses_the_boundary_with_its_request_pattern(ap_build, tmp_path, group):
    args = ("--workloads", "mvd", *SMALL, "--warmup", "0", "--rounds", "2", "--groups", group)
    recs = ok(*run_ap(tmp_path, *args)[:2])
    _, _, stats = run_ap(tmp_path, *args, name="again")
    assert stats is not None and stats["stand_in"] is True
    # counted by the stand-in, not by the driver: A and B one request per
    # task on its engine's queue, C and D one per entry
    assert observed_packets(stats) == expected_packets(recs)
    assert stats["unsigned_pd"] is True
    measured = trials(recs, group=group, workload="mvd")
    assert len(measured) == 2
    for t in measured:
        assert t["checksums_ok"]
        # the driver's own count agrees: requests per trial
        assert t["host"]["requests"] == (3 if group in ("A", "B") else 1)
        # the checkpoints, fetched after the trial, lie within their worker's run
        for task in t["tasks"]:
            for w in task["workers"]:
                assert w["checkpoints"], task
                assert all(w["begin"] <= c <= w["end"] for c in w["checkpoints"]), (task["task"], w)
    # the timed path's replies are compact: a reply carries the checkpoints'
    # counts, not the checkpoints (about 2 KB, was about 10 KB)
    for q in stats["queues"]:
        assert q["responses"] and q["response_bytes"] / q["responses"] < 4096, q


def test_records_have_hxruns_schema_and_the_dsps_checksums(ap_build, hxrun, tmp_path):
    args = ("--workloads", "mv,md,mvd", *SMALL, "--warmup", "1", "--rounds", "2", "--seed", "7")
    recs = ok(*run_ap(tmp_path, *args)[:2])
    ref = ok(*run_runner(hxrun, tmp_path / "ref.jsonl", *args))
    # same record kinds in the same order of kinds, same keys in each
    kinds = [r["record"] for r in recs]
    assert kinds == [r["record"] for r in ref]
    for a, b in zip(recs, ref):
        assert set(b) <= set(a), (a["record"], set(b) - set(a))
        if a["record"] == "trial":
            assert set(a["host"]) == set(b["host"])
            for ta, tb in zip(a["tasks"], b["tasks"]):
                assert set(ta) == set(tb)
    # the same inputs through the skel's executor give the in-process
    # runner's outputs: the DSP side really ran the work
    va = {r["workload"]: r["checksums"] for r in recs if r["record"] == "verify"}
    vb = {r["workload"]: r["checksums"] for r in ref if r["record"] == "verify"}
    assert va == vb
    meta = recs[0]
    assert meta["emulated"] is True and meta["target"] == "ap-loopback"
    tr = meta["transport"]
    assert tr["mode"] == "ap" and tr["stand_in"] is True and tr["stand_in_text"]
    assert tr["queues"] == 3
    assert meta["device"]["kernels"] == ref[0]["kernels"]


@pytest.mark.timing
def test_early_completion_reaches_the_ap_in_completion_order(ap_build, tmp_path):
    # M much longer than V.  The fused entry runs V inline and publishes it
    # at once (--v-release at-completion); M and D, launched to their
    # engines, are published oldest first once M is done (exec_device.c).
    # With early completion the skel replies per task as each is published
    # (several found at one wake-up: in the order they ended), so the AP
    # reads V's reply before M's; without it the AP learns of all of them at
    # the entry's return.
    #
    # Reading V's reply while M runs needs the AP's and the skel's threads to
    # get a core during the gap between V's end and M's.  On two cores M's
    # engine and the entry's wait hold both, so a gap of about a millisecond
    # (512^3) was missed in half the trials even on a quiet machine; a gap
    # of tens of milliseconds (1024^3) spans several scheduler slices, and
    # only such trials are counted as the premise.
    args = ("--workloads", "mvd", "--m-shape", "1024,1024,1024", "--v-shape", "16,256", "--d-shape", "16,1024")
    args += ("--warmup", "0", "--rounds", "6", "--groups", "D")
    gap_ns = 5_000_000  # longer than a scheduler slice (3 ms on EEVDF)
    for mode in ("on", "off"):
        recs = ok(*run_ap(tmp_path, *args, "--early-completion", mode, name=mode)[:2])
        early = v_first = 0
        for t in trials(recs, group="D", workload="mvd"):
            tasks = {x["task"]: x for x in t["tasks"]}
            for x in tasks.values():
                assert x["launch"] <= x["begin"] <= x["end"], x
                # host_seen is the AP reading the reply; the end is the DSP's
                # clock mapped onto the AP's (same clock here: offset ~0)
                assert x["end"] <= x["host_seen"] <= t["host"]["wait_end"], x
            seen = {k: tasks[k]["host_seen"] for k in tasks}
            if mode == "off":
                # one reply for the entry: every task is seen at its return
                # (exec_ap.c stamps host_seen = the wait's end for all)
                assert len(set(seen.values())) == 1, seen
            elif tasks["V"]["end"] < tasks["M"]["end"]:
                # V is published before M (exec_device.c step 4 before 5) and
                # ended first, so whether the skel finds them at separate
                # wake-ups (publication order) or at one (end order), its
                # reply comes first
                assert seen["V"] < seen["M"], seen
            # else the entry thread lost its core after launching M (a loaded
            # machine) and M ended first: one wake-up that finds both replies
            # M first, separate wake-ups V first, so no order is claimed; the
            # replies are still separate (distinct host_seen), which the
            # equality above would wrongly require to coincide.

            # "off" must never be early, whatever the gap; "on" is asked to
            # be early only where the gap left the AP time to read
            roomy = tasks["M"]["end"] - tasks["V"]["end"] >= gap_ns
            early += (roomy or mode == "off") and seen["V"] < tasks["M"]["end"]
            v_first += roomy
        if mode == "on" and not v_first:
            # the premise: V ended well before M in some trial (the machine
            # may have taken the entry thread's core after it launched M)
            pytest.skip("V never ended 5 ms before M in 6 trials: the premise of early replies did not hold")
        # truly early: the AP had V's reply while M still ran (a skel that
        # forwarded only at the entry's return would never do so; a loaded
        # machine may delay some replies, not all six)
        assert early >= 1 if mode == "on" else early == 0, (mode, early)


def test_a_known_clock_offset_is_measured_and_removed(ap_build, tmp_path):
    offset = 7_000_000_000  # the "DSP" clock 7 s ahead of the AP's
    args = ("--workloads", "mv", *SMALL, "--warmup", "0", "--rounds", "2", "--groups", "A,D")
    recs = ok(*run_ap(tmp_path, *args, "--test-dsp-clock-offset-ns", str(offset))[:2])
    al = recs[0]["transport"]["clock_alignment"]
    assert abs(al["offset_ns"] - offset) <= max(al["uncertainty_ns"], 1) + 1000, al
    assert recs[0]["transport"]["test_clock"]["offset_ns"] == offset
    end = recs[-1]["clock_alignment_end"]
    assert end["aligned"] is True
    for t in trials(recs):
        for x in t["tasks"]:
            # mapped back: the device times sit inside the AP's trial
            assert t["host"]["submit_begin"] <= x["begin"] <= x["end"] <= t["host"]["wait_end"], (t["group"], x)


def test_a_drifting_clock_is_refused_not_aligned(ap_build, tmp_path):
    # 2000 ppm over a run of tens of ms moves the offset far beyond the 5 us bound
    args = ("--workloads", "mv", *SMALL, "--warmup", "1", "--rounds", "4", "--test-dsp-clock-drift-ppm", "2000")
    proc, recs, _ = run_ap(tmp_path, *args)
    assert proc.returncode == 7, proc.stderr
    assert "clock" in proc.stderr and "bound" in proc.stderr
    assert recs[-1]["status"] == "clock_unaligned"
    assert recs[-1]["clock_alignment_end"]["aligned"] is False


def test_bad_options_fail_before_any_work(ap_build, tmp_path):
    proc, recs, stats = run_ap(tmp_path, "--m-shape", "0,1,1")
    assert proc.returncode == 2 and "m-shape" in proc.stderr
    assert recs is None and stats is None  # the library was never opened
    proc, _, stats = run_ap(tmp_path, "--check-at-publish")
    assert proc.returncode == 2 and "check-at-publish" in proc.stderr and stats is None


def test_a_missing_skel_is_named(ap_build, tmp_path):
    empty = tmp_path / "no-skel"
    empty.mkdir()
    proc, recs, _ = run_ap(tmp_path, "--workloads", "mv", *SMALL, skel_dir=empty, env={"HX_LOOPBACK_FAULT": "no-skel"})
    assert proc.returncode == 1
    assert "libhxfuse_skel.so" in proc.stderr, proc.stderr
    assert recs is None


def test_a_missing_library_is_named(ap_build, tmp_path):
    out = tmp_path / "r.jsonl"
    proc = subprocess.run(
        [str(AP / "hxrun-ap"), "--cdsprpc", str(tmp_path / "libcdsprpc.so"), "--out", str(out), *SMALL],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "libcdsprpc.so" in proc.stderr, proc.stderr
    assert not out.exists()


def test_a_full_queue_ends_the_run_with_the_call_named(ap_build, tmp_path):
    proc, _, _ = run_ap(tmp_path, "--workloads", "mv", *SMALL, "--rounds", "1", env={"HX_LOOPBACK_FAULT": "queue-full"})
    assert proc.returncode == 1
    assert "dspqueue_write" in proc.stderr, proc.stderr


def test_a_dsp_error_code_is_reported(ap_build, tmp_path):
    # method 2 (SETUP) fails on the "DSP": the driver names the call and the code
    proc, _, _ = run_ap(tmp_path, "--workloads", "mv", *SMALL, env={"HX_LOOPBACK_FAULT": "dsp-error:2"})
    assert proc.returncode == 1
    assert "setup" in proc.stderr.lower() and "1" in proc.stderr, proc.stderr


def test_the_analysis_reads_stand_in_timings_as_emulated(ap_build, tmp_path):
    from hxfuse.analysis.environment import environment, environment_findings
    from hxfuse.runner.records import read_run
    from hxfuse.sweep.pipeline import transport_mode

    ok(*run_ap(tmp_path, "--workloads", "mv", *SMALL, "--rounds", "2")[:2])
    run = read_run(tmp_path / "r.jsonl")
    env = environment(run)
    assert env["emulated"] is True
    assert "emulated" in [code for code, _ in environment_findings(env)]
    assert transport_mode(run.meta, hexagon_target=False) == "ap-stand-in"


def test_a_device_failure_on_the_dsp_ends_the_run_as_device_error(ap_build, tmp_path):
    """A device kernel fails on its engine thread (the stand-in's
    device-fatal:D, as hx_device_fatal on the cDSP: recorded, no exit): the
    skel reports it after the task and at END, and hxrun-ap's end record says
    device_error with the reason, exit 7 and the file kept, as hxrun's in
    dsp-only mode."""
    proc, recs, _ = run_ap(
        tmp_path, "--workloads", "mvd", *SMALL, "--rounds", "2", env={"HX_LOOPBACK_FAULT": "device-fatal:D"}
    )
    reason = "D: the device kernel reported an error (HX_LOOPBACK_FAULT=device-fatal:D)"
    assert proc.returncode == 7, proc.stderr
    assert f"device error: {reason}" in proc.stderr, proc.stderr
    end = recs[-1]
    assert end["record"] == "end" and end["status"] == "device_error", end
    assert end["resources"]["device_failure"] == reason, end["resources"]


def test_without_the_fault_no_device_failure_is_reported(ap_build, tmp_path):
    recs = ok(*run_ap(tmp_path, "--workloads", "mvd", *SMALL, "--rounds", "1")[:2])
    assert recs[-1]["resources"]["device_failure"] is None


def test_meta_clock_names_the_clock_the_records_are_read_from(ap_build, tmp_path):
    """hxrun-ap stamps every record with the AP clock of the alignment
    (cntvct_el0 on a phone), not the platform's hx_now_ns: meta.clock says so."""
    recs = ok(*run_ap(tmp_path, "--workloads", "mv", *SMALL, "--rounds", "1")[:2])
    meta = recs[0]
    assert meta["clock"]["source"] == meta["transport"]["clock_alignment"]["ap_clock"], meta["clock"]
    assert meta["clock"]["resolution_ns"] >= 1
