"""hxrun-ap, the application-processor driver (kernels/ap/), against a
scripted libcdsprpc (tests/runner/ap_fake_cdsprpc.c): a fake "DSP" whose
replies have the wire layout and known content.  This tests the driver
without the skel or the loopback stand-in: its records have hxrun's schema,
DSP times are mapped onto the AP clock (a known test offset is recovered),
the alignment is refused past its bound, and every transport failure ends
the run with one line naming the call, the queue and the code.  Both
programs are built by their own compiler calls, independent of the
Makefile.  No timing bound is asserted beyond orderings that hold within
the alignment's uncertainty."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from pipeline_util import REPO
from hxfuse.runner.records import read_run
from runner_util import build_runner

pytestmark = pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("make")), reason="needs gcc and make")

K = REPO / "kernels"


def _ap_src():
    """The Makefile's AP_SRC: hxrun-ap's sources, kept in one place."""
    r = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(K), "TARGET=host", "print-AP_SRC"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


INCLUDES = ["-I", str(K / "common"), "-I", str(K / "hexagon/sdk_decls")]
SMALL = ["--workloads", "mvd", "--warmup", "0", "--rounds", "1"]


def _gcc(args):
    r = subprocess.run(
        ["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", *args], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("ap")
    defs = [
        "-D_GNU_SOURCE",
        '-DHX_COMPILER="gcc"',
        '-DHX_CFLAGS="-O2"',
        '-DHX_PLATFORM_NAME="ap-loopback"',
        "-DHX_EMULATED",
    ]
    _gcc(
        [
            *defs,
            *INCLUDES,
            "-pthread",
            *[str(K / s) for s in _ap_src()],
            "-o",
            str(d / "hxrun-ap"),
            "-ldl",
            "-lm",
        ]
    )
    fake = [
        "-shared",
        "-fPIC",
        "-pthread",
        "-I",
        str(K / "ap"),
        *INCLUDES,
        str(REPO / "tests/runner/ap_fake_cdsprpc.c"),
    ]
    _gcc([*fake, "-o", str(d / "libfake.so")])
    _gcc([*fake, "-DFAKE_STAND_IN_POINTER", "-o", str(d / "libfake_ptr.so")])
    return d


def run_ap(built, out, *args, env=None, lib=True, timeout=120, cwd=None):
    cmd = [str(built / "hxrun-ap")]
    if lib:
        cmd += ["--cdsprpc", str(built / "libfake.so")]
    cmd += ["--out", str(out), *args]
    e = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_") and k != "HX_CDSPRPC_LIB"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**e, **(env or {})}, cwd=cwd)
    recs = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else None
    return proc, recs


def measured(recs):
    return [r for r in recs if r["record"] == "trial"]


def test_every_group_runs_with_hxrun_records(built, tmp_path):
    out = tmp_path / "r.jsonl"
    proc, recs = run_ap(built, out, *SMALL)
    assert proc.returncode == 0, proc.stderr
    run = read_run(out)  # the pipeline's reader: digest, record kinds, tables
    assert run.end["status"] == "ok"
    meta = recs[0]
    assert meta["kernels"] == "fake-hvx" and meta["device"]["target"] == "fake"
    t = meta["transport"]
    assert t["mode"] == "ap" and t["stand_in"] is True and "fake DSP" in t["stand_in_text"]
    assert t["unsigned_pd"] and t["latency_qos"] and t["queues"] == 3 and t["test_clock"] is None
    assert set(t["groups"]) == {"A", "B", "C", "D"} and t["clock_alignment"]["samples"] == 32
    assert meta["scratch"]["slots"] == {"M": 4096, "V": 4096, "D": 4096, "D.buffer2": 4096}
    assert meta["tasks"]["D"]["dst_stride"] == 64 and meta["tasks"]["M"]["prep_bytes"] == 12345
    groups = {r["group"] for r in measured(recs)}
    assert groups == {"A", "B", "C", "D", "alone"}
    for r in measured(recs):
        h = r["host"]
        assert h["requests"] == ({"A": 3, "B": 3, "alone": 1}.get(r["group"], 1)), r
        assert r["scratch_peak_bytes"] == max(1000 * (1 + "MVD".index(x["task"])) for x in r["tasks"])
        for x in r["tasks"]:
            assert x["engine"] == {"M": "mx", "V": "vec", "D": "dma"}[x["task"]]
            assert 0 < x["launch"] and x["begin"] <= x["end"] and x["host_seen"] > 0
            if not r["empty"]:
                assert x["checksum"] == "00000000c0ffee0%d" % "MVD".index(x["task"])
            if r["group"] in ("A", "B", "alone"):  # the AP's submit is the launch
                assert h["submit_begin"] <= x["launch"] <= h["submit_end"]
        if r["group"] in ("C", "D"):
            assert r["device"]["entry_begin"] <= r["device"]["entry_end"]
            assert [w["who"] for w in r["waits"]] == ["vec", "host"] and r["waits"][0]["on"] == "eM"
        else:
            assert r["device"] is None and all(w["who"] == "host" for w in r["waits"])
    end = recs[-1]
    assert end["resources"] == {"hmx": True, "vtcm_bytes": 1048576, "note": "a } in a string"}
    assert end["clock_drift"]["cycles_per_us_start"] == 1000 and end["clock_drift"]["cycles_per_us_end"] == 990
    assert end["clock_alignment_end"]["aligned"] is True


@pytest.mark.parametrize("off", [1_000_000_000, -5_000_000])
def test_a_known_dsp_clock_offset_is_recovered_and_mapped(built, tmp_path, off):
    """The skel's test hook puts the DSP clock 1 s ahead (or 5 ms behind):
    the alignment finds the offset within its uncertainty, and every mapped
    device time still lies inside the trial's host interval (unmapped, it
    would be off by the offset)."""
    proc, recs = run_ap(built, tmp_path / "r.jsonl", *SMALL, "--test-dsp-clock-offset-ns", str(off))
    assert proc.returncode == 0, proc.stderr
    ca = recs[0]["transport"]["clock_alignment"]
    assert abs(ca["offset_ns"] - off) <= ca["uncertainty_ns"] + 1000
    assert recs[0]["transport"]["test_clock"]["offset_ns"] == off
    slack = 2 * ca["uncertainty_ns"] + 50_000
    for r in measured(recs):
        lo, hi = r["host"]["submit_begin"] - slack, r["host"]["wait_end"] + slack
        for x in r["tasks"]:
            assert lo <= x["begin"] <= x["end"] <= hi, (r["group"], x, lo, hi)
            for w in x["workers"]:
                assert all(lo <= c <= hi for c in w["checkpoints"])
        if r["device"]:
            assert lo <= r["device"]["entry_begin"] <= r["device"]["entry_end"] <= hi


def test_drift_past_the_bound_refuses_the_alignment(built, tmp_path):
    out = tmp_path / "r.jsonl"
    proc, recs = run_ap(built, out, *SMALL, "--test-dsp-clock-drift-ppm", "2000", "--clock-bound-ns", "5000")
    assert proc.returncode == 7, proc.stderr
    assert "clock_unaligned" in proc.stderr and "bound of 5000 ns" in proc.stderr
    end = recs[-1]
    assert end["status"] == "clock_unaligned"
    cae = end["clock_alignment_end"]
    assert cae["aligned"] is False and abs(cae["offset_end_ns"] - cae["offset_start_ns"]) > 5000
    assert cae["drift_ppm"] == pytest.approx(2000, rel=0.1)


def test_the_verify_round_dumps_what_the_dsp_returned(built, tmp_path):
    """D_src is the DSP's last window (read from its start, wire.h): the
    copy is laid out so dump_npy's offset (d_repeat-1) * rows * stride lands
    on it.  The fake refuses a read past the window."""
    npy = tmp_path / "npy"
    args = ["--workloads", "md", "--warmup", "0", "--rounds", "1", "--npy-dir", str(npy)]
    args += ["--d-shape", "8,64", "--d-src-stride", "100", "--d-repeat", "3"]
    proc, _ = run_ap(built, tmp_path / "r.jsonl", *args)
    assert proc.returncode == 0, proc.stderr
    src = np.load(npy / "md" / "D_src.npy")
    # the DSP's D_SRC is the last window, read from its own start (wire.h)
    expect = ((7 * 31 + np.arange(8 * 100)) & 0xFF).astype(np.uint8).reshape(8, 100)
    assert (src == expect).all()
    dst = np.load(npy / "md" / "D_dst.npy")
    assert dst.shape == (8, 64) and (dst.ravel() == ((8 * 31 + np.arange(8 * 64)) & 0xFF)).all()


@pytest.mark.parametrize(
    "env,rc,text",
    [
        ({"FAKE_SETUP_STATUS": "2"}, 2, "rejected by the fake DSP (status 2)"),
        ({"FAKE_SETUP_STATUS": "3"}, 3, "status 3"),
        ({"FAKE_SETUP_STATUS": "1"}, 1, "status 1"),
        ({"FAKE_FULL": "1"}, 1, "dspqueue_write on queue V failed: AEE_EEXPIRED (0xc); hint: the queue stayed full"),
        ({"FAKE_DROP": "1"}, 1, "timed out after 1 s waiting for the DSP's ENTRY_DONE"),
        ({"FAKE_VERSION": "9"}, 1, "the DSP skel speaks wire version 9, this hxrun-ap speaks 2"),
        ({"FAKE_BAD_ENGINE": "1"}, 1, "the DSP runs task M on an engine this driver does not know ('hmx0')"),
        ({"FAKE_START_STATUS": "1"}, 1, "hxfuse START: the DSP refused: cannot import the queues (fake)"),
        ({"FAKE_ENTRY_FAIL": "1"}, 1, "fused entry rejected the plan: scratch plan conflict (fake)"),
        ({"FAKE_REFUSE": "unsigned"}, 1, "AEE_EUNSUPPORTED (0x14); hint: this FastRPC library refuses unsigned PDs"),
        ({"FAKE_REFUSE": "open"}, 1, "remote_handle64_open(file:///libhxfuse_skel.so?"),
    ],
)
def test_failures_end_the_run_with_one_line(built, tmp_path, env, rc, text):
    out = tmp_path / "r.jsonl"
    proc, _ = run_ap(built, out, *SMALL, "--ap-timeout-s", "1", env=env, timeout=60)
    assert proc.returncode == rc, proc.stderr
    assert text in proc.stderr
    assert not out.exists()


def test_a_refused_latency_vote_is_recorded_not_fatal(built, tmp_path):
    proc, recs = run_ap(built, tmp_path / "r.jsonl", *SMALL, env={"FAKE_REFUSE": "qos"})
    assert proc.returncode == 0, proc.stderr
    assert recs[0]["transport"]["latency_qos"] is False


@pytest.mark.parametrize(
    "args,text",
    [
        (["--bogus", "1"], "--bogus: unknown option"),
        (["--check-at-publish"], "--check-at-publish: the AP cannot read"),
        (["--clock-bound-ns", "-1"], "--clock-bound-ns: expected ns"),
        (["--ap-timeout-s", "x"], "--ap-timeout-s: expected seconds"),
        (["--test-dsp-clock-drift-ppm"], "--test-dsp-clock-drift-ppm: missing value"),
    ],
)
def test_bad_arguments_exit_2_before_loading_anything(built, tmp_path, args, text):
    proc, _ = run_ap(built, tmp_path / "r.jsonl", "--cdsprpc", "/nonexistent/lib.so", *args, lib=False)
    assert proc.returncode == 2 and text in proc.stderr, proc.stderr
    assert "cannot load" not in proc.stderr


def test_an_option_name_given_as_a_value_stays_a_value(built, tmp_path):
    """hxrun-ap's own options are taken out of argv, hxrun's values are
    skipped as values: a directory named like one of its options is kept."""
    args = [*SMALL, "--npy-dir", "--ap-timeout-s"]
    proc, recs = run_ap(built, tmp_path / "r.jsonl", *args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert recs[0]["args"]["npy_dir"] == "--ap-timeout-s"


LADDER = ["library", "session", "setup", "queues", "ping", "threads", "request", "fused", "teardown"]


def selftest(built, out, *args, env=None, lib=True):
    cmd = [str(built / "hxrun-ap"), "--selftest", "--out", str(out), *args]
    if lib:
        cmd += ["--cdsprpc", str(built / "libfake.so")]
    e = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_")}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env={**e, **(env or {})})
    recs = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    return proc, recs


def test_selftest_ladder_passes_every_step(built, tmp_path):
    proc, recs = selftest(built, tmp_path / "st.jsonl")
    assert proc.returncode == 0, proc.stderr
    s = recs[-1]
    assert s["record"] == "selftest" and s["status"] == "ok" and s["mode"] == "ap"
    assert s["passed"] == LADDER and s["failed"] == [] and s["not_run"] == []
    done = [r for r in recs if r["record"] == "selftest_step" and r["status"] != "running"]
    assert [r["step"] for r in done] == LADDER
    assert "loopback stand-in: fake DSP" in done[0]["detail"]


@pytest.mark.parametrize(
    "env,args,first,text",
    [
        ({}, ["--cdsprpc", "/nonexistent/libcdsprpc.so"], "library", "cannot load /nonexistent/libcdsprpc.so"),
        ({"FAKE_REFUSE": "unsigned"}, [], "session", "DSPRPC_CONTROL_UNSIGNED_MODULE"),
        ({"FAKE_SETUP_STATUS": "1"}, [], "setup", "rejected by the fake DSP"),
        ({"FAKE_START_STATUS": "1"}, [], "queues", "cannot import the queues"),
        ({"FAKE_FULL": "1"}, [], "request", "AEE_EEXPIRED"),
        ({"FAKE_ENTRY_FAIL": "1"}, [], "fused", "fused entry rejected the plan"),
    ],
)
def test_selftest_names_the_first_failing_step(built, tmp_path, env, args, first, text):
    proc, recs = selftest(built, tmp_path / "st.jsonl", *args, env=env, lib=not args)
    assert proc.returncode == 1, proc.stderr
    s = recs[-1]
    assert s["status"] == "failed" and s["first_failure"] == first
    assert s["passed"] == LADDER[: LADDER.index(first)] and s["not_run"] == LADDER[LADDER.index(first) + 1 :]
    assert text in next(r["detail"] for r in recs if r.get("step") == first and r["status"] == "fail")


def test_selftest_watchdog_names_a_hung_step(built, tmp_path):
    """A DSP that never replies: the step that waits is named by the watchdog (exit 5)."""
    proc, recs = selftest(built, tmp_path / "st.jsonl", "--selftest-step-timeout", "1", env={"FAKE_DROP": "1"})
    assert proc.returncode == 5, proc.stderr
    assert recs[-1]["status"] == "hang" and recs[-1]["hung"] == "request"
    assert recs[-1]["not_run"] == ["fused", "teardown"]


def test_selftest_bad_arguments_exit_2(built, tmp_path):
    for args in ([], ["--out", str(tmp_path / "x"), "--rounds", "3"]):
        proc = subprocess.run([str(built / "hxrun-ap"), "--selftest", *args], capture_output=True, text=True)
        assert proc.returncode == 2, proc.stderr


def test_a_missing_library_or_symbol_is_named(built, tmp_path):
    proc, _ = run_ap(built, tmp_path / "r.jsonl", "--cdsprpc", "/nonexistent/libcdsprpc.so", lib=False)
    assert proc.returncode == 1 and "cannot load /nonexistent/libcdsprpc.so" in proc.stderr
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/lib64/libm.so.6") if os.path.exists(p)), None)
    if libm:
        proc, _ = run_ap(built, tmp_path / "r.jsonl", "--cdsprpc", libm, lib=False)
        assert proc.returncode == 1 and "missing symbol remote_handle64_open" in proc.stderr
        # a library older than the interface: the hint says so (the rpcmem_alloc2 case)
        assert "hint: this FastRPC library is older than the interface" in proc.stderr
    proc, _ = run_ap(built, tmp_path / "r.jsonl", lib=False, env={"HX_CDSPRPC_LIB": "/nope/x.so"})
    assert proc.returncode == 1 and "cannot load /nope/x.so" in proc.stderr


def _keys(o, prefix=""):
    """Every key path of a record (lists: their first element), two levels deep."""
    out = set()
    if isinstance(o, dict):
        for k, v in o.items():
            out.add(prefix + k)
            if prefix.count(".") < 2 and k not in ("labels", "device", "resources"):
                out |= _keys(v, prefix + k + ".")
    elif isinstance(o, list) and o and isinstance(o[0], dict):
        out |= _keys(o[0], prefix + "[].")
    return out


def test_the_records_have_hxruns_schema(built, tmp_path):
    """Trial and verify records have exactly hxrun's keys; meta and end
    have hxrun's and the boundary's own (device, transport, the alignment)."""
    hxrun = build_runner("host")
    size = [*SMALL, "--m-shape", "64,64,64", "--v-shape", "64,256", "--d-shape", "64,256"]
    h = subprocess.run([str(hxrun), "--out", str(tmp_path / "h.jsonl"), *size], capture_output=True, text=True)
    assert h.returncode == 0, h.stderr
    proc, recs = run_ap(built, tmp_path / "a.jsonl", *size)
    assert proc.returncode == 0, proc.stderr
    ref = [json.loads(x) for x in (tmp_path / "h.jsonl").read_text().splitlines()]

    def kind(rs, k):
        return set().union(*[_keys(r) for r in rs if r["record"] == k])

    for k in ("verify", "trial"):
        assert kind(recs, k) == kind(ref, k), k
    # kernels_choice: the fake DSP's backend has none; clock_drift: null on POSIX, an object from the DSP
    assert kind(ref, "meta") - {"kernels_choice"} <= kind(recs, "meta")
    assert {"device", "transport", "transport.clock_alignment", "transport.groups"} <= kind(recs, "meta")
    assert kind(ref, "end") <= kind(recs, "end") and "clock_alignment_end.aligned" in kind(recs, "end")
    assert [r["record"] for r in recs].count("trial") == [r["record"] for r in ref].count("trial")


@pytest.mark.parametrize("early", ["on", "off"])
def test_host_seen_is_each_replys_read_with_early_completion(built, tmp_path, early):
    """The fake's fused entry replies M, then D, then V, ~200 us apart: with
    early completion each task's host_seen is its own reply's read (in that
    order); without it the host learns of all at once."""
    proc, recs = run_ap(built, tmp_path / "r.jsonl", *SMALL, "--early-completion", early)
    assert proc.returncode == 0, proc.stderr
    for r in measured(recs):
        if r["group"] not in ("C", "D"):
            continue
        seen = {x["task"]: x["host_seen"] for x in r["tasks"]}
        if early == "on":
            assert seen["M"] < seen["D"] < seen["V"], r
            assert all(x["end"] <= x["host_seen"] + 50_000 for x in r["tasks"])
        else:
            assert len(set(seen.values())) == 1, r


def test_a_release_asked_on_the_dsp_ends_the_run_at_the_boundary(built, tmp_path):
    """A reply that says a higher-priority client asked the DSP for its
    resources ends the run at the next trial boundary: exit 6, the trial
    marked preempted and the last one written."""
    out = tmp_path / "r.jsonl"
    # 4 replies in the verify round (M, D, V and the entry's): the 20th is in a trial
    proc, recs = run_ap(built, out, *SMALL, env={"FAKE_RELEASE_AFTER": "20"})
    assert proc.returncode == 6, proc.stderr
    trials = measured(recs)
    assert recs[-1]["status"] == "preempted" and recs[-1]["preemption"]["trial"] == len(trials) - 1
    assert trials[-1]["preempted"] is True and not any(t["preempted"] for t in trials[:-1])


def test_stop_after_a_partial_set_up(built, tmp_path):
    """START refused after SETUP built the skel's executor: teardown still
    sends STOP (once), so the DSP does not keep the executor."""
    log = tmp_path / "stops"
    proc, _ = run_ap(built, tmp_path / "r.jsonl", *SMALL, env={"FAKE_START_STATUS": "1", "FAKE_STOP_LOG": str(log)})
    assert proc.returncode == 1
    assert log.read_text() == "STOP\n"
    log.unlink()
    proc, _ = run_ap(built, tmp_path / "r.jsonl", *SMALL, env={"FAKE_SETUP_STATUS": "2", "FAKE_STOP_LOG": str(log)})
    assert proc.returncode == 2 and not log.exists()  # nothing was built: nothing to stop


def test_the_stand_in_string_is_read_as_array_or_pointer(built, tmp_path):
    texts = []
    for lib in ("libfake.so", "libfake_ptr.so"):
        proc, recs = run_ap(built, tmp_path / "r.jsonl", *SMALL, "--cdsprpc", str(built / lib), lib=False)
        assert proc.returncode == 0, proc.stderr
        texts.append(recs[0]["transport"]["stand_in_text"])
    assert texts[0] == texts[1] == "fake DSP for the driver tests (tests/runner/ap_fake_cdsprpc.c)"


def test_vector_workers_are_named_from_the_dsp(built, tmp_path):
    proc, recs = run_ap(built, tmp_path / "r.jsonl", *SMALL, "--v-workers", "3")
    assert proc.returncode == 0, proc.stderr
    assert recs[0]["engines"][:5] == ["host", "vec", "vec1", "vec2", "mx"]
    v = next(x for r in measured(recs) for x in r["tasks"] if x["task"] == "V")
    assert [w["engine"] for w in v["workers"]] == ["vec", "vec1", "vec2"]
    assert v["workers"][1]["checkpoint_work"] == [0.0, 1.0]


def test_b_writes_each_request_once(built, tmp_path):
    """Many B trials with partial masks (mv, md): a submitter outside one
    trial's mask that wakes late must not write the next trial's request
    early or twice (the fake refuses a request number written twice)."""
    args = ["--workloads", "mv,md", "--groups", "B", "--warmup", "0", "--rounds", "40"]
    proc, recs = run_ap(built, tmp_path / "r.jsonl", *args, env={"FAKE_TASK_NS": "5000"})
    assert proc.returncode == 0, proc.stderr
    assert recs[-1]["status"] == "ok"


def test_a_checksum_mismatch_exits_4_with_the_file_kept(built, tmp_path):
    """The verify round's 3 checksums are the reference; later ones differ."""
    out = tmp_path / "r.jsonl"
    proc, recs = run_ap(built, out, *SMALL, env={"FAKE_BAD_CHECKSUM_AFTER": "4"})
    assert proc.returncode == 4, proc.stderr
    assert "checksum mismatch" in proc.stderr and out.exists()
    assert recs[-1]["status"] == "checksum_mismatch" and recs[-1]["checksum_mismatches"] > 0


def test_help_exits_0_with_the_ap_options(built):
    proc = subprocess.run([str(built / "hxrun-ap"), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    for opt in ("--cdsprpc", "--clock-bound-ns", "--ap-timeout-s", "--test-dsp-clock-offset-ns", "--selftest"):
        assert opt in proc.stdout


@pytest.mark.parametrize("counters", [True, False])
def test_cpu_times_are_null_where_the_dsps_counters_do_not_advance(built, tmp_path, counters):
    # the engines ran on the DSP: its hx_thread_cpu_available decides, not the AP's
    out = tmp_path / "r.jsonl"
    env = {} if counters else {"FAKE_NO_THREAD_CPU": "1"}
    proc, recs = run_ap(built, out, *SMALL, env=env)
    assert proc.returncode == 0, proc.stderr
    cpu = [t["cpu_ns"] for r in recs if r["record"] == "trial" and not r["empty"] for t in r["tasks"]]
    assert cpu and all((c is not None) == counters for c in cpu), cpu
