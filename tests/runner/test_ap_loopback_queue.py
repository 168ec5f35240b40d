"""The loopback stand-in for libcdsprpc.so (kernels/loopback/cdsprpc_loopback.c).

Known answers of its dspqueue semantics (kernels/loopback/test_queue.c, one
check per test), the DSP skel driven through it by a minimal AP
(kernels/loopback/test_skel.c) with the stand-in's counters, and its open
failures (a missing skel, a missing symbol, the fault hooks), each of which
must name what is missing.  The stand-in's times are host-CPU times of one
process: nothing here compares durations, only orderings (inside the C
tests) and counts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AP = REPO / "kernels" / "build" / "host" / "ap"
URI = "file:///libhxfuse_skel.so?hxfuse_skel_handle_invoke&_modver=1.0&_dom=cdsp"
AEE_EUNSUPPORTED, AEE_ECONNRESET = 20, 104


def dsp(code: int) -> int:
    """An AEE code as the DSP returns it (AEEStdErr.h: DSP_AEE_EOFFSET
    0x80000400 added on the DSP), read as the C int the library returns."""
    return code + 0x80000400 - (1 << 32)


AEE_EFAILED_DSP, AEE_EBADPARM_DSP = dsp(0x001), dsp(0x00E)
AEE_EUNABLETOLOAD_DSP, AEE_ENOSUCHSYMBOL_DSP, AEE_EUNSIGNEDMOD_DSP = dsp(0x006), dsp(0x042), dsp(0x081)

QUEUE_CHECKS = [
    "fifo",
    "callbacks_overlap",
    "full_ring",
    "oversize_read",
    "close_stops_callback",
    "ap_callback",
    "queue_full_fault",
    "pd_death",
]


@pytest.fixture(scope="module")
def built() -> Path:
    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("needs make and a C compiler: apt-get install build-essential")
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "TARGET=host", "ap-loopback-test"], check=True)
    return AP


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HX_LOOPBACK_", "ADSP_LIBRARY_PATH"))}
    env.update(extra)
    return env


@pytest.mark.parametrize("check", QUEUE_CHECKS)
def test_queue_semantics(built: Path, check: str) -> None:
    r = subprocess.run([str(built / "test_queue"), check], capture_output=True, text=True, timeout=120, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [f"ok {check}"]


def test_a_blocking_read_inside_the_packet_callback_fails_naming_the_rule(built: Path) -> None:
    """libcdsprpc holds the queue's non-recursive packet mutex around the
    callback and dspqueue_read takes it: on a phone the callback thread
    deadlocks.  The stand-in ends the process with the rule named instead of
    hanging (or passing)."""
    r = subprocess.run(
        [str(built / "test_queue"), "read_in_callback"], capture_output=True, text=True, timeout=60, env=clean_env()
    )
    assert r.returncode != 0 and "ok read_in_callback" not in r.stdout
    assert "dspqueue_read (blocking) on a queue that has a packet callback" in r.stderr
    assert "called from inside that callback" in r.stderr
    assert "Clients cannot use blocking read calls if a packet callback has been set" in r.stderr


def test_skel_through_stand_in(built: Path, tmp_path: Path) -> None:
    stats = tmp_path / "stats.json"
    r = subprocess.run(
        [str(built / "test_skel")],
        capture_output=True,
        text=True,
        timeout=300,
        env=clean_env(HX_LOOPBACK_STATS=str(stats)),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    steps = [line.split()[1] for line in r.stdout.splitlines()]
    assert steps == [
        "open",
        "setup_refusals",
        "setup",
        "start_ping",
        "group_b",
        "group_d",
        "group_c",
        "bad_packets",
        "control",
        "stop_close",
    ]
    s = json.loads(stats.read_text())
    assert s["stand_in"] is True
    # the refused second open reaches the skel; the first (signed PD) does not
    assert s["invokes"] == {
        "open": 2,
        "close": 1,
        "setup": 6,
        "start": 2,
        "control": 13,
        "stop": 1,
        "other": 0,
    }
    # PING 1, BEGIN_TRIAL 3, POISON 1, CHECKSUM 2, READ 3, END 2 (op 77 is not counted)
    assert s["control_ops"] == {"1": 1, "2": 3, "3": 1, "4": 2, "5": 3, "6": 2}
    assert s["unsigned_pd"] is True
    assert s["latency_qos"] == {"enable": 1, "latency": 100}
    m, v, d = s["queues"]
    # M's queue: its group-B task and three bad packets, each answered
    assert (m["requests"], m["responses"], m["request_ops"]) == (4, 4, {"task": 3, "fused": 0})
    # V's queue carries the fused entries: 1 + (3 + 1) + (2 + 1) replies
    assert (v["requests"], v["responses"], v["request_ops"]) == (3, 8, {"task": 1, "fused": 2})
    assert (d["requests"], d["responses"]) == (1, 1)
    assert s["early_wakeups"] == 1


OPENER = r"""
import ctypes, os, sys
lib = ctypes.CDLL(sys.argv[1])
lib.remote_handle64_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64)]
lib.remote_handle64_invoke.argtypes = [ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p]
lib.remote_handle64_close.argtypes = [ctypes.c_uint64]
um = (ctypes.c_int * 2)(3, 1)  # CDSP_DOMAIN_ID, enable
print("session", lib.remote_session_control(2, um, ctypes.sizeof(um)))
h = ctypes.c_uint64(0)
rc = lib.remote_handle64_open(sys.argv[2].encode(), ctypes.byref(h))
print("open", rc)
if rc == 0 and sys.argv[3:] != ["noclose"]:
    # method 2 (SETUP) with a bare scalars word: the dsp-error fault answers
    # before the skel would check it
    print("invoke", lib.remote_handle64_invoke(h, 2 << 24, None))
    print("close", lib.remote_handle64_close(h))
"""


def open_skel(lib: Path, uri: str = URI, *more: str, **env: str) -> tuple[dict[str, int], str]:
    """Opens the skel through the stand-in in a fresh process: the return
    codes, and the DSP log (what logcat shows on a phone).  The DSP's reasons
    are never in the AP process's own output."""
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "dsp.log"
        r = subprocess.run(
            [sys.executable, "-c", OPENER, str(lib), uri, *more],
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(HX_LOOPBACK_DSP_LOG=str(log), **env),
        )
        assert r.returncode == 0, r.stderr
        text = log.read_text() if log.exists() else ""
    assert "loopback DSP" not in r.stderr, r.stderr
    return {k: int(v) for k, v in (line.split() for line in r.stdout.splitlines())}, text


def test_open_finds_the_skel_beside_the_stand_in(built: Path) -> None:
    rcs, err = open_skel(built / "libcdsprpc.so")
    # the skel's AEE_EBADPARM, as the DSP returns it: 0x8000040E
    assert rcs == {"session": 0, "open": 0, "invoke": AEE_EBADPARM_DSP, "close": 0}, err


def test_no_skel_fault_and_missing_library_name_what_is_missing(built: Path, tmp_path: Path) -> None:
    rcs, err = open_skel(built / "libcdsprpc.so", HX_LOOPBACK_FAULT="no-skel")
    assert rcs["open"] == AEE_EUNABLETOLOAD_DSP
    assert "libhxfuse_skel.so not found (HX_LOOPBACK_FAULT=no-skel)" in err
    assert str(built / "libhxfuse_skel.so") in err  # the path it searched
    missing = URI.replace("libhxfuse_skel.so", "libnosuch_skel.so")
    rcs, err = open_skel(built / "libcdsprpc.so", missing, ADSP_LIBRARY_PATH=f"{tmp_path}/a;{tmp_path}/b")
    assert rcs["open"] == AEE_EUNABLETOLOAD_DSP
    assert "libnosuch_skel.so not found" in err
    for path in (tmp_path / "a" / "libnosuch_skel.so", tmp_path / "b" / "libnosuch_skel.so"):
        assert str(path) in err
    assert str(built / "libnosuch_skel.so") in err


def test_missing_symbol(built: Path) -> None:
    rcs, err = open_skel(built / "libcdsprpc.so", URI.replace("hxfuse_skel_handle_invoke", "no_such_invoke"))
    assert rcs["open"] == AEE_ENOSUCHSYMBOL_DSP
    assert "no symbol no_such_invoke" in err


def test_adsp_library_path_is_searched(built: Path, tmp_path: Path) -> None:
    """A stand-in with no skel beside it finds one through ADSP_LIBRARY_PATH."""
    (tmp_path / "rpc").mkdir()
    (tmp_path / "dsp").mkdir()
    shutil.copy(built / "libcdsprpc.so", tmp_path / "rpc")
    shutil.copy(built / "libhxfuse_skel.so", tmp_path / "dsp")
    rcs, err = open_skel(tmp_path / "rpc" / "libcdsprpc.so")
    assert rcs["open"] == AEE_EUNABLETOLOAD_DSP and str(tmp_path / "rpc" / "libhxfuse_skel.so") in err
    rcs, err = open_skel(tmp_path / "rpc" / "libcdsprpc.so", ADSP_LIBRARY_PATH=f"/nonexistent;{tmp_path / 'dsp'}")
    assert rcs["open"] == 0, err


def test_stats_at_exit_when_never_closed(built: Path, tmp_path: Path) -> None:
    stats = tmp_path / "stats.json"
    rcs, err = open_skel(built / "libcdsprpc.so", URI, "noclose", HX_LOOPBACK_STATS=str(stats))
    assert rcs == {"session": 0, "open": 0}, err
    s = json.loads(stats.read_text())
    assert s["invokes"]["open"] == 1 and s["invokes"]["close"] == 0 and s["queues"] == []


def test_fault_hooks(built: Path) -> None:
    rcs, _ = open_skel(built / "libcdsprpc.so", HX_LOOPBACK_FAULT="dsp-error:2")
    assert rcs["open"] == 0 and rcs["invoke"] == AEE_EFAILED_DSP
    rcs, err = open_skel(built / "libcdsprpc.so", HX_LOOPBACK_FAULT="no-unsigned-pd")
    assert rcs["session"] == AEE_EUNSUPPORTED
    # refused: a signed PD does not load the unsigned skel
    assert rcs["open"] == AEE_EUNSIGNEDMOD_DSP and "unsigned" in err
    rcs, err = open_skel(built / "libcdsprpc.so", HX_LOOPBACK_FAULT="unsigned-refused")
    assert rcs["session"] == 0 and rcs["open"] == AEE_EUNSIGNEDMOD_DSP and "refuses unsigned PDs" in err
    # the PD dies in SETUP: the call fails as FastRPC shows a dead PD, and so does the close
    rcs, err = open_skel(built / "libcdsprpc.so", HX_LOOPBACK_FAULT="dsp-crash:2")
    assert rcs == {"session": 0, "open": 0, "invoke": AEE_ECONNRESET, "close": AEE_ECONNRESET}, err
    assert "PD died" in err


def test_a_skel_that_exits_kills_the_session_not_the_ap(built: Path) -> None:
    """exit() in a user PD ends the PD: the AP process lives on and sees a
    dead session (AEE_ECONNRESET), and what the skel printed is in the DSP
    log, never in the AP's own output."""
    uri = "file:///libtest_exit_skel.so?test_exit_skel_invoke&_modver=1.0&_dom=cdsp"
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "dsp.log"
        r = subprocess.run(
            [sys.executable, "-c", OPENER, str(built / "libcdsprpc.so"), uri],
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(HX_LOOPBACK_DSP_LOG=str(log)),
        )
        text = log.read_text()
    assert r.returncode == 0, r.stderr
    rcs = {k: int(v) for k, v in (line.split() for line in r.stdout.splitlines())}
    assert rcs == {"session": 0, "open": 0, "invoke": AEE_ECONNRESET, "close": AEE_ECONNRESET}
    assert "must not see" not in r.stderr + r.stdout
    assert "test_exit_skel: a line the AP must not see" in text and "the skel called exit(3)" in text


def test_stand_in_labels_itself(built: Path) -> None:
    import ctypes

    lib = ctypes.CDLL(str(built / "libcdsprpc.so"))
    text = ctypes.c_char_p(ctypes.addressof(ctypes.c_char.in_dll(lib, "hx_loopback_stand_in"))).value.decode()
    assert "stand-in for libcdsprpc.so" in text and "not device timings" in text
