"""hxrun-ap's time bound on calls that cannot be cancelled
(kernels/ap/deadline.c): a call that overruns is named, the hook runs and
the process ends; calls inside their bound, and a bound replaced before it
expired, change nothing.  Built by its own compiler call (and, where zig is
installed, compiled for aarch64 as the phone's driver is)."""

import shutil
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
