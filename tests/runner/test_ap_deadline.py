"""hxrun-ap's time bound on calls that cannot be cancelled
(kernels/ap/deadline.c): a call that overruns is named, the hook runs and
the process ends; calls inside their bound, and a bound replaced before it
expired, change nothing.  Built by its own compiler call (and, where zig is
installed, compiled for aarch64 as the phone's driver is)."""

import os
import shutil
import signal
import subprocess
import time

import pytest

from pipeline_util import REPO

pytestmark = pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc")
AP = REPO / "kernels" / "ap"


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    out = tmp_path_factory.mktemp("deadline") / "test_deadline"
    cmd = ["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(out)]
    cmd += [str(AP / "test_deadline.c"), str(AP / "deadline.c"), "-lpthread"]
    build = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    return out


def test_calls_inside_their_bound_and_a_replaced_bound_change_nothing(exe):
    r = subprocess.run([str(exe), "fast"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "armed 2000" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([str(exe), "rearm"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "survived" in r.stdout and "hook" not in r.stdout, r.stdout + r.stderr


def test_a_call_past_its_bound_is_named_and_ends_the_process(exe):
    t0 = time.monotonic()
    r = subprocess.run([str(exe), "hang"], capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t0
    assert r.returncode == 1, r.stdout + r.stderr
    assert "hxfuse CONTROL PING did not return within 0.3 s" in r.stderr, r.stderr
    assert "hook: hxfuse CONTROL PING after 0.3 s" in r.stdout and "not stopped" not in r.stdout
    assert took < 20  # 0.3 s and a loaded machine's slack, not the 30 s the call would block


def test_it_compiles_for_the_phones_driver(tmp_path):
    try:
        import ziglang  # noqa: F401
    except ImportError:
        pytest.skip("needs zig (pip ziglang) for the aarch64 compile")
    import sys

    zig = [sys.executable, "-m", "ziglang"]
    r = subprocess.run(
        [*zig, "cc", "-target", "aarch64-linux-gnu", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-c"]
        + [str(AP / "deadline.c"), "-o", str(tmp_path / "deadline.o")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "deadline.o").stat().st_size > 0


# ---- end to end: a normal hxrun-ap run over the loopback stand-in --------

LOOPBACK = REPO / "kernels" / "build" / "host" / "ap"
SMALL = ("--m-shape", "64,64,64", "--v-shape", "64,256", "--d-shape", "128,1024")
BOUND_S = 2.0


@pytest.fixture(scope="module")
def ap_build():
    if not shutil.which("make"):
        pytest.skip("needs make")
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "TARGET=host", "ap-loopback"], check=True)
    return LOOPBACK


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize(
    "method,call",
    [
        (0, "remote_handle64_open"),
        (2, "hxfuse SETUP"),
        (3, "hxfuse START"),
        (4, "hxfuse CONTROL PING"),
        (5, "hxfuse STOP"),
        (1, "remote_handle64_close"),
    ],
)
def test_a_run_hung_in_a_fastrpc_call_ends_naming_it_within_the_bound(ap_build, tmp_path, method, call):
    """The stand-in's method never returns (HX_LOOPBACK_FAULT=hang:N, a DSP
    thread stuck for good): the run ends with the call named, exit 1, within
    --ap-timeout-s and a loaded machine's slack, leaving no process and no
    output behind.  Without the bound the run blocks until this test kills it."""
    out = tmp_path / "r.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HX_LOOPBACK_", "ADSP_LIBRARY_PATH"))}
    env.update(ADSP_LIBRARY_PATH=str(ap_build), HX_LOOPBACK_FAULT=f"hang:{method}")
    cmd = [str(ap_build / "hxrun-ap"), "--cdsprpc", str(ap_build / "libcdsprpc.so"), "--out", str(out)]
    cmd += ["--workloads", "mv", *SMALL, "--rounds", "1", "--warmup", "0", "--ap-timeout-s", str(BOUND_S)]
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    try:
        _, err = proc.communicate(timeout=45)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"hxrun-ap still blocked in {call} after 45 s: the call has no time bound")
    took = time.monotonic() - t0
    assert proc.returncode == 1, err
    assert f"hxrun-ap: error: {call} did not return within {BOUND_S:g} s" in err, err
    assert took < BOUND_S + 25, took  # the bound plus a loaded machine's slack, not for ever
    assert not _group_alive(proc.pid), "a process of the run is still alive"
    assert not out.exists() and not list(tmp_path.glob("r.jsonl*")), list(tmp_path.iterdir())
