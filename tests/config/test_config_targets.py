"""Targets in the config: per-target settings, the Hexagon precision rule,
device keys in the schema, the preflight (what a target lacks on this
machine), make variables, run environment and run prefix."""

import copy
import os
import stat

import pytest
import yaml

from hxfuse.config import load as hxload
from hxfuse.config import validate as hxvalidate
from hxfuse.config import params as hxparams
from hxfuse.config import points as hxpoints
from hxfuse.config import preflight as hxpreflight
from pipeline_util import REPO, TINY


def merged(base: dict, over: dict) -> dict:
    """Snakemake's merge of --configfile over the Snakefile's configfile."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def test_hexagon_qemu_config_file_merges_over_the_default():
    cfg = merged(
        yaml.safe_load((REPO / "config.yaml").read_text()),
        yaml.safe_load((REPO / "config/hexagon-qemu.yaml").read_text()),
    )
    hxvalidate.validate(cfg)
    pts = hxpoints.points(cfg)
    assert cfg["targets"] == ["host", "hexagon-qemu"] and len(pts) == 2 * 21  # every point on both
    host = [p for p in pts if p.target == "host"]
    qemu = [p for p in pts if p.target == "hexagon-qemu"]
    assert {p.params["precision"] for p in host} == {"fp32"}  # host untouched
    assert {p.params["precision"] for p in qemu} == {"u8i8"}
    assert {tuple(p.params["m_shape"]) for p in qemu} == {(64, 64, 64)}
    vshort = next(p for p in qemu if p.point == "Vshort")
    assert vshort.params["v_passes"] == 1  # the point's own key survives
    args = hxpoints.runner_args(cfg, qemu[0])
    assert args[args.index("--rounds") + 1] == "5" and args[args.index("--warmup") + 1] == "1"
    host_args = hxpoints.runner_args(cfg, host[0])  # host keeps the study's rounds
    assert host_args[host_args.index("--rounds") + 1] == str(cfg["run"]["rounds"]) != "5"
    assert hxparams.run_settings(cfg, "hexagon-qemu")["timeout_s"] == 120
    assert hxpreflight.target_problems({"targets": ["host"]}) == []


def test_default_config_needs_no_emulator_or_sdk():
    cfg = hxvalidate.validate(yaml.safe_load((REPO / "config.yaml").read_text()))
    assert cfg["targets"] == ["host"]
    assert hxpreflight.target_problems(cfg, environ={}, which=lambda _: None, zig_ok=lambda _: False) == []


def test_target_params_win_over_point_and_change_only_that_targets_hash():
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["host", "hexagon-qemu"]
    cfg["target_settings"] = {"hexagon-qemu": {"params": {"precision": "u8i8", "m_shape": [32, 32, 32]}}}
    cfg = hxvalidate.validate(cfg)
    big = {p.target: p for p in hxpoints.points(cfg) if p.id == "tiny/mv/big"}
    assert big["host"].params["m_shape"] == [64, 64, 64] and big["host"].params["precision"] == "fp32"
    assert big["hexagon-qemu"].params["m_shape"] == [32, 32, 32]
    assert hxpoints.point_hash(cfg, big["host"]) != hxpoints.point_hash(cfg, big["hexagon-qemu"])


@pytest.mark.parametrize("target", ["hexagon-qemu", "hexagon", "hexagon-sim"])
def test_hexagon_targets_need_integer_precision(target):
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = [target]
    with pytest.raises(
        hxload.ConfigError,
        match=rf"precision: target {target} runs integer kernels only.*"
        rf"target_settings\.{target}\.params\.precision: u8i8",
    ):
        hxvalidate.validate(cfg)
    cfg["target_settings"] = {target: {"params": {"precision": "u8i8"}}}
    hxvalidate.validate(cfg)


def test_target_params_are_checked_like_points():
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["hexagon-qemu"]
    cfg["target_settings"] = {"hexagon-qemu": {"params": {"precision": "u8i8", "scratch_bytes": 8192}}}
    with pytest.raises(
        hxload.ConfigError,
        match=r"scratch_bytes: 8192 is less than the 65536 bytes the "
        r"runner plans .*\[target hexagon-qemu, with target_settings",
    ):
        hxvalidate.validate(cfg)


BAD = {
    "relative device dir": (
        ("hexagon", "device_dir"),
        "tmp/hx",
        r"target_settings\.hexagon\.device_dir: 'tmp/hx' does not match",
    ),
    "serial with a space": (
        ("hexagon", "device_serial"),
        "ab cd",
        r"target_settings\.hexagon\.device_serial: 'ab cd' does not match",
    ),
    "bad arch": (("hexagon", "arch"), "73", r"target_settings\.hexagon\.arch: '73' does not match"),
    "misspelt key": (("hexagon", "serial"), "x", r"target_settings\.hexagon: unknown key\(s\) 'serial'"),
    "device key on the simulator": (
        ("hexagon-sim", "device_serial"),
        "x",
        r"target_settings\.hexagon-sim: unknown key\(s\) 'device_serial'",
    ),
    "unknown target": (("phone",), {}, r"target_settings: unknown key\(s\) 'phone'"),
    "zero rounds": (
        ("hexagon-qemu", "run"),
        {"rounds": 0},
        r"target_settings\.hexagon-qemu\.run\.rounds: 0 is less than",
    ),
    "bad forced param": (
        ("hexagon-qemu", "params"),
        {"m_shape": [0, 1, 1]},
        r"target_settings\.hexagon-qemu\.params\.m_shape\[0\]",
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_target_settings_name_the_key(kind):
    path, value, pattern = BAD[kind]
    cfg = copy.deepcopy(TINY)
    node = cfg.setdefault("target_settings", {})
    for k in path[:-1]:
        node = node.setdefault(k, {})
    node[path[-1]] = value
    with pytest.raises(hxload.ConfigError, match=pattern):
        hxvalidate.validate(cfg)


def test_device_defaults_are_filled():
    cfg = copy.deepcopy(TINY)
    cfg["target_settings"] = {"hexagon": {"device_serial": "R5CT1234"}}
    cfg = hxvalidate.validate(cfg)
    assert cfg["target_settings"]["hexagon"]["device_dir"] == "/data/local/tmp/hxfuse"
    assert cfg["target_settings"]["hexagon"]["arch"] == "v73"


def fake_sdk(root, sim=False, ndk=True):
    """A directory tree that looks like the Hexagon SDK to the preflight and to
    kernels/targets/hexagon.mk (header, executable hexagon-clang; with *ndk*
    the Android NDK it ships, tools/android-ndk-*, whose clang mode ap needs)."""
    (root / "incs").mkdir(parents=True)
    (root / "incs" / "HAP_perf.h").write_text("/* fake */\n")
    bindir = root / "tools" / "HEXAGON_Tools" / "8.8.06" / "Tools" / "bin"
    bindir.mkdir(parents=True)
    for tool in ("hexagon-clang",) + (("hexagon-sim",) if sim else ()):
        f = bindir / tool
        f.write_text("#!/bin/sh\necho 'fake hexagon tool 8.8'\n")
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    if ndk:
        clang = root / "tools/android-ndk-r25c" / hxpreflight.NDK_CLANG.format(api=31)
        clang.parent.mkdir(parents=True)
        clang.write_text("#!/bin/sh\necho 'fake ndk clang'\n")
        clang.chmod(0o755)
    return root


def test_preflight_names_everything_missing_for_the_device():
    cfg = {"targets": ["host", "hexagon"]}
    lines = hxpreflight.target_problems(cfg, environ={}, which=lambda _: None)
    text = "\n".join(lines)
    assert len(lines) == 5, lines
    assert "HEXAGON_SDK_ROOT is not set" in text and "setup_sdk_env.source" in text
    # mode ap (the default) builds hxrun-ap with the NDK
    assert "hxrun-ap with the Android NDK, and none was found: set ANDROID_NDK_ROOT" in text
    assert "hexagon-clang not found" in text and "HEXAGON_TOOLS_ROOT" in text
    assert "adb is not installed: apt-get install adb" in text
    assert "HX_DEVICE_SERIAL" in text and "target_settings.hexagon.device_serial" in text
    assert all(line.startswith("target hexagon: ") for line in lines)


def test_preflight_of_the_emulator():
    lines = hxpreflight.target_problems(
        {"targets": ["hexagon-qemu"]}, environ={}, which=lambda _: None, zig_ok=lambda _: False
    )
    assert lines == [
        "target hexagon-qemu: zig is not installed: pip install ziglang==0.17.1 (or set ZIG to a zig command)",
        "target hexagon-qemu: qemu-hexagon is not installed: apt-get install qemu-user "
        "(Debian/Ubuntu; provides qemu-hexagon)",
    ]


def test_preflight_passes_with_an_sdk_and_device(tmp_path):
    sdk = fake_sdk(tmp_path / "sdk", sim=True)
    cfg = {
        "targets": ["hexagon", "hexagon-sim"],
        "target_settings": {"hexagon": {"sdk_root": str(sdk), "device_serial": "R5CT1234"}},
    }
    which = {"adb": "/usr/bin/adb"}.get
    assert hxpreflight.target_problems(cfg, environ={"HEXAGON_SDK_ROOT": str(sdk)}, which=which) == []
    # the simulator binary is required for hexagon-sim only
    (sdk / "tools/HEXAGON_Tools/8.8.06/Tools/bin/hexagon-sim").unlink()
    lines = hxpreflight.target_problems(cfg, environ={"HEXAGON_SDK_ROOT": str(sdk)}, which=which)
    assert len(lines) == 1 and lines[0].startswith("target hexagon-sim: hexagon-sim not found")
    # a directory that is not an SDK
    lines = hxpreflight.target_problems({"targets": ["hexagon-sim"]}, environ={"HEXAGON_SDK_ROOT": str(tmp_path)})
    assert any("does not look like a Hexagon SDK" in m for m in lines)


def test_make_vars_run_env_and_run_prefix_of_the_device(tmp_path):
    sdk = fake_sdk(tmp_path / "sdk")
    cfg = hxvalidate.validate(
        {
            **copy.deepcopy(TINY),
            "targets": ["hexagon"],
            "target_settings": {
                "hexagon": {
                    "sdk_root": str(sdk),
                    "device_serial": "R5CT1234",
                    "device_dir": "/data/local/tmp/x",
                    "params": {"precision": "u8i8"},
                }
            },
        }
    )
    mv = hxpreflight.make_vars(cfg, "hexagon", environ={})
    assert f"HEXAGON_SDK_ROOT={sdk}" in mv and "HEXAGON_ARCH=v73" in mv and "HX_BUILD_ONLY=1" in mv
    assert any(v.startswith("HEXAGON_TOOLS_ROOT=") and v.endswith("8.8.06") for v in mv)
    env = hxpreflight.run_env(cfg, "hexagon", environ={})
    assert env["HX_DEVICE_SERIAL"] == "R5CT1234" and env["HX_DEVICE_DIR"] == "/data/local/tmp/x"
    assert env["HEXAGON_SDK_ROOT"] == str(sdk)
    assert hxpreflight.run_env(cfg, "host") == {}
    # RUN_PREFIX from kernels/targets/hexagon.mk, its script made absolute
    prefix = hxpreflight.run_prefix(cfg, "hexagon")
    assert prefix == f"{REPO / 'kernels/hexagon/device.sh'} run --"
    assert os.access(prefix.split()[0], os.X_OK)


def test_device_mode_picks_the_runner_the_make_vars_and_the_ndk(tmp_path):
    sdk = fake_sdk(tmp_path / "sdk")
    base = {**copy.deepcopy(TINY), "targets": ["hexagon"]}
    ts = {"sdk_root": str(sdk), "device_serial": "R5CT1234", "params": {"precision": "u8i8"}}
    cfg = hxvalidate.validate({**copy.deepcopy(base), "target_settings": {"hexagon": dict(ts)}})
    assert hxparams.device_mode(cfg, "hexagon") == "ap" and hxparams.runner_name(cfg, "hexagon") == "hxrun-ap"
    assert (
        hxparams.device_mode(cfg, "hexagon-sim") == "dsp-only" and hxparams.runner_name(cfg, "hexagon-sim") == "hxrun"
    )
    assert hxparams.device_mode(cfg, "host") is None and hxparams.runner_name(cfg, "host") == "hxrun"
    # hxrun's build is the dsp-only binary in both modes; mode ap's halves are built with HX_HEXAGON_MODE=ap
    mv = hxpreflight.make_vars(cfg, "hexagon", environ={})
    assert mv[-1] == "HX_HEXAGON_MODE=dsp-only" and "HX_HEXAGON_MODE=ap" not in mv
    ap = hxpreflight.ap_make_vars(cfg, "hexagon", environ={})
    assert ap == mv[:-1] + ["HX_HEXAGON_MODE=ap"]
    assert not any(v.startswith("HX_HEXAGON_MODE") for v in hxpreflight.make_vars(cfg, "hexagon-sim", environ={}))
    # the NDK: ANDROID_NDK_ROOT, else the SDK's; API 31 unless HX_ANDROID_API
    clang = str(sdk / "tools/android-ndk-r25c/toolchains/llvm/prebuilt/linux-x86_64/bin/aarch64-linux-android31-clang")
    assert hxpreflight.ndk_clang(cfg, "hexagon", environ={}) == (str(sdk / "tools/android-ndk-r25c"), clang)
    ndk_cfg = copy.deepcopy(cfg)
    ndk_cfg["target_settings"]["hexagon"]["ndk_root"] = "/cfg-ndk"
    assert hxpreflight.ndk_clang(ndk_cfg, "hexagon", environ={"ANDROID_NDK_ROOT": "/n"})[0] == "/cfg-ndk"
    assert hxpreflight.ap_make_vars(ndk_cfg, "hexagon", environ={})[-2:] == [
        "ANDROID_NDK_ROOT=/cfg-ndk",
        "HX_HEXAGON_MODE=ap",
    ]
    assert hxpreflight.ndk_clang(cfg, "hexagon", environ={"ANDROID_NDK_ROOT": "/n", "HX_ANDROID_API": "33"}) == (
        "/n",
        "/n/toolchains/llvm/prebuilt/linux-x86_64/bin/aarch64-linux-android33-clang",
    )
    which = {"adb": "/usr/bin/adb"}.get
    assert hxpreflight.target_problems(cfg, environ={}, which=which) == []
    lines = hxpreflight.target_problems(cfg, environ={"HX_ANDROID_API": "19"}, which=which)
    assert len(lines) == 1 and "no Android NDK clang at" in lines[0] and lines[0].endswith("alone on the cDSP")
    # dsp-only needs no NDK
    nondk = fake_sdk(tmp_path / "nondk", ndk=False)
    only = {**ts, "sdk_root": str(nondk), "mode": "dsp-only"}
    cfg = hxvalidate.validate({**copy.deepcopy(base), "target_settings": {"hexagon": only}})
    assert hxparams.runner_name(cfg, "hexagon") == "hxrun"
    assert hxpreflight.target_problems(cfg, environ={}, which=which) == []


def test_run_prefix_of_host_and_a_refusing_target():
    cfg = hxvalidate.validate(copy.deepcopy(TINY))
    assert hxpreflight.run_prefix(cfg, "host") == ""
    env_backup = os.environ.pop("HEXAGON_SDK_ROOT", None)
    try:
        with pytest.raises(hxload.ConfigError, match=r"target hexagon-sim: .*HEXAGON_SDK_ROOT"):
            hxpreflight.run_prefix(cfg, "hexagon-sim")
    finally:
        if env_backup is not None:
            os.environ["HEXAGON_SDK_ROOT"] = env_backup


def _farm_cfg(**hexagon):
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["host", "hexagon"]
    cfg["target_settings"] = {"hexagon": {"params": {"precision": "u8i8"}, **hexagon}}
    return cfg


def test_device_farm_sets_the_device_limit_and_the_lease_environment():
    cfg = hxvalidate.validate(_farm_cfg(device_serials=["s1", "s2", "R5CT:5555"]))
    assert hxpreflight.device_limit(cfg, environ={}) == 3
    assert hxpreflight.device_env(cfg, environ={}) == {"HX_DEVICE_SERIALS": "s1 s2 R5CT:5555"}
    # the farm is not a job parameter, and a stray HX_DEVICE_SERIAL is dropped
    assert "HX_DEVICE_SERIALS" not in hxpreflight.run_env(cfg, "hexagon", environ={})
    assert "HX_DEVICE_SERIAL" not in hxpreflight.run_env(cfg, "hexagon", environ={"HX_DEVICE_SERIAL": "x"})
    one = hxvalidate.validate(_farm_cfg(device_serial="R5CT1234"))
    assert hxpreflight.device_limit(one, environ={}) == 1
    # one phone: an empty list, so that a list in the caller's environment
    # cannot replace the configured phone ... unless the config names none
    assert hxpreflight.device_env(one, environ={"HX_DEVICE_SERIALS": "a b"}) == {"HX_DEVICE_SERIALS": ""}
    assert hxpreflight.run_env(one, "hexagon", environ={"HX_DEVICE_SERIALS": "a b"})["HX_DEVICE_SERIAL"] == "R5CT1234"
    none = hxvalidate.validate(_farm_cfg())
    assert hxpreflight.device_limit(none, environ={"HX_DEVICE_SERIALS": "a b"}) == 2
    assert hxpreflight.device_limit(hxvalidate.validate(copy.deepcopy(TINY)), environ={"HX_DEVICE_SERIALS": "a b"}) == 1
    assert hxpreflight.device_env(hxvalidate.validate(copy.deepcopy(TINY))) == {}


@pytest.mark.parametrize(
    "hexagon, message",
    [
        (
            {"device_serials": ["s1", "s2", "s1"]},
            r"config\.target_settings\.hexagon\.device_serials: 's1' is listed twice",
        ),
        (
            {"device_serials": ["s1"], "device_serial": "s2"},
            r"config\.target_settings\.hexagon: device_serial and device_serials are both set",
        ),
        ({"device_serials": ["a;b"]}, r"device_serials\[0\]: 'a;b' does not match"),
        ({"device_serials": "s1 s2"}, r"device_serials: 's1 s2' is not of type 'array'"),
        ({"farm_spans_hosts": "yes"}, r"farm_spans_hosts: 'yes' is not of type 'boolean'"),
    ],
)
def test_bad_device_farms_are_refused_naming_the_key(hexagon, message):
    with pytest.raises(hxload.ConfigError, match=message):
        hxvalidate.validate(_farm_cfg(**hexagon))


def test_preflight_accepts_a_farm_and_checks_one_from_the_environment(tmp_path):
    sdk = fake_sdk(tmp_path / "sdk")
    env = {"HEXAGON_SDK_ROOT": str(sdk)}
    cfg = {"targets": ["hexagon"], "target_settings": {"hexagon": {"device_serials": ["s1", "s2"]}}}
    assert hxpreflight.target_problems(cfg, environ=env, which={"adb": "/x/adb", "flock": "/x/flock"}.get) == []
    lines = hxpreflight.target_problems(cfg, environ=env, which={"adb": "/x/adb"}.get)
    assert lines == [
        "target hexagon: flock is not installed (util-linux): a device farm leases its phones through lock files"
    ]
    lines = hxpreflight.target_problems(
        {"targets": ["hexagon"]},
        environ={**env, "HX_DEVICE_SERIALS": "s1 s1"},
        which={"adb": "/x/adb", "flock": "/x/flock"}.get,
    )
    assert lines == [
        "target hexagon: HX_DEVICE_SERIALS: 's1' is listed twice (each phone once: two runs "
        "on one phone would disturb each other)"
    ]


@pytest.mark.parametrize("target", ["hexagon", "hexagon-sim"])
def test_sdk_targets_default_scratch_fits_vtcm_beside_the_hmx_region(target, monkeypatch):
    monkeypatch.delenv("HEXKL_ROOT", raising=False)
    cfg = copy.deepcopy(TINY)
    cfg["defaults"]["scratch_bytes"] = 16 << 20
    cfg["targets"] = ["host", target]
    cfg["target_settings"] = {target: {"params": {"precision": "u8i8"}}}
    cfg = hxvalidate.validate(cfg)
    by = {p.target: p.params["scratch_bytes"] for p in hxpoints.points(cfg)}
    assert by == {"host": 16 << 20, target: 7 << 20}  # 8 MiB VTCM - 1 MiB HMX region
    p = next(p for p in hxpoints.points(cfg) if p.target == target)
    args = hxpoints.runner_args(cfg, p)
    assert args[args.index("--scratch-bytes") + 1] == str(7 << 20)
    # a smaller global default is kept; a smaller VTCM lowers the default
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = [target]
    cfg["target_settings"] = {target: {"params": {"precision": "u8i8"}, "vtcm_bytes": 4 << 20}}
    cfg["defaults"]["scratch_bytes"] = 2 << 20
    assert {p.params["scratch_bytes"] for p in hxpoints.points(hxvalidate.validate(copy.deepcopy(cfg)))} == {2 << 20}
    cfg["defaults"]["scratch_bytes"] = 16 << 20
    assert {p.params["scratch_bytes"] for p in hxpoints.points(hxvalidate.validate(cfg))} == {3 << 20}


def test_a_scratch_larger_than_the_vtcm_is_refused_before_any_job(monkeypatch):
    def cfg_with(scratch):
        cfg = copy.deepcopy(TINY)
        cfg["targets"] = ["hexagon"]
        cfg["target_settings"] = {"hexagon": {"params": {"precision": "u8i8", "scratch_bytes": scratch}}}
        return cfg

    monkeypatch.setenv("HEXKL_ROOT", "/opt/hexkl")  # HMX: 1 MiB of VTCM is HexKL's
    hxvalidate.validate(cfg_with(7 << 20))
    with pytest.raises(
        hxload.ConfigError,
        match=(
            r"scratch_bytes: 7340033 bytes of scratch \(the arena is VTCM, in 4096-byte pages\) do not fit "
            r"target hexagon's VTCM: 8388608 bytes \(target_settings\.hexagon\.vtcm_bytes\) minus HexKL's "
            r"1048576-byte HMX tile region leave 7340032; use scratch_bytes <= 7340032"
        ),
    ):
        hxvalidate.validate(cfg_with((7 << 20) + 1))
    monkeypatch.delenv("HEXKL_ROOT")  # HVX only: the whole VTCM
    hxvalidate.validate(cfg_with(8 << 20))
    with pytest.raises(
        hxload.ConfigError,
        match=r"VTCM: 8388608 bytes \(target_settings\.hexagon\.vtcm_bytes\) "
        r"leave 8388608",
    ):
        hxvalidate.validate(cfg_with((8 << 20) + 1))
