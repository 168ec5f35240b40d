"""One source of parameter limits: hxfuse.config.RUNNER_LIMITS.

The schema's bounds must equal the table (checked on every validation), the
built runner must refuse each bound + 1 (and bound - 1 where that is a
number) and accept the bound itself, and every cross-field rule the runner
enforces is refused by validation first, naming the config key.  At 50ee96f
v_workers 16, v_passes 5000, rounds 5.0, more V workers than rows and an
mv-only sweep whose scratch is smaller than D's window all passed
validation and failed in the run job.
"""
import copy
import shutil
import subprocess

import pytest

import hxfuse.config as hc
from pipeline_util import REPO, TINY


def validate(cfg):
    return hc.validate(cfg, hc.load_schema())


def test_schema_bounds_equal_the_runner_table():
    assert hc.schema_limit_problems(hc.load_schema()) == []


def test_a_schema_that_drifts_is_refused():
    schema = hc.load_schema()
    schema["$defs"]["point_props"]["v_workers"]["maximum"] = 64
    with pytest.raises(hc.ConfigError, match=r"schema bounds of v_workers \[1, 64\] differ from "
                                             r"the runner's --v-workers \[1, 8\]"):
        hc.validate(copy.deepcopy(TINY), schema)


@pytest.fixture(scope="module")
def runner():
    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("needs make and a C compiler: apt-get install build-essential")
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "-j2"], check=True, capture_output=True)
    return REPO / "kernels" / "build" / "host" / "hxrun"


def _value(key, v):
    """The option's value with v in the position the limit applies to."""
    if key == "m_shape":
        return f"{v},1,1"
    if key in ("v_shape", "d_shape"):
        return f"{v},1"
    return str(v)


STRIDE = (["--d-shape", "1,8", "--d-src-stride", "4"], "--d-src-stride: must be >= row bytes")
WORKERS = (["--d-shape", "1,1", "--v-shape", "1,1", "--v-workers", "2"],
           "--v-workers: more vector workers than rows")


def _parse(runner, tmp_path, opt, value):
    """Ask the runner to parse opt=value without running anything: a second
    error that the runner checks only after parsing every option (D's stride
    below its row bytes, or more V workers than rows) stops it.  Returns
    (error line, the sentinel's message)."""
    args, msg = WORKERS if opt in ("--d-src-stride", "--d-shape") else STRIDE
    r = subprocess.run([str(runner), "--out", str(tmp_path / "x.jsonl"), *args, opt, value],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, (opt, value, r.stdout, r.stderr)
    return r.stderr.splitlines()[0], msg


@pytest.mark.parametrize("key", sorted(hc.RUNNER_LIMITS))
def test_runner_refuses_each_bound_plus_one(runner, tmp_path, key):
    opt, lo, hi = hc.RUNNER_LIMITS[key]
    # below the lower bound only where that is a non-negative number (the
    # schema refuses negatives; the runner's strtoull would wrap a negative seed)
    for bad in [v for v in (hi + 1, lo - 1) if v >= 0]:
        err, _ = _parse(runner, tmp_path, opt, _value(key, bad))
        assert err.startswith(f"hxrun: error: {opt}:"), (key, bad, err)
    # each bound itself is accepted: parsing goes on to the sentinel's error
    for good in (lo, hi):
        err, sentinel = _parse(runner, tmp_path, opt, _value(key, good))
        assert sentinel in err, (key, good, err)


@pytest.mark.parametrize("key,path,value,message", [
    ("v_workers", ("defaults", "v_workers"), 16, r"config\.defaults\.v_workers: 16 is greater than the maximum of 8"),
    ("v_passes", ("defaults", "v_passes"), 5000, r"config\.defaults\.v_passes: 5000 is greater than the maximum of 4096"),
    ("rounds", ("run", "rounds"), 5.0, r"config\.run\.rounds: 5\.0 is not of type 'integer'"),
    ("seed", ("run", "seed"), 2 ** 64, r"config\.run\.seed: .* is greater than the maximum"),
])
def test_values_the_runner_refuses_are_refused_naming_the_key(key, path, value, message):
    cfg = copy.deepcopy(TINY)
    node = cfg
    for k in path[:-1]:
        node = node.setdefault(k, {})
    node[path[-1]] = value
    with pytest.raises(hc.ConfigError, match=message):
        validate(cfg)


def test_more_v_workers_than_rows_is_refused():
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][0].update({"v_shape": [4, 256], "v_workers": 8})
    with pytest.raises(hc.ConfigError, match=r"points\[0\]\.v_workers: 8 vector workers for 4 rows"):
        validate(cfg)


def test_mv_only_sweep_still_needs_room_for_ds_window():
    """The runner plans D's scratch window whatever the workload."""
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["workloads"] = ["mv"]
    cfg["defaults"].update({"v_variant": "compute", "d_shape": [1024, 2048], "scratch_bytes": 65536})
    with pytest.raises(hc.ConfigError, match=r"points\[0\]\.scratch_bytes: 65536 is less than the "
                                             r"2097152 bytes the runner plans for D's window"):
        validate(cfg)


@pytest.mark.parametrize("value,message", [
    ({"host": 1, "gpu": 0}, r"affinity\.gpu: unknown engine"),
    ({"mx": -1}, r"affinity\.mx: -1 must be an integer core id"),
    ({"mx": 1.5}, r"affinity\.mx: 1\.5 must be an integer core id"),
    ({"vec": 4096}, r"affinity\.vec: 4096 must be an integer core id"),
    ({"dma": 1000}, r"affinity\.dma: core 1000 does not exist on this machine"),
    ("pinned", r"affinity: 'pinned' must be spread, none or a map"),
])
def test_bad_affinity_is_refused(value, message):
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][1]["affinity"] = value
    with pytest.raises(hc.ConfigError, match=r"points\[1\]\." + message):
        validate(cfg)


def test_affinity_reaches_the_runner_arguments():
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][0]["affinity"] = {"dma": 0, "host": 1, "vec1": 0, "vec": 1, "mx": 0}
    cfg["sweeps"]["tiny"]["points"][1]["affinity"] = "none"
    cfg = validate(cfg)
    a = hc.runner_args(cfg, hc.find_point(cfg, "host", "tiny", "mv", "small"))
    assert a[a.index("--affinity") + 1] == "host=1,vec=1,mx=0,dma=0,vec1=0"
    b = hc.runner_args(cfg, hc.find_point(cfg, "host", "tiny", "mv", "big"))
    assert b[b.index("--affinity") + 1] == "none"
    plain = validate(copy.deepcopy(TINY))
    c = hc.runner_args(plain, hc.find_point(plain, "host", "tiny", "md", "big"))
    assert c[c.index("--affinity") + 1] == "spread"  # the schema's default


def test_old_run_affinity_key_gives_a_clear_message():
    cfg = copy.deepcopy(TINY)
    cfg["run"]["affinity"] = "spread"
    with pytest.raises(hc.ConfigError, match=r"config\.run\.affinity: placement is now a point "
                                             r"parameter: write `affinity: <value>` under `defaults`"):
        validate(cfg)


def test_replicates_seeds_and_bounds():
    cfg = copy.deepcopy(TINY)
    cfg["run"]["replicates"] = 3
    cfg = validate(cfg)
    p = hc.find_point(cfg, "host", "tiny", "mv", "small")
    seeds = [hc.runner_args(cfg, p, r)[hc.runner_args(cfg, p, r).index("--seed") + 1] for r in range(3)]
    assert seeds == ["3", "4", "5"]
    assert len({hc.point_hash(cfg, p, r) for r in range(3)}) == 3
    with pytest.raises(KeyError, match="no replicate 3"):
        hc.runner_args(cfg, p, 3)
    assert validate(copy.deepcopy({**TINY, "run": {}}))["run"]["replicates"] == 3  # default


def test_min_effect_in_the_schema():
    cfg = validate(copy.deepcopy(TINY))
    assert cfg["analysis"]["min_effect"] == 0.03
    for bad in (0, 0.5, -0.1):
        c = copy.deepcopy(TINY)
        c["analysis"] = {"min_effect": bad}
        with pytest.raises(hc.ConfigError, match=r"config\.analysis\.min_effect"):
            validate(c)
