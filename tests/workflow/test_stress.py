"""tests/stress.sh, the stress check of the timing-sensitive tests: bad
arguments are refused before any run, and its tally is right on tests whose
outcome is known (one passes, one skips, one fails in every run)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "stress.sh"

FAKE = """import pytest

pytestmark = pytest.mark.timing


def test_passes():
    pass


def test_skips():
    pytest.skip("premise not given")


def test_fails():
    assert False
"""


def _stress(*args, env_extra=None, timeout=300):
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    env.update(env_extra or {})
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("n", ["0", "x", "-3"])
def test_a_bad_count_is_refused_before_any_run(n):
    r = _stress(n)
    assert r.returncode == 2 and "N must be a positive integer" in r.stderr, r.stderr
    assert "runs:" not in r.stdout


def test_a_core_that_is_not_ours_is_refused():
    r = _stress("1", env_extra={"LOAD_CORE": "100000"})
    assert r.returncode == 2 and "LOAD_CORE=100000" in r.stderr, r.stderr


@pytest.mark.slow  # four pytest sessions
def test_the_tally_counts_passes_skips_and_failures_in_both_conditions(tmp_path):
    fake = tmp_path / "test_fake_timing.py"
    fake.write_text(FAKE)
    r = _stress("2", str(fake), env_extra={"STRESS_OUT": str(tmp_path / "out")})
    assert r.returncode == 1, r.stdout + r.stderr  # one test fails every run
    table = [line.split() for line in r.stdout.splitlines() if "::" in line and not line.startswith("stress.sh:")]
    rows = {cells[0].rsplit("::", 1)[-1]: cells[1:] for cells in table}
    assert rows == {
        "test_passes": ["2/0/0", "2/0/0"],
        "test_skips": ["0/2/0", "0/2/0"],
        "test_fails": ["0/0/2", "0/0/2"],
    }, r.stdout
    assert "FAILS MORE THAN 1 IN 20:" in r.stdout and "test_fails (quiet: 2 of 2 runs failed)" in r.stdout
    assert "machine:" in r.stdout and "cores online" in r.stdout
