"""hxrun-ap's clock alignment through the loopback stand-in, with the legs of
every FastRPC call shaped by the stand-in's hook (HX_LOOPBACK_CLOCK_LEGS,
kernels/loopback/clock_legs.h) and the DSP clock's offset and drift by the
skel's (--test-dsp-clock-*).

On x86 the AP and the stand-in's "DSP" read one clock, as the AP's
cntvct_el0 and the cDSP's QTimer read one counter on a Snapdragon: with no
offset injected the driver must find the shared counter and map device
times exactly, whatever the legs; with an offset it must fall back to the
ping-pong, whose error (half the legs' difference) its recorded bound must
cover, and noise in the legs must not be mistaken for drift.  Host timings
here are not device timings (the machine may be loaded)."""

from __future__ import annotations

import pytest

from test_ap_loopback import SMALL, ap_build, ok, run_ap  # noqa: F401 (ap_build: a fixture)
from runner_util import trials

ARGS = ("--workloads", "mv", *SMALL, "--warmup", "0", "--rounds", "2", "--groups", "A,B,D")


def alignment(recs):
    return recs[0]["transport"]["clock_alignment"], recs[-1]["clock_alignment_end"]


def test_shared_counter_maps_exactly_whatever_the_legs(ap_build, tmp_path):  # noqa: F811
    # a call's way out takes 2 ms, its way back nothing: a ping-pong would
    # put the DSP clock 1 ms ahead; the shared counter knows it is not
    env = {"HX_LOOPBACK_CLOCK_LEGS": "2000000,0"}
    recs = ok(*run_ap(tmp_path, *ARGS, env=env)[:2])
    start, end = alignment(recs)
    assert start["method"] == "shared-counter", start
    assert start["offset_ns"] == 0 and start["uncertainty_ns"] == 0, start
    # the ping-pong's own estimate is recorded too, and it is biased by
    # half the legs' difference, which its half round trip covers
    assert start["ping"]["offset_ns"] >= 900_000, start
    assert abs(start["ping"]["offset_ns"]) <= start["ping"]["uncertainty_ns"], start
    assert end["method"] == "shared-counter" and end["aligned"] is True and end["error_bound_ns"] == 0, end
    for t in trials(recs):
        for x in t["tasks"]:
            # exact mapping: the DSP began after the AP wrote the request
            # and ended before the AP read the reply
            assert x["launch"] <= x["begin"] <= x["end"] <= x["host_seen"], (t["group"], x)


def test_ping_fallback_bound_covers_asymmetric_legs(ap_build, tmp_path):  # noqa: F811
    offset = 7_000_000_000
    env = {"HX_LOOPBACK_CLOCK_LEGS": "2000000,0"}
    recs = ok(*run_ap(tmp_path, *ARGS, "--test-dsp-clock-offset-ns", str(offset), env=env)[:2])
    start, end = alignment(recs)
    assert start["method"] == "ping", start
    err = start["offset_ns"] - offset
    # the asymmetry's bias is there (half of 2 ms) and inside the uncertainty
    assert 900_000 <= err <= start["uncertainty_ns"], start
    assert end["method"] == "ping" and end["aligned"] is True, end
    bound = end["error_bound_ns"]
    assert bound >= err and bound >= start["uncertainty_ns"], end
    for t in trials(recs):
        for x in t["tasks"]:
            # mapped times may be off by the bound, never by more
            assert x["launch"] - bound <= x["begin"] <= x["end"] <= x["host_seen"] + bound, (t["group"], x)


def test_noisy_legs_are_not_drift(ap_build, tmp_path):  # noqa: F811
    # each leg 20 us to 1 ms, varying call to call: the minimum-round-trip
    # estimates of the start and the end differ by tens of microseconds
    # with no drift at all (a fixed 5 us bound refused this run: the offset
    # "moved" from -5044012 to -5018424 ns)
    env = {"HX_LOOPBACK_CLOCK_LEGS": "20000,20000,1000000"}
    recs = ok(*run_ap(tmp_path, *ARGS, "--test-dsp-clock-offset-ns", "-5000000", env=env)[:2])
    start, end = alignment(recs)
    assert start["method"] == "ping" and start["uncertainty_ns"] >= 20_000, start
    assert end["aligned"] is True and end["unexplained_drift_ns"] <= end["bound_ns"], end
    assert end["error_bound_ns"] >= abs(start["offset_ns"] + 5_000_000), end


@pytest.mark.parametrize("legs", ["0,0", "200000,0"])
def test_a_real_drift_is_refused_under_either_method(ap_build, tmp_path, legs):  # noqa: F811
    # 5 %: over a run of tens of ms the offset moves by milliseconds, far
    # more than the fits' uncertainty (with 200 us legs, about 300 us); the
    # start sees offset 0 (the drift starts at SETUP) and takes the shared
    # counter, which the end disproves
    env = {"HX_LOOPBACK_CLOCK_LEGS": legs}
    args = ("--workloads", "mv", *SMALL, "--warmup", "1", "--rounds", "4", "--test-dsp-clock-drift-ppm", "50000")
    proc, recs, _ = run_ap(tmp_path, *args, env=env)
    assert proc.returncode == 7, proc.stderr
    assert "clock_unaligned" in proc.stderr and "bound of 5000 ns" in proc.stderr
    end = recs[-1]["clock_alignment_end"]
    assert recs[-1]["status"] == "clock_unaligned" and end["aligned"] is False, end
    assert end["method"] == "ping" and end["unexplained_drift_ns"] > 5000, end


def test_bad_legs_are_refused(ap_build, tmp_path):  # noqa: F811
    proc, _, _ = run_ap(tmp_path, *ARGS, env={"HX_LOOPBACK_CLOCK_LEGS": "fast"})
    assert proc.returncode != 0 and "HX_LOOPBACK_CLOCK_LEGS" in proc.stderr
