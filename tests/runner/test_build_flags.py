"""The runner's build flags are the target file's: an environment that
exports CFLAGS/LDFLAGS (a conda compiler activation does) cannot replace
them silently; an explicit CFLAGS on make's command line (config
build.cflags) still does."""

import os
import shutil
import subprocess

import pytest

from pipeline_util import REPO

pytestmark = pytest.mark.skipif(not shutil.which("make"), reason="needs make")

CONDA_ENV = {"CFLAGS": "-march=nocona -mtune=haswell -O2 -pipe", "LDFLAGS": "-Wl,-O2 -Wl,--as-needed"}


def make_print(var, *args, env=None):
    r = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(REPO / "kernels"), "TARGET=host", *args, f"print-{var}"],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.mark.parametrize("var", ["CFLAGS", "LDFLAGS", "FLAGS_LINE"])
def test_exported_flags_do_not_replace_the_targets(var):
    assert make_print(var, env=CONDA_ENV) == make_print(var, env={"CFLAGS": "", "LDFLAGS": ""})


def test_host_flags_are_the_tuned_ones_under_a_conda_environment():
    assert "-O3 -march=native" in make_print("CFLAGS", env=CONDA_ENV)
    assert "-lm" in make_print("LDFLAGS", env=CONDA_ENV)


def test_explicit_cflags_on_the_command_line_still_win():
    assert make_print("CFLAGS", "CFLAGS=-O1 -std=c11", env=CONDA_ENV) == "-O1 -std=c11"
