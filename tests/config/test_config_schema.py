"""Config validation: the default config, and one bad config per kind of error."""

import copy

import pytest
import yaml

from hxfuse.config import load as hxload
from hxfuse.config import schema as hxschema
from hxfuse.config import validate as hxvalidate
from hxfuse.config import points as hxpoints
from pipeline_util import REPO, TINY


def load_default():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def validate(cfg):
    return hxvalidate.validate(cfg, hxschema.load_schema())


def test_default_config_is_valid_and_fills_defaults():
    cfg = validate(load_default())
    pts = hxpoints.points(cfg)
    assert {p.workload for p in pts} == {"mv", "md", "mvd"}
    # one point per (sweep, workload, point): ratio 3 x 3, pressure 2 x 4, quota 1 x 2,
    # granularity 1 x 2
    n = sum(len(sw["workloads"]) * len(sw["points"]) for sw in cfg["sweeps"].values())
    assert n == 21 and len(pts) == n and len({p.id for p in pts}) == n
    assert {p.id.split("/")[0] for p in pts} == {"ratio", "pressure", "quota", "granularity"}
    assert cfg["defaults"]["wait"] == "spin-block"  # filled from the schema
    assert cfg["defaults"]["d_desc_rows"] == 64
    assert cfg["sweeps"]["ratio"]["log_x"] is True


def test_tiny_config_is_valid():
    cfg = validate(copy.deepcopy(TINY))
    assert len(hxpoints.points(cfg)) == 6


def mutate(path, value, base=None):
    cfg = copy.deepcopy(base or TINY)
    node = cfg
    for k in path[:-1]:
        node = node[k]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return cfg


DELETE = object()

BAD = {
    "unknown top-level key": (("colour",), "blue", r"config: unknown key\(s\) 'colour'"),
    "unknown nested key": (("run", "roundz"), 3, r"config\.run: unknown key\(s\) 'roundz'"),
    "unknown point key": (
        ("sweeps", "tiny", "points", 0, "m_shap"),
        [1, 2, 3],
        r"config\.sweeps\.tiny\.points\[0\]: unknown key\(s\) 'm_shap'",
    ),
    "wrong type": (("run", "rounds"), "ten", r"config\.run\.rounds: 'ten' is not of type 'integer'"),
    "zero trials": (("run", "rounds"), 0, r"config\.run\.rounds: 0 is less than the minimum of 1"),
    "unknown target": (("targets",), ["host", "phone"], r"config\.targets\[1\]: 'phone' is not one of"),
    "unknown group": (("run", "groups"), ["A", "E"], r"config\.run\.groups\[1\]: 'E' is not one of"),
    "unknown workload": (("sweeps", "tiny", "workloads"), ["mx"], r"config\.sweeps\.tiny\.workloads\[0\]"),
    "sweep value out of range": (
        ("sweeps", "tiny", "points", 1, "m_shape"),
        [64, 0, 64],
        r"config\.sweeps\.tiny\.points\[1\]\.m_shape\[1\]: 0 is less than the minimum of 1",
    ),
    "negative timeout": (("run", "timeout_s"), -1, r"config\.run\.timeout_s: -1 is less than or equal"),
    "no sweeps": (("sweeps",), {}, r"config\.sweeps: .*(non-empty|too few|should be non-empty)"),
    "missing points": (("sweeps", "tiny", "points"), DELETE, r"config\.sweeps\.tiny: 'points' is a required"),
    "bad point name": (
        ("sweeps", "tiny", "points", 0, "name"),
        "has space",
        r"config\.sweeps\.tiny\.points\[0\]\.name: 'has space' does not match",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_config_names_the_key(kind):
    path, value, pattern = BAD[kind]
    with pytest.raises(hxload.ConfigError, match=pattern):
        validate(mutate(path, value))


SEMANTIC = {
    "duplicate point name": (
        ("sweeps", "tiny", "points", 1, "name"),
        "small",
        r"points\[1\]\.name: duplicate point name 'small'",
    ),
    "duplicate x": (("sweeps", "tiny", "points", 1, "x"), 1, r"points\[1\]\.x: duplicate value"),
    "stride below row bytes": (
        ("defaults", "d_src_stride"),
        100,
        r"d_src_stride: 100 is smaller than the row bytes 512",
    ),
    "copy larger than scratch": (
        ("defaults", "d_shape"),
        [4096, 4096],
        r"scratch_bytes: 1048576 is less than the 16842752 bytes the runner plans",
    ),
    "calibrate absent task": (("sweeps", "tiny", "workloads"), ["mv"], None),
    "no group A": (("run", "groups"), ["B", "C", "D"], r"config\.run\.groups: must include A"),
    "log axis needs positive x": (("sweeps", "tiny", "log_x"), True, None),
}


@pytest.mark.parametrize("kind", sorted(SEMANTIC))
def test_semantic_errors(kind):
    path, value, pattern = SEMANTIC[kind]
    cfg = mutate(path, value)
    if kind == "calibrate absent task":
        cfg["sweeps"]["tiny"]["points"][0]["calibrate"] = {"D": 100}
        pattern = r"points\[0\]\.calibrate\.D: task D is in none of the workloads"
    if kind == "log axis needs positive x":
        cfg["sweeps"]["tiny"]["points"][0]["x"] = 0
        pattern = r"points\[0\]\.x: 0 must be > 0 because config\.sweeps\.tiny\.log_x is true"
    with pytest.raises(hxload.ConfigError, match=pattern):
        validate(cfg)


def test_all_errors_reported_at_once():
    cfg = mutate(("run", "rounds"), 0)
    cfg["run"]["warmup"] = -1
    with pytest.raises(hxload.ConfigError) as exc:
        validate(cfg)
    assert "config.run.rounds" in str(exc.value) and "config.run.warmup" in str(exc.value)


def test_point_hash_changes_only_for_the_changed_point():
    a = validate(copy.deepcopy(TINY))
    b = validate(mutate(("sweeps", "tiny", "points", 1, "m_shape"), [80, 80, 80]))
    ha = {p.id: hxpoints.point_hash(a, p) for p in hxpoints.points(a)}
    hb = {p.id: hxpoints.point_hash(b, p) for p in hxpoints.points(b)}
    changed = sorted(k for k in ha if ha[k] != hb[k])
    assert changed == ["tiny/md/big", "tiny/mv/big", "tiny/mvd/big"]
    assert hxpoints.config_hash(a) != hxpoints.config_hash(b)


def test_runner_args_follow_the_point():
    cfg = validate(copy.deepcopy(TINY))
    p = hxpoints.find_point(cfg, "host", "tiny", "md", "big")
    args = hxpoints.runner_args(cfg, p)
    assert args[args.index("--m-shape") + 1] == "64,64,64"
    assert args[args.index("--workloads") + 1] == "md"
    assert args[args.index("--rounds") + 1] == "4"
    table = hxpoints.point_table(cfg)
    assert list(table["point"][:2]) == ["small", "big"] and len(table) == 6
