"""Fixed vs searched: the space's validation, the budgeted candidates, regret and its verdict.

Known answers: a parameter or value the runner does not have is refused
before anything runs, naming it; a budget evaluates exactly that many
distinct candidates, the same ones for the same seed; regret on paired
makespans with a known ratio equals it (and a drift common to both sides of
each pair does not widen its interval); equal sides read "as good as
searched", a fixed default 20% slower reads regret 0.2.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from hxfuse.config import load as hxload
from hxfuse.config import schema as hxschema
from hxfuse.config import validate as hxvalidate
from hxfuse.search import compare as search
from hxfuse.search import space as searchspace

BASE = {
    "targets": ["host"],
    "defaults": {
        "m_shape": [48, 48, 48],
        "v_shape": [32, 256],
        "v_passes": 1,
        "d_shape": [64, 512],
        "scratch_bytes": 1048576,
    },
    "sweeps": {"s": {"workloads": ["mvd"], "points": [{"name": "p", "x": 0}]}},
}
ONE_CORE = {"host": 0, "vec": 0, "mx": 0, "dma": 0}


def cfg_with(search_cfg: dict, name: str = "t") -> dict:
    cfg = copy.deepcopy(BASE)
    cfg["searches"] = {name: search_cfg}
    return cfg


def problems(search_cfg: dict) -> str:
    with pytest.raises(hxload.ConfigError) as exc:
        hxvalidate.validate(cfg_with(search_cfg))
    return str(exc.value)


# --------------------------------------------------------------------------
# the space is checked before any work


def test_unknown_parameter_is_refused_naming_it():
    msg = problems({"space": {"v_worker": [1, 2]}, "budget": {"candidates": 2}})
    assert "config.searches.t.space: unknown key(s) 'v_worker'" in msg
    assert "v_workers" in msg  # the allowed keys are listed


def test_value_the_runner_refuses_is_refused_naming_it():
    msg = problems(
        {"space": {"v_workers": [1, 9], "m_tile": [64, 63], "wait": ["spin", "nap"]}, "budget": {"candidates": 2}}
    )
    assert "config.searches.t.space.v_workers[1]: 9 is greater than the maximum of 8" in msg
    assert "config.searches.t.space.m_tile[1]: 63 is not a multiple of 8" in msg
    assert "config.searches.t.space.wait[1]: 'nap' is not one of ['spin', 'spin-block']" in msg


def test_a_value_listed_twice_is_refused():
    msg = problems({"space": {"window": [1, 2, 1]}, "budget": {"candidates": 2}})
    assert "config.searches.t.space.window[2]: 1 is listed twice (also [0])" in msg


def test_an_impossible_candidate_is_refused_naming_it():
    # a placement naming V's second worker is impossible with one worker
    msg = problems({"space": {"v_workers": [1, 2], "affinity": [{**ONE_CORE, "vec1": 0}]}, "budget": {"candidates": 2}})
    assert (
        "config.searches.t.space, candidate (v_workers=1 affinity={host:0,vec:0,mx:0,dma:0,vec1:0}): "
        "affinity.vec1: no such vector worker: v_workers is 1"
    ) in msg
    assert "v_workers=2" not in msg
    msg = problems({"space": {"v_workers": [1]}, "fixed": {"d_desc_rows": 65}, "budget": {"candidates": 1}})
    assert "config.searches.t.fixed.d_desc_rows: 65 exceeds the 64 rows of d_shape" in msg


def test_missing_budget_and_empty_space_are_refused():
    assert "config.searches.t: 'budget' is a required property" in problems({"space": {"v_workers": [1]}})
    assert "config.searches.t.space" in problems({"space": {}, "budget": {"candidates": 1}})
    assert "config.searches.t.space.v_workers" in problems({"space": {"v_workers": []}, "budget": {"candidates": 1}})


def test_space_schema_lists_every_runner_option():
    """Every point parameter but calibrate may be searched, and the schema
    says so: the two cannot drift apart."""
    schema = hxschema.load_schema()
    space = schema["properties"]["searches"]["additionalProperties"]["properties"]["space"]
    assert sorted(space["properties"]) == sorted(searchspace.SPACE_KEYS)
    assert "calibrate" not in searchspace.SPACE_KEYS


def test_study_file_gives_searches(tmp_path):
    study = tmp_path / "st.yaml"
    study.write_text(
        yaml.safe_dump(
            {"sweeps": BASE["sweeps"], "searches": {"u": {"space": {"v_workers": [1, 2]}, "budget": {"candidates": 2}}}}
        )
    )
    cfg = copy.deepcopy(BASE)
    del cfg["sweeps"]
    cfg["study"] = str(study)
    hxvalidate.validate(cfg)
    assert list(cfg["searches"]) == ["u"]
    # defaults filled
    assert cfg["searches"]["u"]["confirm"] == {"pairs": 3, "rounds": 20, "warmup": 2}
    assert cfg["searches"]["u"]["workload"] == "mvd"
    cfg = copy.deepcopy(BASE)
    del cfg["sweeps"]
    cfg["study"] = str(study)
    cfg["searches"] = {"u": {"space": {"v_workers": [1]}, "budget": {"candidates": 1}}}
    with pytest.raises(hxload.ConfigError, match="'u' given by both the study and the config"):
        hxvalidate.validate(cfg)
    # a problem inside the study file names the file
    study.write_text(
        yaml.safe_dump(
            {"sweeps": BASE["sweeps"], "searches": {"u": {"space": {"v_workers": [1, 0]}, "budget": {"candidates": 2}}}}
        )
    )
    cfg = copy.deepcopy(BASE)
    del cfg["sweeps"]
    cfg["study"] = str(study)
    with pytest.raises(hxload.ConfigError) as exc:
        hxvalidate.validate(cfg)
    assert f"{study}: searches.u.space.v_workers[1]: 0 is less than the minimum of 1" in str(exc.value)


# --------------------------------------------------------------------------
# the budget


SPACE = {
    "affinity": ["spread", "none", ONE_CORE],
    "v_workers": [1, 2, 3],
    "m_tile": [None, 64, 1024],
    "window": [1, 2, "all"],
}


def test_combo_at_enumerates_the_space_once():
    size = searchspace.space_size(SPACE)
    assert size == 81
    seen = {json.dumps(searchspace.combo_at(SPACE, i), sort_keys=True) for i in range(size)}
    assert len(seen) == size
    with pytest.raises(IndexError):
        searchspace.combo_at(SPACE, size)


def test_budget_evaluates_exactly_that_many_deterministic_for_a_seed():
    cfg = cfg_with({"space": SPACE, "budget": {"candidates": 7, "rounds": 5}, "seed": 11})
    hxvalidate.validate(cfg)
    plan = searchspace.plan(cfg, "t", "host")
    assert len(plan["candidates"]) == 7 and not plan["exhaustive"]
    values = [json.dumps(c["values"], sort_keys=True) for c in plan["candidates"]]
    assert len(set(values)) == 7
    assert [c["id"] for c in plan["candidates"]] == [f"c{i}" for i in range(7)]
    again = searchspace.plan(copy.deepcopy(cfg), "t", "host")
    assert [c["args"] for c in again["candidates"]] == [c["args"] for c in plan["candidates"]]
    other = copy.deepcopy(cfg)
    other["searches"]["t"]["seed"] = 12
    assert [c["index"] for c in searchspace.plan(other, "t", "host")["candidates"]] != [
        c["index"] for c in plan["candidates"]
    ]
    # every candidate runs group D only with the search's rounds and seed
    for c in plan["candidates"]:
        a = c["args"]
        assert a[a.index("--groups") + 1] == "D" and a[a.index("--rounds") + 1] == "5"
        assert a[a.index("--seed") + 1] == "11"
        assert a[a.index("--v-workers") + 1] == str(c["values"]["v_workers"])
    # the confirmation: groups A, C, D, pair k with seed + 1 + k, same on both sides
    fa = plan["fixed"]["confirm_args"]
    assert len(fa) == 3
    for k, a in enumerate(fa):
        assert a[a.index("--groups") + 1] == "A,C,D" and a[a.index("--seed") + 1] == str(12 + k)
        b = plan["candidates"][0]["confirm_args"][k]
        assert b[b.index("--seed") + 1] == str(12 + k)


def test_a_space_within_the_budget_is_searched_exhaustively():
    space = {"v_workers": [1, 2], "affinity": ["spread", ONE_CORE]}
    cfg = cfg_with({"space": space, "budget": {"candidates": 10}})
    hxvalidate.validate(cfg)
    plan = searchspace.plan(cfg, "t", "host")
    assert plan["exhaustive"] and len(plan["candidates"]) == 4
    # canonical order (POINT_KEYS): v_workers before affinity, the last fastest
    assert [c["label"] for c in plan["candidates"]] == [
        "v_workers=1 affinity=spread",
        "v_workers=1 affinity={host:0,vec:0,mx:0,dma:0}",
        "v_workers=2 affinity=spread",
        "v_workers=2 affinity={host:0,vec:0,mx:0,dma:0}",
    ]
    assert plan["fixed"]["in_space"] and plan["fixed"]["label"] == "fixed: v_workers=1 affinity=spread"


# --------------------------------------------------------------------------
# selection


def test_select_ignores_failed_candidates_and_the_fixed_reference():
    t = pd.DataFrame(
        {
            "id": ["c0", "c1", "c2", "fixed"],
            "index": [0, 1, 2, -1],
            "status": ["ok", "failed", "ok", "ok"],
            "d_median_ns": [5.0, np.nan, 6.0, 1.0],
        }
    )
    assert search.select(t) == "c0"
    assert search.select(t.assign(status="failed")) is None
    row = search.candidate_row(
        {"id": "c1", "index": 1, "label": "x"},
        [1.0, 2.0, 3.0],
        {"status": "failed", "reasons": ["M: max error 1 > tol"]},
        {},
        0.5,
    )
    assert row["status"] == "failed" and np.isnan(row["d_median_ns"]) and row["n"] == 0


# --------------------------------------------------------------------------
# regret


def long_table(fixed: np.ndarray, best: np.ndarray) -> pd.DataFrame:
    """Tidy confirmation rows: arrays (pairs, rounds) of D makespans."""
    rows = []
    for side, arr in (("fixed", fixed), ("best", best)):
        for k in range(arr.shape[0]):
            for r in range(arr.shape[1]):
                rows.append({"side": side, "pair": k, "group": "D", "round": r, "makespan_ns": float(arr[k, r])})
                # A and C 1.5 and 1.2 times D in every round
                rows.append({"side": side, "pair": k, "group": "A", "round": r, "makespan_ns": 1.5 * float(arr[k, r])})
                rows.append({"side": side, "pair": k, "group": "C", "round": r, "makespan_ns": 1.2 * float(arr[k, r])})
    return pd.DataFrame(rows)


def test_regret_of_a_known_ratio_is_that_ratio_and_drift_cancels():
    # each pair drifts (x1, x1.3, x0.8, x1.15) alike on both sides; the fixed
    # default is exactly 1.2 x the best within every pair
    drift = np.array([1.0, 1.3, 0.8, 1.15])[:, None]
    best = 4e6 * drift * np.ones((4, 10))
    est = search.regret(long_table(1.2 * best, best), n_resamples=500, seed=3)
    assert est.value == pytest.approx(0.2)
    assert est.lo == pytest.approx(0.2) and est.hi == pytest.approx(0.2)
    assert est.n == 4
    sp = search.speedups(long_table(1.2 * best, best), "best", n_resamples=200)
    assert sp["D/A"].value == pytest.approx(1.5) and sp["D/C"].value == pytest.approx(1.2)


def test_fixed_equal_to_best_is_as_good_as_searched():
    rng = np.random.default_rng(5)
    drift = np.array([1.0, 1.2, 0.9, 1.1, 1.05])[:, None]
    best = 4e6 * drift * rng.lognormal(0, 0.01, (5, 40))
    fixed = 4e6 * drift * rng.lognormal(0, 0.01, (5, 40))
    res = search.confirmation(long_table(fixed, best), [], [], min_effect=0.03, n_resamples=1000)
    assert abs(res["regret"]["value"]) < 0.01
    assert -0.03 <= res["regret"]["lo"] and res["regret"]["hi"] <= 0.03
    assert res["verdict"] == "fixed~best"
    assert res["verdict_text"] == "the fixed default is as good as searched"


def test_fixed_twenty_percent_slower_gives_regret_point_two():
    rng = np.random.default_rng(6)
    drift = np.array([1.0, 1.2, 0.9, 1.1, 1.05])[:, None]
    best = 4e6 * drift * rng.lognormal(0, 0.01, (5, 40))
    fixed = 1.2 * 4e6 * drift * rng.lognormal(0, 0.01, (5, 40))
    res = search.confirmation(long_table(fixed, best), [], [], min_effect=0.03, n_resamples=1000)
    assert res["regret"]["value"] == pytest.approx(0.2, abs=0.01)
    assert res["regret"]["lo"] <= 0.2 <= res["regret"]["hi"]
    assert res["verdict"] == "fixed>best"
    # D/A of each side is 1.5 by construction
    assert res["best"]["D/A"]["value"] == pytest.approx(1.5)
    assert res["fixed"]["D/C"]["value"] == pytest.approx(1.2)


def test_verdict_edges_and_inconclusive_first():
    E = search.st.Estimate
    assert search.regret_verdict(E(0.0, -0.02, 0.02, 3), 0.03)[0] == "fixed~best"
    assert search.regret_verdict(E(0.2, 0.1, 0.3, 3), 0.03)[0] == "fixed>best"
    assert search.regret_verdict(E(-0.2, -0.3, -0.1, 3), 0.03)[0] == "fixed<best"
    assert search.regret_verdict(E(0.02, -0.01, 0.05, 3), 0.03)[0] == "undetermined"
    key, text = search.regret_verdict(E(0.0, -0.02, 0.02, 3), 0.03, ["fixed pair 1: loaded before"])
    assert key == "inconclusive" and "loaded before" in text
    res = search.confirmation(
        long_table(np.ones((2, 3)), np.ones((2, 3))), ["best pair 0"], [], min_effect=0.03, n_resamples=100
    )
    assert res["verdict"] == "inconclusive" and "correctness check failed: best pair 0" in res["verdict_text"]


def test_a_candidate_whose_run_failed_is_kept_failed_with_its_reason(tmp_path):
    """hxfuse.search.confirm.mark_failed keeps the run's FAILED line; the selection
    lists the candidate as failed and chooses nothing from it."""
    from hxfuse.search import confirm as searchrun

    cfg = cfg_with({"space": {"v_workers": [1]}, "budget": {"candidates": 1}})
    hxvalidate.validate(cfg)
    plan = searchspace.plan(cfg, "t", "host")
    files = []
    for cid in ("c0", "fixed"):
        log = tmp_path / f"{cid}.log"
        log.write_text(
            f"hxfuse: point host/search-t/mvd/{cid}/rep0 FAILED: runner timed out after "
            "0.5 s (config run.timeout_s) and was killed; no result kept\n"
        )
        out = [str(tmp_path / f"{cid}.jsonl"), str(tmp_path / f"{cid}.prov.json"), str(tmp_path / cid)]
        assert searchrun.mark_failed({"point": cid}, ["--x"], *out, str(log)) == 0
        files.append(out)
    doc = search.write_search(
        plan,
        [f[0] for f in files],
        [f[2] for f in files],
        [f[1] for f in files],
        str(tmp_path / "s.json"),
        str(tmp_path / "c.csv"),
        1e-4,
        1e-5,
        {"bootstrap": 100, "ci": 0.95, "seed": 0},
    )
    assert doc["best"] is None
    assert [f["id"] for f in doc["failed"]] == ["c0", "fixed"]
    assert doc["failed"][0]["reasons"].startswith("runner timed out after 0.5 s")
    assert all(c["d_median_ns"] is None for c in doc["candidates"])
