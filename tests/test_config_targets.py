"""Targets in the config: per-target settings, the Hexagon precision rule,
device keys in the schema, the preflight (what a target lacks on this
machine), make variables, run environment and run prefix."""
import copy
import os
import stat

import pytest
import yaml

import hxfuse.config as hc
from pipeline_util import REPO, TINY


def merged(base: dict, over: dict) -> dict:
    """Snakemake's merge of --configfile over the Snakefile's configfile."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def test_hexagon_qemu_config_file_merges_over_the_default():
    cfg = merged(yaml.safe_load((REPO / "config.yaml").read_text()),
                 yaml.safe_load((REPO / "config/hexagon-qemu.yaml").read_text()))
    hc.validate(cfg)
    pts = hc.points(cfg)
    assert cfg["targets"] == ["host", "hexagon-qemu"] and len(pts) == 2 * 21       # every point on both
    host = [p for p in pts if p.target == "host"]
    qemu = [p for p in pts if p.target == "hexagon-qemu"]
    assert {p.params["precision"] for p in host} == {"fp32"}       # host untouched
    assert {p.params["precision"] for p in qemu} == {"u8i8"}
    assert {tuple(p.params["m_shape"]) for p in qemu} == {(64, 64, 64)}
    vshort = next(p for p in qemu if p.point == "Vshort")
    assert vshort.params["v_passes"] == 1                           # the point's own key survives
    args = hc.runner_args(cfg, qemu[0])
    assert args[args.index("--rounds") + 1] == "5" and args[args.index("--warmup") + 1] == "1"
    host_args = hc.runner_args(cfg, host[0])                        # host keeps the study's rounds
    assert host_args[host_args.index("--rounds") + 1] == str(cfg["run"]["rounds"]) != "5"
    assert hc.run_settings(cfg, "hexagon-qemu")["timeout_s"] == 120
    assert hc.target_problems({"targets": ["host"]}) == []


def test_default_config_needs_no_emulator_or_sdk():
    cfg = hc.validate(yaml.safe_load((REPO / "config.yaml").read_text()))
    assert cfg["targets"] == ["host"]
    assert hc.target_problems(cfg, environ={}, which=lambda _: None, zig_ok=lambda _: False) == []


def test_target_params_win_over_point_and_change_only_that_targets_hash():
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["host", "hexagon-qemu"]
    cfg["target_settings"] = {"hexagon-qemu": {"params": {"precision": "u8i8", "m_shape": [32, 32, 32]}}}
    cfg = hc.validate(cfg)
    big = {p.target: p for p in hc.points(cfg) if p.id == "tiny/mv/big"}
    assert big["host"].params["m_shape"] == [64, 64, 64] and big["host"].params["precision"] == "fp32"
    assert big["hexagon-qemu"].params["m_shape"] == [32, 32, 32]
    assert hc.point_hash(cfg, big["host"]) != hc.point_hash(cfg, big["hexagon-qemu"])


@pytest.mark.parametrize("target", ["hexagon-qemu", "hexagon", "hexagon-sim"])
def test_hexagon_targets_need_integer_precision(target):
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = [target]
    with pytest.raises(hc.ConfigError, match=rf"precision: target {target} runs integer kernels only.*"
                                             rf"target_settings\.{target}\.params\.precision: u8i8"):
        hc.validate(cfg)
    cfg["target_settings"] = {target: {"params": {"precision": "u8i8"}}}
    hc.validate(cfg)


def test_target_params_are_checked_like_points():
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["hexagon-qemu"]
    cfg["target_settings"] = {"hexagon-qemu": {"params": {"precision": "u8i8", "scratch_bytes": 8192}}}
    with pytest.raises(hc.ConfigError, match=r"scratch_bytes: 8192 is less than the 65536 bytes the "
                                             r"runner plans .*\[target hexagon-qemu, with target_settings"):
        hc.validate(cfg)


BAD = {
    "relative device dir": (("hexagon", "device_dir"), "tmp/hx",
                            r"target_settings\.hexagon\.device_dir: 'tmp/hx' does not match"),
    "serial with a space": (("hexagon", "device_serial"), "ab cd",
                            r"target_settings\.hexagon\.device_serial: 'ab cd' does not match"),
    "bad arch": (("hexagon", "arch"), "73", r"target_settings\.hexagon\.arch: '73' does not match"),
    "misspelt key": (("hexagon", "serial"), "x", r"target_settings\.hexagon: unknown key\(s\) 'serial'"),
    "device key on the simulator": (("hexagon-sim", "device_serial"), "x",
                                    r"target_settings\.hexagon-sim: unknown key\(s\) 'device_serial'"),
    "unknown target": (("phone",), {}, r"target_settings: unknown key\(s\) 'phone'"),
    "zero rounds": (("hexagon-qemu", "run"), {"rounds": 0},
                    r"target_settings\.hexagon-qemu\.run\.rounds: 0 is less than"),
    "bad forced param": (("hexagon-qemu", "params"), {"m_shape": [0, 1, 1]},
                         r"target_settings\.hexagon-qemu\.params\.m_shape\[0\]"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_target_settings_name_the_key(kind):
    path, value, pattern = BAD[kind]
    cfg = copy.deepcopy(TINY)
    node = cfg.setdefault("target_settings", {})
    for k in path[:-1]:
        node = node.setdefault(k, {})
    node[path[-1]] = value
    with pytest.raises(hc.ConfigError, match=pattern):
        hc.validate(cfg)


def test_device_defaults_are_filled():
    cfg = copy.deepcopy(TINY)
    cfg["target_settings"] = {"hexagon": {"device_serial": "R5CT1234"}}
    cfg = hc.validate(cfg)
    assert cfg["target_settings"]["hexagon"]["device_dir"] == "/data/local/tmp/hxfuse"
    assert cfg["target_settings"]["hexagon"]["arch"] == "v73"


def fake_sdk(root, sim=False):
    """A directory tree that looks like the Hexagon SDK to the preflight and to
    kernels/targets/hexagon.mk (header, executable hexagon-clang)."""
    (root / "incs").mkdir(parents=True)
    (root / "incs" / "HAP_perf.h").write_text("/* fake */\n")
    bindir = root / "tools" / "HEXAGON_Tools" / "8.8.06" / "Tools" / "bin"
    bindir.mkdir(parents=True)
    for tool in ("hexagon-clang",) + (("hexagon-sim",) if sim else ()):
        f = bindir / tool
        f.write_text("#!/bin/sh\necho 'fake hexagon tool 8.8'\n")
        f.chmod(f.stat().st_mode | stat.S_IEXEC)
    return root


def test_preflight_names_everything_missing_for_the_device():
    cfg = {"targets": ["host", "hexagon"]}
    lines = hc.target_problems(cfg, environ={}, which=lambda _: None)
    text = "\n".join(lines)
    assert len(lines) == 4, lines
    assert "HEXAGON_SDK_ROOT is not set" in text and "setup_sdk_env.source" in text
    assert "hexagon-clang not found" in text and "HEXAGON_TOOLS_ROOT" in text
    assert "adb is not installed: apt-get install adb" in text
    assert "HX_DEVICE_SERIAL" in text and "target_settings.hexagon.device_serial" in text
    assert all(line.startswith("target hexagon: ") for line in lines)


def test_preflight_of_the_emulator():
    lines = hc.target_problems({"targets": ["hexagon-qemu"]}, environ={}, which=lambda _: None,
                               zig_ok=lambda _: False)
    assert lines == [
        "target hexagon-qemu: zig is not installed: pip install ziglang==0.17.1 (or set ZIG to a zig command)",
        "target hexagon-qemu: qemu-hexagon is not installed: apt-get install qemu-user "
        "(Debian/Ubuntu; provides qemu-hexagon)",
    ]


def test_preflight_passes_with_an_sdk_and_device(tmp_path):
    sdk = fake_sdk(tmp_path / "sdk", sim=True)
    cfg = {"targets": ["hexagon", "hexagon-sim"],
           "target_settings": {"hexagon": {"sdk_root": str(sdk), "device_serial": "R5CT1234"}}}
    which = {"adb": "/usr/bin/adb"}.get
    assert hc.target_problems(cfg, environ={"HEXAGON_SDK_ROOT": str(sdk)}, which=which) == []
    # the simulator binary is required for hexagon-sim only
    (sdk / "tools/HEXAGON_Tools/8.8.06/Tools/bin/hexagon-sim").unlink()
    lines = hc.target_problems(cfg, environ={"HEXAGON_SDK_ROOT": str(sdk)}, which=which)
    assert len(lines) == 1 and lines[0].startswith("target hexagon-sim: hexagon-sim not found")
    # a directory that is not an SDK
    lines = hc.target_problems({"targets": ["hexagon-sim"]}, environ={"HEXAGON_SDK_ROOT": str(tmp_path)})
    assert any("does not look like a Hexagon SDK" in m for m in lines)


def test_make_vars_run_env_and_run_prefix_of_the_device(tmp_path):
    sdk = fake_sdk(tmp_path / "sdk")
    cfg = hc.validate({**copy.deepcopy(TINY), "targets": ["hexagon"],
                       "target_settings": {"hexagon": {"sdk_root": str(sdk), "device_serial": "R5CT1234",
                                                       "device_dir": "/data/local/tmp/x",
                                                       "params": {"precision": "u8i8"}}}})
    mv = hc.make_vars(cfg, "hexagon", environ={})
    assert f"HEXAGON_SDK_ROOT={sdk}" in mv and "HEXAGON_ARCH=v73" in mv and "HX_BUILD_ONLY=1" in mv
    assert any(v.startswith("HEXAGON_TOOLS_ROOT=") and v.endswith("8.8.06") for v in mv)
    env = hc.run_env(cfg, "hexagon", environ={})
    assert env["HX_DEVICE_SERIAL"] == "R5CT1234" and env["HX_DEVICE_DIR"] == "/data/local/tmp/x"
    assert env["HEXAGON_SDK_ROOT"] == str(sdk)
    assert hc.run_env(cfg, "host") == {}
    # RUN_PREFIX from kernels/targets/hexagon.mk, its script made absolute
    prefix = hc.run_prefix(cfg, "hexagon")
    assert prefix == f"{REPO / 'kernels/hexagon/device.sh'} run --"
    assert os.access(prefix.split()[0], os.X_OK)


def test_run_prefix_of_host_and_a_refusing_target():
    cfg = hc.validate(copy.deepcopy(TINY))
    assert hc.run_prefix(cfg, "host") == ""
    env_backup = os.environ.pop("HEXAGON_SDK_ROOT", None)
    try:
        with pytest.raises(hc.ConfigError, match=r"target hexagon-sim: .*HEXAGON_SDK_ROOT"):
            hc.run_prefix(cfg, "hexagon-sim")
    finally:
        if env_backup is not None:
            os.environ["HEXAGON_SDK_ROOT"] = env_backup
