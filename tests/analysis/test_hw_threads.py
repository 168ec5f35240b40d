"""The cDSP counts hardware threads, not cores: its meta record writes
``hw_threads`` with ``online_cores`` null (kernels/common/platform.h,
hx_cores_key), and the analysis carries and names them so (hxfuse.analysis
.environment.parallel_units): k_engines is bounded by them, the summary
columns hold them apart from cores, and the paper's platform line never
calls them cores."""

from __future__ import annotations

import math

import pandas as pd

from hxfuse.analysis import aggregate as ag
from hxfuse.analysis.environment import ENV_SUMMARY_COLUMNS, parallel_units
from hxfuse.paper import sections
from hxfuse.runner import provenance
from hxfuse.runner.records import read_run
from runner_util import build_runner, run_runner


def _hexagon_meta(hw: int) -> dict:
    # what protocol.c's write_machine writes on QuRT (hx_cores_key "hw_threads")
    return {"target": "hexagon", "online_cores": None, "hw_threads": hw}


def test_the_units_are_named_by_what_the_runner_counted():
    assert parallel_units(_hexagon_meta(6)) == (6.0, "hardware threads")
    assert parallel_units({"online_cores": 2}) == (2.0, "online cores")
    n, words = parallel_units({})
    assert math.isnan(n) and words == "online cores"


def test_a_hexagon_meta_flows_as_hardware_threads(tmp_path, synth):
    for hw, k in ((6, 3), (2, 2)):  # three tasks in mvd: k = min(3, hw_threads)
        recs = synth.synthetic_run(rounds=2, warmup=0, meta={"engines_exceed_cores": False})
        recs[0] |= _hexagon_meta(hw)
        run = read_run(synth.write_jsonl(tmp_path / f"h{hw}.jsonl", recs))
        t = ag.trial_table(run, {"point": "p"})
        assert (t["hw_threads"] == hw).all() and t["online_cores"].isna().all()
        assert (t.loc[t["workload"] == "mvd", "k_engines"] == k).all()
    assert "hw_threads" in ENV_SUMMARY_COLUMNS and "hw_threads" in provenance.META_ENV_KEYS
    frame = pd.DataFrame({"hw_threads": [6.0, 6.0], "n": [3, 3]})
    p = sections.platform("hexagon", frame, {"group_b_backend": "queue threads"})
    assert p["cores"] == "6 hardware threads (not cores)"


def test_the_host_runner_writes_online_cores_and_no_hw_threads(tmp_path):
    proc, recs = run_runner(
        build_runner("host"), tmp_path / "r.jsonl", "--m-shape", "32,32,32", "--v-shape", "8,64",
        "--d-shape", "16,64", "--rounds", "1", "--warmup", "0",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    meta = recs[0]
    assert meta["online_cores"] >= 1 and "hw_threads" not in meta
