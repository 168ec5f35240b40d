"""The run wrapper waits for Snakemake's own process to go quiet before it
starts a measurement (hxfuse.runpoint.wait_until_quiet): known answers with
a process that burns CPU for a known time and one that sleeps."""

import subprocess
import sys
import time

from hxfuse import runpoint

BURN = "import time\nt = time.time()\nwhile time.time() - t < {s}: pass\ntime.sleep(30)\n"


def _start(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code])


def test_waits_while_the_parent_burns_cpu_then_returns():
    p = _start(BURN.format(s=1.2))
    try:
        time.sleep(0.1)
        waited, quiet = runpoint.wait_until_quiet([p.pid], quiet_s=0.3, max_s=5.0)
        # at least the rest of the 1.2 s burn, plus the quiet window
        assert quiet and 1.2 <= waited < 3.0, waited  # ~1.1 s of burn left + 0.3 s quiet
    finally:
        p.kill()


def test_an_idle_parent_costs_only_the_quiet_window():
    p = _start("import time\ntime.sleep(30)\n")
    try:
        time.sleep(0.3)  # past the interpreter's start-up
        waited, quiet = runpoint.wait_until_quiet([p.pid], quiet_s=0.3, max_s=5.0)
        assert quiet and 0.3 <= waited < 0.8, waited
    finally:
        p.kill()


def test_a_parent_that_never_goes_quiet_is_waited_for_at_most_max():
    p = _start(BURN.format(s=20))
    try:
        waited, quiet = runpoint.wait_until_quiet([p.pid], quiet_s=0.3, max_s=1.0)
        assert not quiet and 1.0 <= waited < 1.5, waited
    finally:
        p.kill()


def test_no_parent_to_watch_returns_at_once():
    assert runpoint.wait_until_quiet([]) == (0.0, True)
    assert runpoint.wait_until_quiet([2**22 + 12345]) == (0.0, True)  # no such process
