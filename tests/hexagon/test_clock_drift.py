"""The core clock is calibrated at start-up and again after the last trial
(kernels/hexagon/clock_qurt.c), and a change beyond the runner's tolerance is
flagged in the end record (common/record.c, ``clock_drift``) and by the
analysis (hxfuse.analysis.environment: **core clock drifted**, a disturbance
that withholds the verdict).  Run on the host against a stub clock whose core
rate the test harness changes between the calibrations
(kernels/hexagon/test_clock_drift.c); untested on hardware."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hxfuse.analysis.environment import disturbance_warnings, environment

KERNELS = Path(__file__).resolve().parents[2] / "kernels"


@pytest.fixture(scope="module")
def drift_records(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    exe = tmp_path_factory.mktemp("clock") / "test_clock_drift"
    srcs = ["hexagon/test_clock_drift.c", "hexagon/clock_qurt.c", "common/record.c", "common/json.c"]
    cc = ["cc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", f"-I{KERNELS / 'hexagon/sdk_decls'}"]
    subprocess.run([*cc, *(str(KERNELS / s) for s in srcs), "-lm", "-o", str(exe)], check=True, timeout=120)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60).stdout
    return {r["case"]: r["clock_drift"] for r in map(json.loads, out.splitlines())}


@pytest.mark.parametrize(
    "case, end, drift, drifted",
    [("steady", 1000, 0.0, False), ("small", 990, -0.01, False), ("throttled", 900, -0.1, True),
     ("boosted", 1030, 0.03, True)],
)  # fmt: skip
def test_the_end_record_flags_a_drift_beyond_the_tolerance(drift_records, case, end, drift, drifted):
    d = drift_records[case]
    assert d["cycles_per_us_start"] == 1000 and d["cycles_per_us_end"] == end
    assert d["drift"] == pytest.approx(drift) and d["tolerance"] == 0.02 and d["drifted"] is drifted


def test_no_end_calibration_is_null_not_a_drift(drift_records):
    assert drift_records["stuck"] is None


class _Run:
    def __init__(self, end):
        self.meta, self.end = {"target": "hexagon"}, end


@pytest.mark.parametrize("case, disturbed", [("small", False), ("throttled", True), ("boosted", True)])
def test_the_analysis_withholds_the_verdict_of_a_drifted_run(drift_records, case, disturbed):
    env = environment(_Run({"clock_drift": drift_records[case]}))
    assert env["clock_drift"] == pytest.approx(drift_records[case]["drift"])
    found = [w for w in disturbance_warnings(env) if w.startswith("core clock drifted")]
    assert bool(found) is disturbed
    if disturbed:
        assert f"{drift_records[case]['drift']:+.1%}" in found[0] and "tolerance 2%" in found[0]


def test_a_run_without_calibration_has_no_drift_finding():
    env = environment(_Run({"clock_drift": None}))
    assert env["clock_drift"] != env["clock_drift"]  # NaN
    assert not [w for w in disturbance_warnings(env) if "clock" in w]
