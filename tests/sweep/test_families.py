"""The sweep families: study files, the measured x, the control-overhead
share and the family figure's data (hxfuse.sweep.families), with known answers."""

import copy
import math

import pandas as pd
import pytest

from hxfuse.config import load as hxload
from hxfuse.config import validate as hxvalidate
from hxfuse.config import points as hxpoints
from hxfuse.sweep import families as fam
from pipeline_util import REPO, TINY

FAMILY_STUDIES = ("granularity", "ratio", "share", "bandwidth", "wait")


def _study(name):
    cfg = hxload.load_yaml(REPO / "config.yaml")
    cfg["study"] = name
    return hxvalidate.validate(cfg)


@pytest.mark.parametrize("name", FAMILY_STUDIES)
def test_each_family_study_is_valid_and_names_its_family(name):
    cfg = _study(name)
    assert cfg["sweeps"] and all(sw.get("family") for sw in cfg["sweeps"].values())
    assert {sw["family"] for sw in cfg["sweeps"].values()} == {name}


def test_full_study_is_every_family_sweep_exactly_once():
    full = _study("full")
    want = {}
    for name in FAMILY_STUDIES:
        want.update(_study(name)["sweeps"])
    assert full["sweeps"] == want
    assert len(hxpoints.points(full)) == sum(len(hxpoints.points(_study(n))) for n in FAMILY_STUDIES)


def test_family_points_use_the_option_they_vary():
    """Each variant differs from its base in the option it names (the runner
    arguments show it), so a variant never measures the base by mistake."""

    def args(cfg, sweep, point, workload="mvd"):
        return hxpoints.runner_args(cfg, hxpoints.find_point(cfg, "host", sweep, workload, point))

    wait = _study("wait")
    assert args(wait, "wait", "spin")[args(wait, "wait", "spin").index("--wait") + 1] == "spin"
    assert "--window" in args(wait, "wait", "window1") and "--window" not in args(wait, "wait", "base")
    assert "--d-buffers" in args(wait, "wait", "buffers2")
    rel = args(wait, "wait", "release_entry_end")
    assert rel[rel.index("--v-release") + 1] == "at-entry-end"
    share = _study("share")
    assert "--m-tile" in args(share, "share", "tile64") and "--m-tile" not in args(share, "share", "base")
    bw = _study("bandwidth")
    a = args(bw, "bandwidth", "stream_bw", "mv")
    assert a[a.index("--antagonist") + 1] == "1" and a[a.index("--v-variant") + 1] == "stream"
    assert "--antagonist" not in args(bw, "bandwidth", "stream", "mv")


def _write_study(tmp_path, name, doc):
    import yaml

    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_include_cycles_and_duplicate_sweeps_name_the_file(tmp_path):
    a = _write_study(tmp_path, "a", {"include": [str(tmp_path / "b.yaml")]})
    _write_study(tmp_path, "b", {"include": [str(a)]})
    cfg = copy.deepcopy(TINY)
    del cfg["sweeps"]
    cfg["study"] = str(a)
    with pytest.raises(hxload.ConfigError, match=r"a\.yaml: includes itself"):
        hxvalidate.validate(copy.deepcopy(cfg))
    dup = _write_study(tmp_path, "dup", {"include": ["wait"], "sweeps": {"wait": TINY["sweeps"]["tiny"]}})
    cfg["study"] = str(dup)
    with pytest.raises(hxload.ConfigError, match=r"dup\.yaml: sweep 'wait' is given by both .*wait\.yaml"):
        hxvalidate.validate(copy.deepcopy(cfg))
    bad = _write_study(tmp_path, "bad", {"include": ["nosuch"]})
    cfg["study"] = str(bad)
    with pytest.raises(hxload.ConfigError, match=r"bad\.yaml: no study file .*nosuch\.yaml"):
        hxvalidate.validate(copy.deepcopy(cfg))


def test_bad_family_keys_stop_naming_the_key():
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["family"] = "granular"
    cfg["sweeps"]["tiny"]["x_measured"] = "M/X"
    with pytest.raises(hxload.ConfigError) as err:
        hxvalidate.validate(cfg)
    assert "config.sweeps.tiny.family: 'granular' is not one of" in str(err.value)
    assert "config.sweeps.tiny.x_measured: 'M/X' is not one of" in str(err.value)


# --------------------------------------------------------------------------
# pure functions, known answers


def _summary():
    """Two points of sweep s (mvd), alone medians known: p1 M 2 ms, V 1 ms,
    D 4 ms; p2 M 1 ms, V 1 ms, D 0.5 ms."""
    rows = []
    alone = {"p1": {"M": 2e6, "V": 1e6, "D": 4e6}, "p2": {"M": 1e6, "V": 1e6, "D": 0.5e6}}
    for i, (pt, t) in enumerate(alone.items()):
        pid = f"s/mvd/{pt}"
        for task, v in t.items():
            rows.append(
                {
                    "sweep": "s",
                    "point_id": pid,
                    "point": pt,
                    "x": i + 1.0,
                    "label": pt.upper(),
                    "workload": task,
                    "group": "alone",
                    f"{task}_duration_ns": v,
                }
            )
        for g, mk, co in (("A", 8e6, 80e3), ("C", 7e6, 50e3), ("D", 5e6, 50e3)):
            rows.append(
                {
                    "sweep": "s",
                    "point_id": pid,
                    "point": pt,
                    "x": i + 1.0,
                    "label": pt.upper(),
                    "workload": "mvd",
                    "group": g,
                    "makespan_ns": mk * (i + 1),
                    "control_overhead_ns": co,
                    "control_overhead_lo_ns": co * 0.9,
                    "control_overhead_hi_ns": co * 1.1,
                    "speedup_over_A": 1.5,
                    "speedup_over_A_lo": 1.4,
                    "speedup_over_A_hi": 1.6,
                    "point_ok": pt != "p2" or g != "D",
                }
            )
    return pd.DataFrame(rows)


def test_control_share_is_overhead_over_makespan():
    s = fam.add_control_share(_summary())
    a1 = s[(s["point"] == "p1") & (s["group"] == "A")].iloc[0]
    assert a1["control_overhead_share"] == pytest.approx(80e3 / 8e6)
    assert a1["control_overhead_share_lo"] == pytest.approx(72e3 / 8e6)
    d2 = s[(s["point"] == "p2") & (s["group"] == "D")].iloc[0]
    assert d2["control_overhead_share"] == pytest.approx(50e3 / 10e6)
    assert s.loc[s["group"] == "alone", "control_overhead_share"].isna().all()
    assert "control_overhead_share" not in _summary()  # the input is not changed


@pytest.mark.parametrize(
    "how,p1,p2",
    [
        ("M/V", 2.0, 1.0),
        ("M/D", 0.5, 2.0),
        ("M/partners", 0.5, 1.0),
        ("longest", 4.0, 1.0),
    ],
)
def test_measured_x_from_the_points_own_alone_medians(how, p1, p2):
    xs = fam.measured_x(_summary(), "s", how).set_index("point")
    assert xs.loc["p1", "x"] == pytest.approx(p1) and xs.loc["p2", "x"] == pytest.approx(p2)
    assert list(xs["x_nominal"]) == [1.0, 2.0] and list(xs["label"]) == ["P1", "P2"]


def test_measured_value_needs_the_tasks_of_the_workload():
    assert math.isnan(fam.measured_value({"M": 1.0}, "mv", "M/V"))
    assert fam.measured_value({"M": 3.0, "V": 1.0, "D": 9.0}, "mv", "M/partners") == 3.0  # D not in mv
    with pytest.raises(ValueError, match="x_measured"):
        fam.measured_value({"M": 1.0, "V": 1.0}, "mv", "V/M")


def test_family_long_uses_the_measured_x_and_drops_failed_speedups():
    s = fam.add_control_share(_summary())
    long = fam.family_long(s, "s", {"family": "granularity", "x_measured": "longest"})
    sp = long[long["panel"] == "speedup"]
    # D/A of p1 only (p2's D row failed its check), C/A of both
    assert sorted(sp.loc[sp["series"] == "D/A", "x"]) == [4.0]
    assert sorted(sp.loc[sp["series"] == "C/A", "x"]) == [1.0, 4.0]
    sec = long[long["panel"] == "secondary0"]
    assert set(sec["series"]) == {"A", "C", "D"}
    a = sec[(sec["series"] == "A")].set_index("point")
    assert a.loc["p1", "value"] == pytest.approx(0.01) and a.loc["p1", "x_nominal"] == 1.0


def test_families_tex_has_one_captioned_figure_per_family_sweep():
    cfg = _study("full")
    tex = fam.families_tex(["host"], cfg["sweeps"], 0.03)
    assert tex.count(r"\begin{figure}") == len(cfg["sweeps"]) == 6
    for s in cfg["sweeps"]:
        assert f"figures/family_{s}.pdf" in tex
    assert r"ratio\_v" in tex and "1 $\\pm$ 0.03" in tex
    assert "no family sweep" in fam.families_tex(["host"], {"x": {"title": "t"}}, 0.03)
