"""The AP driver's clock alignment (kernels/ap/clock_align.c): known offsets,
drifts and jittered ping samples give exact expected values; the interval
of consistent offsets picks the shared counter or the ping-pong; the
verdict's error bound and resolved drift are exact, the alignment is
refused one nanosecond past its bound, and 0 ("never stamped") stays 0.
The C known-answer program is built by its own compiler call, independent of
the Makefile, so the arithmetic is tested without the skel or the stand-in."""

import shutil
import subprocess

import pytest

from pipeline_util import REPO

pytestmark = pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc")


def test_clock_align_known_answers(tmp_path):
    ap = REPO / "kernels" / "ap"
    exe = tmp_path / "test_clock_align"
    build = subprocess.run(
        [
            "gcc",
            "-std=gnu11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-o",
            str(exe),
            str(ap / "test_clock_align.c"),
            str(ap / "clock_align.c"),
            str(REPO / "kernels" / "common" / "json.c"),
            "-I",
            str(REPO / "kernels" / "common"),
            "-lm",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "all checks passed" in run.stdout
