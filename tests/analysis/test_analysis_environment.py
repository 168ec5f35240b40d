"""Environment columns and warnings, emulated targets, report tables."""

import json
import math

import pandas as pd
import pytest

from hxfuse.analysis import aggregate as ag
from hxfuse.sweep import report
from hxfuse.runner.records import parse_records

US = 1000
PLAN = {"M": 100 * US, "V": 80 * US, "D": 60 * US}


def run_of(records):
    return parse_records([json.dumps(r) for r in records])


def summary(synth, meta=None, end=None, rounds=4, **kw):
    recs = synth.synthetic_run(PLAN, rounds=rounds, warmup=1, meta=meta, **kw)
    if end:
        recs[-1].update(end)
    t = ag.trial_table(run_of(recs), {"point": "p"})
    return t, ag.summarize(t, n_resamples=100)


def d_row(s):
    return s[(s["workload"] == "mvd") & (s["group"] == "D")].iloc[0]


def test_environment_copied_from_meta_and_end(synth):
    meta = {
        "online_cores": 8,
        "engines_exceed_cores": False,
        "cpu_governor": "performance",
        "load_average_before": 0.25,
        "device_engines_used": 3,
        "sdk_version": "6.0.0",
        "emulated": False,
    }
    t, s = summary(synth, meta=meta, end={"load_average_after": 0.5, "wall_ns": 2_000_000_000})
    d = d_row(s)
    assert d["cpu_model"] == "test cpu" and d["cpu_governor"] == "performance"
    assert d["online_cores"] == 8 and d["device_engines_used"] == 3
    assert d["load_average_before"] == 0.25 and d["load_average_after"] == 0.5
    assert d["runner_wall_s"] == 2.0 and d["sdk_version"] == "6.0.0"
    assert d["clock_resolution_ns"] == 1 and d["clock_read_overhead_ns"] == 20
    assert d["env_warning"] == ""
    # The same environment on every row of the point, and in the trial table.
    assert (s["env_warning"] == "").all() and (s["cpu_governor"] == "performance").all()
    assert (t["load_average_before"] == 0.25).all()
    assert "env_warning" in ag.verdict_table(s).columns


def test_missing_fields_are_tolerated(synth):
    # An older runner / another target: no governor, load, SDK, emulated,
    # engines-used fields at all.
    recs = synth.synthetic_run(PLAN, rounds=2, warmup=0)
    for k in ("cpu_governor", "load_average_before", "sdk_version", "emulated", "device_engines_used", "clock"):
        recs[0].pop(k, None)
    env = ag.environment(run_of(recs))
    assert env["emulated"] is False and env["sdk_version"] is None
    assert env["device_engines_used"] == 3  # vec, mx, dma
    assert math.isnan(env["load_average_before"]) and math.isnan(env["clock_resolution_ns"])
    t = ag.trial_table(run_of(recs), {"point": "p"})
    d = d_row(ag.summarize(t, n_resamples=50))
    assert "load unknown" in d["env_warning"]
    # -1 is the runner's "unreadable".
    recs[0]["load_average_before"] = -1
    assert math.isnan(ag.environment(run_of(recs))["load_average_before"])


@pytest.mark.parametrize(
    "env, expect",
    [
        # quiet 8-core machine, 3 engines
        (
            dict(
                online_cores=8,
                device_engines_used=3,
                load_average_before=0.3,
                load_average_after=0.4,
                runner_wall_s=3.0,
            ),
            [],
        ),
        # loaded before: 4.5 > 0.5 x 8
        (
            dict(
                online_cores=8,
                device_engines_used=3,
                load_average_before=4.5,
                load_average_after=0.4,
                runner_wall_s=3.0,
            ),
            ["loaded before (1-min load 4.50 > 4.00"],
        ),
        # after a 10-minute run the runner's own 3 engines explain ~3 of the load
        (
            dict(
                online_cores=8,
                device_engines_used=3,
                load_average_before=0.1,
                load_average_after=3.2,
                runner_wall_s=600.0,
            ),
            [],
        ),
        # ... after a 3 s run they do not
        (
            dict(
                online_cores=8,
                device_engines_used=3,
                load_average_before=0.1,
                load_average_after=5.0,
                runner_wall_s=3.0,
            ),
            ["loaded after"],
        ),
        # 2 cores, 2 engines, about one core busy already
        (
            dict(
                online_cores=2,
                device_engines_used=2,
                load_average_before=0.84,
                load_average_after=0.84,
                runner_wall_s=2.0,
            ),
            ["fewer free cores than engines (2 cores - load 0.84 leaves ~1 for 2"],
        ),
        (
            dict(
                online_cores=2,
                device_engines_used=2,
                load_average_before=0.3,
                load_average_after=0.3,
                runner_wall_s=2.0,
            ),
            [],
        ),
        # more engines than cores (the runner says so)
        (
            dict(
                online_cores=2,
                device_engines_used=3,
                engines_exceed_cores=True,
                load_average_before=0.0,
                load_average_after=0.0,
                runner_wall_s=2.0,
            ),
            ["engines exceed cores (3 device engines on 2"],
        ),
        (dict(online_cores=4, device_engines_used=2, load_average_before=0.0, emulated=True), ["emulated (timings"]),
        # the runner's own warnings are listed; its engines-vs-cores warning
        # (found by its code) replaces ours instead of repeating it
        (
            dict(
                online_cores=2,
                device_engines_used=3,
                engines_exceed_cores=True,
                load_average_before=0.0,
                runner_warnings="3 device engines run on 2 online cores: engines time-share cores; spin x",
                runner_warning_codes="engines_exceed_cores; spin_wait_oversubscribed",
            ),
            ["runner: 3 device engines run on 2 online cores", "runner: spin x"],
        ),
        # the code decides, not the wording: a reworded text is still recognised ...
        (
            dict(
                online_cores=2,
                device_engines_used=3,
                engines_exceed_cores=True,
                load_average_before=0.0,
                runner_warnings="engines outnumber the CPUs",
                runner_warning_codes="engines_exceed_cores",
            ),
            ["runner: engines outnumber the CPUs"],
        ),
        # ... and an uncoded warning (an older runner) is not taken for it
        (
            dict(
                online_cores=2,
                device_engines_used=3,
                engines_exceed_cores=True,
                load_average_before=0.0,
                runner_warnings="3 device engines run on 2 online cores",
                runner_warning_codes="",
            ),
            ["engines exceed cores (3 device engines on 2", "runner: 3 device engines run on 2 online cores"],
        ),
        # the runner's own 200 ms sample of other work wins over the load average,
        # which still remembers the previous point's run in a sweep
        (
            dict(
                online_cores=2,
                device_engines_used=2,
                load_average_before=1.4,
                load_average_after=1.5,
                runner_wall_s=5.0,
                other_busy_cores_before=0.02,
                other_busy_cores_after=0.05,
            ),
            [],
        ),
        (
            dict(
                online_cores=2,
                device_engines_used=2,
                load_average_before=0.0,
                load_average_after=0.0,
                other_busy_cores_before=0.9,
                other_busy_cores_after=0.1,
            ),
            [
                "loaded before (other processes kept 0.90 cores busy > 0.50",
                "fewer free cores than engines (2 cores - 0.90 busy",
            ],
        ),
        (
            dict(online_cores=8, device_engines_used=3, other_busy_cores_before=0.1, other_busy_cores_after=2.5),
            ["loaded after (other processes kept 2.50 cores busy > 2.00"],
        ),
        (
            dict(
                online_cores=2,
                device_engines_used=3,
                engines_exceed_cores=True,
                other_busy_cores_before=0.0,
                other_busy_cores_after=0.0,
            ),
            ["engines exceed cores (3 device engines on 2"],
        ),
    ],
)
def test_environment_warning_rule(env, expect):
    got = ag.environment_warnings(env)
    assert len(got) == len(expect), got
    for g, e in zip(got, expect):
        assert e in g


def test_loaded_machine_warns_in_summary_and_report(synth, tmp_path):
    meta = {"online_cores": 2, "engines_exceed_cores": True, "load_average_before": 1.7, "device_engines_used": 3}
    _, s = summary(synth, meta=meta, end={"load_average_after": 1.9, "wall_ns": 10**9})
    w = d_row(s)["env_warning"]
    assert "loaded before (1-min load 1.70 > 1.00 = 0.5 x 2 cores)" in w
    assert "engines exceed cores" in w
    # Other work on the machine in every replicate (here the only one):
    # "machine too busy", naming why; the structural "engines exceed cores"
    # alone would not.
    assert d_row(s)["verdict_key"] == "machine-busy"
    assert d_row(s)["verdict"] == "machine too busy: 1 of 1 replicates disturbed"
    assert "loaded before" in d_row(s)["inconclusive_reason"]
    assert "engines exceed" not in d_row(s)["inconclusive_reason"]
    csv = tmp_path / "summary.csv"
    s.assign(point_id="sw/mvd/p", target="host").to_csv(csv, index=False)
    rows = report.write_verdicts(csv, tmp_path / "v.html", tmp_path / "v.csv")
    page = (tmp_path / "v.html").read_text()
    assert "loaded before (1-min load 1.70" in page
    assert "rerun the point on a quiet machine" in page  # next step
    assert list(rows["verdict"]) == ["machine too busy: 1 of 1 replicates disturbed"]
    assert rows.iloc[0]["inconclusive because"].startswith("loaded before")
    r = rows.iloc[0]
    # 2 cores: k = 2, bound = max(100, 240 / 2)
    assert r["T_serial / T_ideal / bound us"] == "240.0 / 100.0 / 120.0"
    assert r["D slowdown"].startswith("M 1.0")
    assert r["D/A"].startswith("2.349 [")
    env = report.write_environment(csv, None, tmp_path / "e.html")
    assert list(env["point"]) == ["sw/mvd/p"] and env.iloc[0]["online_cores"] == "2"
    assert "loaded before" in (tmp_path / "e.html").read_text()
    assert pd.read_csv(tmp_path / "v.csv").shape[0] == 1


def test_emulated_point_gets_no_verdict(synth):
    _, s = summary(synth, meta={"emulated": True})
    d = d_row(s)
    assert d["verdict_key"] == "emulated" and d["verdict"] == "not assessed (emulated)"
    assert d["verdict_matches"] == "" and "emulated" in d["env_warning"]
    assert bool(d["point_ok"])
    # A correctness failure still wins over "emulated".
    t, _ = summary(synth, meta={"emulated": True})
    t["check_ok"] = False
    assert d_row(ag.summarize(t, n_resamples=50))["verdict_key"] == "excluded"


def test_emulated_point_shows_no_timings_in_report(synth):
    from hxfuse.sweep import report

    _, s = summary(synth, meta={"emulated": True})
    rows = report.verdict_rows(s)
    r = rows.iloc[0]
    assert r["T_A us [95% CI]"] == "emulated: timings are not performance"
    assert r["T_D us [95% CI]"] == "" and r["D/A"] == "" and r["eta vs ideal"] == ""
    assert r["parallelism D [95% CI]"] == ""
    assert r["verdict"] == "not assessed (emulated)"
    # the same summary, not emulated, does show them
    _, s2 = summary(synth)
    assert report.verdict_rows(s2).iloc[0]["D/A"] != ""


def test_device_fallback_is_counted_and_withholds_the_verdict(synth):
    # a device run that fell back (allowed by an explicit build option) says
    # so in end.resources.fallbacks: shown in the summary, and no verdict
    _, s = summary(synth, end={"resources": {"fallbacks": 2, "udma": {"fallbacks": 2}}})
    d = d_row(s)
    assert d["device_fallbacks"] == 2
    assert "device fallbacks: 2" in d["env_warning"]
    assert d["verdict_key"] == "machine-busy" and "device fallbacks" in d["inconclusive_reason"]
    # a fallback measured something else: not called a busy machine
    assert d["verdict"] == "no clean replicate: 1 of 1 replicates disturbed"
    # the host writes resources with null fields: nothing to report
    _, s = summary(synth, end={"resources": {"fallbacks": None}})
    assert math.isnan(d_row(s)["device_fallbacks"]) and "fallback" not in d_row(s)["env_warning"]
