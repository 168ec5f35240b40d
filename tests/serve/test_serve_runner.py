"""hxserve, the service mode's runner, on real runs: the pairing policy's
semantics on a hand-made trace, A's and B's submission rules, the numpy
check passing and failing, and bad traces or options refused before any work.

Timing slack: the machine may be shared and loaded, so bounds that depend on
the dispatcher being woken on time allow SLACK_NS; bounds the policy
guarantees by construction (a request run alone waited at least w; a pair's
members were both admitted before either launched) are exact."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from hxfuse.serve import stats as serve
from hxfuse.serve.check import check_run

REPO = Path(__file__).resolve().parents[2]
MS = 1_000_000
W_US = 20_000  # pairing window 20 ms: wide against scheduling noise
SLACK_NS = 60 * MS  # a late wake-up on a loaded 2-core machine


@pytest.fixture(scope="module")
def hxserve() -> Path:
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "TARGET=host", "hxserve"], check=True)
    return REPO / "kernels" / "build" / "host" / "hxserve"


def write_trace(path: Path, rows) -> Path:
    path.write_text("arrival_ns,kind,size,deadline_ns\n" + "".join(f"{a},{k},{s},{d}\n" for a, k, s, d in rows))
    return path


# id: arrival (ms), kind.  0+1: a partner within w -> a pair.  2: no partner
# within w -> alone after w; 3 likewise.  4, 5 bandwidth, 6 compute 10 ms
# after 4 -> 4 pairs with 6 (the oldest of the other kind), 5 goes alone.
SCRIPT = [
    (0, "compute"),
    (5, "bandwidth"),
    (200, "compute"),
    (400, "bandwidth"),
    (600, "bandwidth"),
    (601, "bandwidth"),
    (610, "compute"),
]


@pytest.fixture(scope="module")
def run(hxserve, tmp_path_factory):
    d = tmp_path_factory.mktemp("serve")
    trace = write_trace(d / "trace.csv", [(a * MS, k, 64 if k == "compute" else 128, 50 * MS) for a, k in SCRIPT])
    npy = d / "npy"
    npy.mkdir()
    out = d / "out.jsonl"
    proc = subprocess.run(
        [
            str(hxserve),
            "--trace",
            str(trace),
            "--out",
            str(out),
            "--npy-dir",
            str(npy),
            "--reps",
            "1",
            "--window-us",
            str(W_US),
            "--gemm-nk",
            "64,64",
            "--gemv-cols",
            "256",
            "--copy-row-bytes",
            "256",
            "--copy-src-stride",
            "512",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    recs = serve.read_records(out)
    return {
        "trace": trace,
        "npy": npy,
        "out": out,
        "recs": recs,
        "req": {(r["policy"], r["id"]): r for r in recs if r["record"] == "request"},
    }


def test_d_pairs_only_compute_with_bandwidth_from_different_requests(run):
    req = run["req"]
    pairs = {i: req[("D", i)]["paired_with"] for i in range(len(SCRIPT))}
    assert pairs == {0: 1, 1: 0, 2: None, 3: None, 4: 6, 5: None, 6: 4}
    for i, j in pairs.items():
        if j is not None:
            a, b = req[("D", i)], req[("D", j)]
            assert a["kind"] != b["kind"] and i != j
            # launched together, after both were admitted
            assert min(a["launch_ns"], b["launch_ns"]) >= max(a["admit_ns"], b["admit_ns"])
    replay = next(r for r in run["recs"] if r["record"] == "replay" and r["policy"] == "D")
    assert replay["pairs"] == 2 and replay["entries"] == 5


@pytest.mark.timing
def test_d_pairing_wait_bounded_by_w_and_alone_only_after_w(run):
    req = run["req"]
    w = W_US * 1000
    for i in range(len(SCRIPT)):
        r = req[("D", i)]
        assert r["pairing_wait_ns"] <= w + SLACK_NS, (i, r["pairing_wait_ns"])
        if r["paired_with"] is None:
            # alone: by construction only once the window has passed
            assert r["pairing_wait_ns"] >= w, (i, r["pairing_wait_ns"])
            assert r["launch_ns"] - r["admit_ns"] >= w
    # the pair's head waited for its partner (5 ms), the partner not at all
    assert 5 * MS - SLACK_NS <= req[("D", 0)]["pairing_wait_ns"] <= 5 * MS + SLACK_NS
    assert req[("D", 1)]["pairing_wait_ns"] == 0 and req[("D", 6)]["pairing_wait_ns"] == 0
    # 5 became the oldest ready request only when 4 and 6's entry ended
    assert req[("D", 5)]["launch_ns"] >= req[("D", 6)]["end_ns"]


@pytest.mark.timing
def test_a_is_fifo_serial_and_b_launches_on_arrival(run):
    req = run["req"]
    n = len(SCRIPT)
    for i in range(n):
        a = req[("A", i)]
        assert a["paired_with"] is None and a["pairing_wait_ns"] == 0
        if i:
            assert a["start_ns"] >= req[("A", i - 1)]["end_ns"]  # one request at a time
        if a["kind"] == "bandwidth":  # one task at a time
            gemv, copy = a["tasks"]
            assert (gemv["engine"], copy["engine"]) == ("vec", "dma") and copy["begin_ns"] >= gemv["end_ns"]
        b = req[("B", i)]
        assert b["paired_with"] is None
        # every task pushed to its engine's queue when the request was admitted
        assert all(t["push_ns"] - b["admit_ns"] <= SLACK_NS for t in b["tasks"])
    # B: 4 and 5's GEMVs queue on the one vector engine in order
    assert req[("B", 5)]["tasks"][0]["begin_ns"] >= req[("B", 4)]["tasks"][0]["end_ns"]


def test_outputs_pass_the_numpy_check_and_corruption_fails_it(run, tmp_path):
    res = check_run(run["out"], run["npy"], run["trace"])
    assert res["ok"], res["reasons"]
    # input sets used (pool 2, request i takes input i % 2): compute 0, 2, 6 ->
    # p0 only; bandwidth 1, 3, 4, 5 -> p1 and p0
    assert res["verified_sets"] == 3 and res["requests"] == 3 * len(SCRIPT)
    # a wrong GEMM output: numpy's reference and the claimed checksum disagree
    bad = tmp_path / "npy"
    bad.mkdir()
    for f in run["npy"].iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    C = np.load(bad / "compute_s64_p0_C.npy")
    C[3, 5] += 1.0
    np.save(bad / "compute_s64_p0_C.npy", C)
    res = check_run(run["out"], bad, run["trace"])
    assert not res["ok"]
    assert any("GEMM: 1 of 4096 elements outside tolerance" in r for r in res["reasons"]), res["reasons"]
    assert any("checksum of the dumped outputs" in r for r in res["reasons"])
    # another trace than the one the runner read
    other = write_trace(tmp_path / "other.csv", [(0, "compute", 64, 1)])
    res = check_run(run["out"], run["npy"], other)
    assert any("the runner read a different trace" in r for r in res["reasons"])
    # an edited output file fails its integrity check
    edited = tmp_path / "edited.jsonl"
    edited.write_text(run["out"].read_text().replace('"pairing_wait_ns":0', '"pairing_wait_ns":1', 1))
    res = check_run(edited, run["npy"], run["trace"])
    assert not res["ok"] and "digest" in res["reasons"][0]


@pytest.mark.parametrize(
    "body, message",
    [
        ("arrival_ns,kind,size\n0,compute,4\n", "trace.csv:1: header must be 'arrival_ns,kind,size,deadline_ns'"),
        (
            "arrival_ns,kind,size,deadline_ns\n5,compute,4,9\n3,compute,4,9\n",
            "trace.csv:3: arrival_ns 3 is before the previous arrival 5",
        ),
        (
            "arrival_ns,kind,size,deadline_ns\n0,prefill,4,9\n",
            "trace.csv:2: kind 'prefill' is not compute or bandwidth",
        ),
        ("arrival_ns,kind,size,deadline_ns\n0,compute,0,9\n", "trace.csv:2: size '0' is not an integer in [1, 4096]"),
        (
            "arrival_ns,kind,size,deadline_ns\n0,compute,4,-1\n",
            "trace.csv:2: deadline_ns '-1' is not a positive integer",
        ),
        ("arrival_ns,kind,size,deadline_ns\n0,compute,4\n", "trace.csv:2: 3 fields, expected 4"),
        ("arrival_ns,kind,size,deadline_ns\n", "no requests after the header"),
        ("", "empty file"),
    ],
)
def test_bad_trace_is_refused_before_any_work(hxserve, tmp_path, body, message):
    trace = tmp_path / "trace.csv"
    trace.write_text(body)
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [str(hxserve), "--trace", str(trace), "--out", str(out)], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not out.exists() and not Path(str(out) + ".tmp").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--policies", "A,X"], "--policies: 'X' is not A, B or D"),
        (["--policies", "A,A"], "--policies: A given twice"),
        (["--window-us", "-1"], "--window-us: '-1' is not an integer in [0, 10000000]"),
        (
            ["--copy-row-bytes", "600", "--copy-src-stride", "512"],
            "--copy-src-stride 512 is below --copy-row-bytes 600",
        ),
        (["--gemm-nk", "64"], "--gemm-nk: '64' is not N,K"),
        (["--bogus", "1"], "unknown option '--bogus'"),
    ],
)
def test_bad_options_are_refused(hxserve, tmp_path, args, message):
    trace = write_trace(tmp_path / "t.csv", [(0, "compute", 4, MS)])
    proc = subprocess.run(
        [str(hxserve), "--trace", str(trace), "--out", str(tmp_path / "o.jsonl"), *args],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_meta_record_names_the_trace_and_settings(run):
    meta = run["recs"][0]
    assert meta["record"] == "meta" and meta["runner"] == "hxserve"
    assert meta["window_ns"] == W_US * 1000 and meta["policies"] == ["A", "B", "D"]
    assert json.loads(run["out"].read_text().splitlines()[-1])["record"] == "end"
