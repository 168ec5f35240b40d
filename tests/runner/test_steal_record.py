"""Hypervisor steal in the runner's records and what the analysis makes of it.

The runner writes ``end.steal_share``: the share of all cores' time between
its meta and end records that the hypervisor gave to someone else
(kernels/common/record.c over hx_steal_ns, /proc/stat's eighth number).  A
stolen core runs nothing of ours while the tasks' CPU clocks stand still,
so a run above hxfuse.analysis.environment.MAX_STEAL_SHARE is disturbed:
the analysis says "stolen" (no verdict from it), the run job runs it again
(tests/runner/test_quiet.py) and the mechanism checks that assume free
cores report "skipped" instead of "fail"."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hxfuse.analysis.environment import MAX_STEAL_SHARE, disturbance_warnings, environment
from hxfuse.runner import mechanism
from hxfuse.runner.quiet import cpu_fields

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CC = ["cc", "-std=gnu11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", f"-I{REPO / 'kernels/common'}"]


def _build(tmp: Path, name: str, *srcs: str) -> Path:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    exe = tmp / name
    subprocess.run([*CC, str(HERE / f"{name}.c"), *(str(REPO / "kernels" / s) for s in srcs), "-lm", "-o", str(exe)],
                   check=True, timeout=120)  # fmt: skip
    return exe


@pytest.fixture(scope="module")
def record_cases(tmp_path_factory):
    exe = _build(tmp_path_factory.mktemp("steal"), "steal_record", "common/record.c", "common/json.c")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60).stdout
    return {r["case"]: r for r in map(json.loads, out.splitlines())}


@pytest.mark.parametrize("case, share", [("quarter", 0.25), ("none", 0.0), ("unreadable", None), ("backwards", None)])
def test_the_end_record_has_the_share_of_the_cores_time_stolen(record_cases, case, share):
    # planted readings: 0.5 s of steal over 1 s of 2 cores is a quarter
    assert record_cases[case]["steal_share"] == share


def test_the_posix_reading_is_proc_stats_steal_column(tmp_path):
    exe = _build(tmp_path, "steal_now", "common/platform_posix_machine.c")
    hz = os.sysconf("SC_CLK_TCK")
    before = cpu_fields("/proc/stat", "cpu")
    got = int(subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=30).stdout)
    after = cpu_fields("/proc/stat", "cpu")
    if before is None or len(before) < 8:
        pytest.skip("/proc/stat has no steal column here")
    if after[7] == 0:
        pytest.skip("this machine has had no steal since boot: any column reading 0 would agree")
    # steal only grows: the runner's reading lies between the two of ours, a
    # reader of another column (softirq, guest) does not
    assert before[7] * 10**9 // hz <= got <= after[7] * 10**9 // hz, (before, got, after)


class _Run:
    def __init__(self, end):
        self.meta, self.end = {"target": "host", "online_cores": 2}, end


LIM = MAX_STEAL_SHARE


@pytest.mark.parametrize("share, stolen", [(0.0, False), (LIM, False), (LIM + 0.001, True), (0.4, True), (None, False)])
def test_the_analysis_withholds_the_verdict_of_a_stolen_run(share, stolen):
    env = environment(_Run({"steal_share": share}))
    assert math.isnan(env["steal_share"]) if share is None else env["steal_share"] == share
    env["online_cores"] = 2
    found = [w for w in disturbance_warnings(env) if w.startswith("the hypervisor took")]
    assert bool(found) is stolen, found


def test_a_failed_check_on_stolen_cores_is_skipped_naming_the_steal():
    def check(result):
        return {"result": result, "numbers": {}, "shown": "numbers"}

    skipped = mechanism._stolen(check("fail"), 0.12)
    assert skipped["result"] == "skipped" and skipped["numbers"]["steal_share"] == 0.12
    assert skipped["reason"].startswith("the hypervisor took 12.0% of the cores")
    # a steal at the limit, an unreadable one, or a pass despite steal change nothing
    assert mechanism._stolen(check("fail"), MAX_STEAL_SHARE)["result"] == "fail"
    assert mechanism._stolen(check("fail"), None)["result"] == "fail"
    assert mechanism._stolen(check("pass"), 0.5)["result"] == "pass"
