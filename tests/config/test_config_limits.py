"""One source of parameter limits: hxfuse.runner.cli.RUNNER_LIMITS (the table of hxrun's options).

The schema's bounds must equal the table (checked on every validation), the
built runner must refuse each bound + 1 (and bound - 1 where that is a
number) and accept the bound itself, and every cross-field rule the runner
enforces is refused by validation first, naming the config key.  At 50ee96f
v_workers 16, v_passes 5000, rounds 5.0, more V workers than rows and an
mv-only sweep whose scratch is smaller than D's window all passed
validation and failed in the run job.
"""

import copy
import re
import shutil
import subprocess

import pytest
from pipeline_util import REPO, TINY

from hxfuse.config import load as hxload
from hxfuse.config import schema as hxschema
from hxfuse.config import validate as hxvalidate
from hxfuse.config import points as hxpoints
from hxfuse.runner import cli as hxrunnercli


def validate(cfg):
    return hxvalidate.validate(cfg, hxschema.load_schema())


def test_schema_bounds_equal_the_runner_table():
    assert hxschema.schema_limit_problems(hxschema.load_schema()) == []


def test_a_schema_that_drifts_is_refused():
    schema = hxschema.load_schema()
    schema["$defs"]["point_props"]["v_workers"]["maximum"] = 64
    with pytest.raises(
        hxload.ConfigError,
        match=r"schema bounds of v_workers \[1, 64\] differ from "
        r"the runner's --v-workers \[1, 8\]",
    ):
        hxvalidate.validate(copy.deepcopy(TINY), schema)


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
WORKERS = (["--d-shape", "1,1", "--v-shape", "1,1", "--v-workers", "2"], "--v-workers: more vector workers than rows")


def _parse(runner, tmp_path, opt, value):
    """Ask the runner to parse opt=value without running anything: a second
    error that the runner checks only after parsing every option (D's stride
    below its row bytes, or more V workers than rows) stops it.  Returns
    (error line, the sentinel's message)."""
    args, msg = WORKERS if opt in ("--d-src-stride", "--d-shape") else STRIDE
    r = subprocess.run(
        [str(runner), "--out", str(tmp_path / "x.jsonl"), *args, opt, value], capture_output=True, text=True, timeout=30
    )
    assert r.returncode == 2, (opt, value, r.stdout, r.stderr)
    return r.stderr.splitlines()[0], msg


@pytest.mark.parametrize("key", sorted(hxrunnercli.RUNNER_LIMITS))
def test_runner_refuses_each_bound_plus_one(runner, tmp_path, key):
    opt, lo, hi = hxrunnercli.RUNNER_LIMITS[key]
    # below the lower bound only where that is a non-negative number (the
    # schema refuses negatives; the runner's strtoull would wrap a negative seed)
    for bad in [v for v in (hi + 1, lo - 1) if v >= 0]:
        err, _ = _parse(runner, tmp_path, opt, _value(key, bad))
        assert err.startswith(f"hxrun: error: {opt}:"), (key, bad, err)
    # each bound itself is accepted: parsing goes on to the sentinel's error
    for good in (lo, hi):
        err, sentinel = _parse(runner, tmp_path, opt, _value(key, good))
        assert sentinel in err, (key, good, err)


@pytest.mark.parametrize(
    "key,path,value,message",
    [
        (
            "v_workers",
            ("defaults", "v_workers"),
            16,
            r"config\.defaults\.v_workers: 16 is greater than the maximum of 8",
        ),
        (
            "v_passes",
            ("defaults", "v_passes"),
            5000,
            r"config\.defaults\.v_passes: 5000 is greater than the maximum of 4096",
        ),
        ("rounds", ("run", "rounds"), 5.0, r"config\.run\.rounds: 5\.0 is not of type 'integer'"),
        ("seed", ("run", "seed"), 2**64, r"config\.run\.seed: .* is greater than the maximum"),
    ],
)
def test_values_the_runner_refuses_are_refused_naming_the_key(key, path, value, message):
    cfg = copy.deepcopy(TINY)
    node = cfg
    for k in path[:-1]:
        node = node.setdefault(k, {})
    node[path[-1]] = value
    with pytest.raises(hxload.ConfigError, match=message):
        validate(cfg)


def test_more_v_workers_than_rows_is_refused():
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][0].update({"v_shape": [4, 256], "v_workers": 8})
    with pytest.raises(hxload.ConfigError, match=r"points\[0\]\.v_workers: 8 vector workers for 4 rows"):
        validate(cfg)


def test_mv_only_sweep_still_needs_room_for_ds_window():
    """The runner plans D's scratch window whatever the workload."""
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["workloads"] = ["mv"]
    cfg["defaults"].update({"v_variant": "compute", "d_shape": [1024, 2048], "scratch_bytes": 65536})
    with pytest.raises(
        hxload.ConfigError,
        match=r"points\[0\]\.scratch_bytes: 65536 is less than the "
        r"2097152 bytes the runner plans for D's window",
    ):
        validate(cfg)


@pytest.mark.parametrize(
    "value,message",
    [
        ({"host": 1, "gpu": 0}, r"affinity\.gpu: unknown engine"),
        ({"mx": -1}, r"affinity\.mx: -1 must be an integer core id"),
        ({"mx": 1.5}, r"affinity\.mx: 1\.5 must be an integer core id"),
        ({"vec": 4096}, r"affinity\.vec: 4096 must be an integer core id"),
        ({"dma": 1000}, r"affinity\.dma: core 1000 does not exist on this machine"),
        ("pinned", r"affinity: 'pinned' must be spread, none or a map"),
    ],
)
def test_bad_affinity_is_refused(value, message):
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][1]["affinity"] = value
    with pytest.raises(hxload.ConfigError, match=r"points\[1\]\." + message):
        validate(cfg)


def test_affinity_reaches_the_runner_arguments():
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][0]["affinity"] = {"dma": 0, "host": 1, "vec1": 0, "vec": 1, "mx": 0}
    cfg["sweeps"]["tiny"]["points"][0]["v_workers"] = 2  # vec1 exists only with 2 workers
    cfg["sweeps"]["tiny"]["points"][1]["affinity"] = "none"
    cfg = validate(cfg)
    a = hxpoints.runner_args(cfg, hxpoints.find_point(cfg, "host", "tiny", "mv", "small"))
    assert a[a.index("--affinity") + 1] == "host=1,vec=1,mx=0,dma=0,vec1=0"
    b = hxpoints.runner_args(cfg, hxpoints.find_point(cfg, "host", "tiny", "mv", "big"))
    assert b[b.index("--affinity") + 1] == "none"
    plain = validate(copy.deepcopy(TINY))
    c = hxpoints.runner_args(plain, hxpoints.find_point(plain, "host", "tiny", "md", "big"))
    assert c[c.index("--affinity") + 1] == "spread"  # the schema's default


def test_old_run_affinity_key_gives_a_clear_message():
    cfg = copy.deepcopy(TINY)
    cfg["run"]["affinity"] = "spread"
    with pytest.raises(
        hxload.ConfigError,
        match=r"config\.run\.affinity: placement is now a point "
        r"parameter: write `affinity: <value>` under `defaults`",
    ):
        validate(cfg)


def test_replicates_seeds_and_bounds():
    cfg = copy.deepcopy(TINY)
    cfg["run"]["replicates"] = 3
    cfg = validate(cfg)
    p = hxpoints.find_point(cfg, "host", "tiny", "mv", "small")
    seeds = [hxpoints.runner_args(cfg, p, r)[hxpoints.runner_args(cfg, p, r).index("--seed") + 1] for r in range(3)]
    assert seeds == ["3", "4", "5"]
    assert len({hxpoints.point_hash(cfg, p, r) for r in range(3)}) == 3
    with pytest.raises(KeyError, match="no replicate 3"):
        hxpoints.runner_args(cfg, p, 3)
    assert validate(copy.deepcopy({**TINY, "run": {}}))["run"]["replicates"] == 3  # default


def test_min_effect_in_the_schema():
    cfg = validate(copy.deepcopy(TINY))
    assert cfg["analysis"]["min_effect"] == 0.03
    for bad in (0, 0.5, -0.1):
        c = copy.deepcopy(TINY)
        c["analysis"] = {"min_effect": bad}
        with pytest.raises(hxload.ConfigError, match=r"config\.analysis\.min_effect"):
            validate(c)


def test_decision_settings_in_the_schema():
    cfg = validate(copy.deepcopy(TINY))
    assert cfg["analysis"]["min_replicates"] == 2 and cfg["analysis"]["overlap_min_fraction"] == 0.10
    for key, bad in (("min_replicates", 0), ("overlap_min_fraction", 0), ("overlap_min_fraction", 1.5)):
        c = copy.deepcopy(TINY)
        c["analysis"] = {key: bad}
        with pytest.raises(hxload.ConfigError, match=rf"config\.analysis\.{key}"):
            validate(c)


# --------------------------------------------------------------------------
# every runner option is a point parameter


def test_m_tile_must_be_a_multiple_of_8_in_the_runner_too(runner, tmp_path):
    err, _ = _parse(runner, tmp_path, "--m-tile", "12")
    assert err.startswith("hxrun: error: --m-tile:"), err
    err, sentinel = _parse(runner, tmp_path, "--m-tile", "16")
    assert sentinel in err


@pytest.mark.parametrize("key", sorted(hxrunnercli.RUNNER_CHOICES))
def test_runner_accepts_exactly_the_schemas_choices(runner, tmp_path, key):
    opt, values = hxrunnercli.RUNNER_CHOICES[key]
    schema_values = validate(copy.deepcopy(TINY)) and hxschema.load_schema()["$defs"]["point_props"][key]
    for v in values:
        err, sentinel = _parse(runner, tmp_path, opt, v)
        assert sentinel in err, (key, v, err)
    err, _ = _parse(runner, tmp_path, opt, "bogus")
    assert err.startswith(f"hxrun: error: {opt}:"), (key, err)
    assert schema_values  # the schema has the key (schema_limit_problems compares the values)


def test_a_schema_whose_choices_drift_is_refused():
    schema = hxschema.load_schema()
    schema["$defs"]["point_props"]["v_release"]["enum"] = ["at-completion", "never"]
    with pytest.raises(
        hxload.ConfigError,
        match=r"schema values of v_release .* differ from the "
        r"runner's --v-release",
    ):
        hxvalidate.validate(copy.deepcopy(TINY), schema)


@pytest.mark.parametrize(
    "key,value,message",
    [
        ("m_tile", 12, r"m_tile: 12 is not a multiple of 8"),
        ("m_tile", 8200, r"m_tile: 8200 is greater than the maximum of 8192"),
        ("d_buffers", 3, r"d_buffers: 3 is greater than the maximum of 2"),
        ("window", 4, r"window: 4 is greater than the maximum of 3"),
        ("window", 0, r"window: 0 is less than the minimum of 1"),
        ("window", "some", r"window: 'some' does not match"),
        ("antagonist", 9, r"antagonist: 9 is greater than the maximum of 8"),
        ("antagonist_bytes", 1000, r"antagonist_bytes: 1000 is less than the minimum of 1048576"),
        ("v_release", "never", r"v_release: 'never' is not one of"),
        ("v_variant", "ddr2", r"v_variant: 'ddr2' is not one of"),
        ("wait", "poll", r"wait: 'poll' is not one of"),
        ("spin_ns", -1, r"spin_ns: -1 is less than the minimum of 0"),
        ("early_completion", "yes", r"early_completion: 'yes' is not of type 'boolean'"),
    ],
)
def test_a_bad_option_value_stops_naming_the_key(key, value, message):
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][0][key] = value
    with pytest.raises(hxload.ConfigError, match=r"config\.sweeps\.tiny\.points\[0\]\." + message):
        validate(cfg)


@pytest.mark.parametrize("key", ["wait", "spin_ns", "early_completion"])
def test_the_wait_policy_moved_from_run_to_the_point(key):
    cfg = copy.deepcopy(TINY)
    cfg["run"][key] = {"wait": "spin", "spin_ns": 5, "early_completion": False}[key]
    with pytest.raises(
        hxload.ConfigError,
        match=rf"config\.run\.{key}: the wait policy is now a point "
        rf"parameter: write `{key}: <value>` under `defaults`",
    ):
        validate(cfg)


def test_default_options_keep_their_runner_arguments():
    """Options at the runner's default are not passed, so points that do not
    use them keep their arguments, point hash and cached results."""
    cfg = validate(copy.deepcopy(TINY))
    a = hxpoints.runner_args(cfg, hxpoints.find_point(cfg, "host", "tiny", "mvd", "small"))
    for opt in ("--m-tile", "--d-buffers", "--v-release", "--window", "--antagonist", "--antagonist-bytes"):
        assert opt not in a
    assert a[a.index("--wait") + 1] == "spin-block" and a[a.index("--early-completion") + 1] == "on"


ALL_OPTIONS = {
    "m_tile": 32,
    "d_buffers": 2,
    "v_release": "at-entry-end",
    "window": 2,
    "antagonist": 1,
    "antagonist_bytes": 1 << 20,
    "wait": "spin",
    "spin_ns": 5000,
    "early_completion": False,
    "v_variant": "stream",
    "v_shape": [16, 64],
    "d_desc_rows": 16,
    "v_workers": 2,
    "affinity": {"mx": 0, "vec": 0, "dma": 0, "host": 0, "vec1": 0, "bw0": 0},
}


def test_every_option_of_a_point_reaches_the_runner(runner, tmp_path):
    """A point setting every option: the built runner runs it and its meta
    record says each value was taken (the config key -> option mapping)."""
    import json

    cfg = copy.deepcopy(TINY)
    cfg["run"].update({"warmup": 0, "rounds": 1, "groups": ["A", "D"]})
    cfg["sweeps"]["tiny"]["points"][0].update(ALL_OPTIONS)
    cfg = validate(cfg)
    args = hxpoints.runner_args(cfg, hxpoints.find_point(cfg, "host", "tiny", "mvd", "small"))
    out = tmp_path / "r.jsonl"
    r = subprocess.run([str(runner), "--out", str(out), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    meta = json.loads(out.read_text().splitlines()[0])
    got = meta["args"]
    assert (got["m_tile"], got["d_buffers"], got["v_release"], got["window"]) == (32, 2, "at-entry-end", 2)
    assert (got["antagonist"], got["antagonist_bytes"]) == (1, 1 << 20)
    assert (meta["wait"], meta["spin_ns"], meta["early_completion"]) == ("spin", 5000, False)
    assert meta["tasks"]["V"]["variant"] == "stream" and meta["tasks"]["V"]["workers"] == 2
    assert meta["tasks"]["M"]["tile_k"] == 32 and meta["tasks"]["D"]["buffers"] == 2
    assert meta["affinity"]["bw0"] == 0 and meta["affinity"]["vec1"] == 0


def _scratch_cfg(d_buffers, scratch):
    cfg = copy.deepcopy(TINY)
    cfg["run"].update({"warmup": 0, "rounds": 1, "groups": ["A"]})
    # onchip V 32x256 fp32: 2 x 32 KiB; D 64 x 512 B = 32 KiB per window
    cfg["defaults"].update({"d_buffers": d_buffers, "scratch_bytes": scratch})
    return cfg


@pytest.mark.parametrize("d_buffers,need", [(1, 98304), (2, 131072)])
def test_scratch_check_counts_ds_second_window_like_the_runner(runner, tmp_path, d_buffers, need):
    """Validation's scratch need is the runner's plan: at `need` bytes the
    runner plans the point, one byte less it refuses (exit 3) and so does
    validation, naming the key and D's windows."""
    ok = validate(_scratch_cfg(d_buffers, need))
    args = hxpoints.runner_args(ok, hxpoints.find_point(ok, "host", "tiny", "mv", "small"))
    r = subprocess.run(
        [str(runner), "--out", str(tmp_path / "ok.jsonl"), *args], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    args[args.index("--scratch-bytes") + 1] = str(need - 1)
    r = subprocess.run(
        [str(runner), "--out", str(tmp_path / "no.jsonl"), *args], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 3 and "scratch overflow" in r.stderr, r.stderr
    windows = "D's two windows (d_buffers 2" if d_buffers == 2 else "D's window ("
    with pytest.raises(
        hxload.ConfigError,
        match=rf"scratch_bytes: {need - 1} is less than the {need} "
        rf"bytes the runner plans for .*{re.escape(windows)}",
    ):
        validate(_scratch_cfg(d_buffers, need - 1))


@pytest.mark.parametrize(
    "params,message",
    [
        ({"affinity": {"bw0": 0}}, r"affinity\.bw0: no such antagonist: antagonist is 0"),
        (
            {"antagonist": 2, "affinity": {"bw2": 0}},
            r"affinity\.bw2: no such antagonist: antagonist is 2 \(threads bw0\.\.bw1\)",
        ),
        ({"affinity": {"vec1": 0}}, r"affinity\.vec1: no such vector worker: v_workers is 1"),
    ],
)
def test_placed_threads_must_exist(params, message):
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][0].update(params)
    with pytest.raises(hxload.ConfigError, match=r"points\[0\]\." + message):
        validate(cfg)
    ok = copy.deepcopy(TINY)
    ok["sweeps"]["tiny"]["points"][0].update({"antagonist": 3, "v_workers": 2, "affinity": {"bw2": 0, "vec1": 0}})
    validate(ok)


def test_m_tile_is_refused_for_a_fixed_blocking_backend():
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["hexagon-qemu"]
    cfg["target_settings"] = {"hexagon-qemu": {"params": {"precision": "u8i8"}}}
    cfg["sweeps"]["tiny"]["points"][0]["m_tile"] = 64
    with pytest.raises(
        hxload.ConfigError,
        match=r"points\[0\]\.m_tile: target hexagon-qemu's GEMM .* "
        r"refuses --m-tile",
    ):
        validate(cfg)
