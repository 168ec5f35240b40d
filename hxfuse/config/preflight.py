"""What a target needs on this machine: the toolchain and device-farm preflight.

:func:`target_problems` is the targets' preflight (tools, SDK, device), run
by the Snakefile after validation so that a target that cannot run on this
machine stops the workflow before any job, naming what is missing.  Also
here: a target's make variables (:func:`make_vars`), its run prefix and
environment (:func:`run_prefix`, :func:`run_env`), the `hexagon` target's
device farm (:func:`device_serials`, :func:`device_limit`,
:func:`device_env`) and the VTCM a scratch arena may take, which depends on
whether this machine builds with HexKL (:func:`scratch_limit`).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from hxfuse.config import gpu as _gpu
from hxfuse.config import targets as _targets
from hxfuse.config.load import REPO_ROOT, ConfigError
from hxfuse.config.params import HMX_REGION_BYTES, device_mode, target_settings, vtcm_bytes
from hxfuse.config.targets import SDK_TARGETS, ZIG_PIN


def scratch_limit(config: dict, target: str, environ: dict | None = None) -> tuple[int, bool]:
    """(largest scratch_bytes the target's VTCM holds, whether HexKL is used):
    the VTCM minus the HMX tile region with HexKL, the whole VTCM without."""
    hexkl = bool(sdk_paths(config, target, environ)["hexkl_root"])
    return vtcm_bytes(config, target) - (HMX_REGION_BYTES if hexkl else 0), hexkl


def device_serials(config: dict, environ: dict | None = None) -> list[str]:
    """The phones of the `hexagon` target's device farm:
    target_settings.hexagon.device_serials, else the environment's
    HX_DEVICE_SERIALS (whitespace-separated, as kernels/hexagon/device.sh reads
    it) unless the config names one phone (device_serial); empty for one
    phone."""
    environ = os.environ if environ is None else environ
    ts = target_settings(config, "hexagon")
    if ts.get("device_serials"):
        return [str(s) for s in ts["device_serials"]]
    if ts.get("device_serial"):
        return []
    return (environ.get("HX_DEVICE_SERIALS") or "").split()


def device_limit(config: dict, environ: dict | None = None) -> int:
    """How many run jobs may hold the `device` resource at once: the number
    of phones of the farm when the `hexagon` target has one, else 1 (one
    device, the host's measurement exclusive)."""
    if "hexagon" not in (config.get("targets") or []):
        return 1
    return max(1, len(device_serials(config, environ)))


def serial_problems(serials: list, key: str) -> list[str]:
    problems, seen = [], set()
    for s in serials:
        if not isinstance(s, str) or not re.fullmatch(r"[A-Za-z0-9._:-]+", s):
            problems.append(f"{key}: {s!r} is not an adb serial (letters, digits, . _ : -; see `adb devices`)")
        elif s in seen:
            problems.append(
                f"{key}: {s!r} is listed twice (each phone once: two runs on one phone would disturb each other)"
            )
        seen.add(s)
    return problems


def _setting_or_env(config: dict, target: str, key: str, env_name: str, environ: dict) -> str | None:
    v = target_settings(config, target).get(key)
    return v if v else (environ.get(env_name) or None)


def sdk_paths(config: dict, target: str, environ: dict | None = None) -> dict:
    """SDK root, tools root, hexagon-clang, hexagon-sim, HexKL of an SDK target
    (config first, then the environment, as kernels/targets/hexagon.mk does)."""
    environ = os.environ if environ is None else environ
    ts = target_settings(config, target)
    sdk = _setting_or_env(config, target, "sdk_root", "HEXAGON_SDK_ROOT", environ)
    tools = ts.get("tools_root") or environ.get("HEXAGON_TOOLS_ROOT") or environ.get("DEFAULT_HEXAGON_TOOLS_ROOT")
    if not tools and sdk:
        cands = sorted(Path(sdk, "tools", "HEXAGON_Tools").glob("*"))
        tools = str(cands[-1]) if cands else None
    return {
        "sdk_root": sdk,
        "tools_root": tools,
        "clang": str(Path(tools, "Tools", "bin", "hexagon-clang")) if tools else None,
        "sim": str(Path(tools, "Tools", "bin", "hexagon-sim")) if tools else None,
        "hexkl_root": _setting_or_env(config, target, "hexkl_root", "HEXKL_ROOT", environ),
        "arch": ts.get("arch", _targets.get(target).defaults["arch"]),
    }


# the Android NDK's clang for the AP driver (kernels/targets/hexagon.mk)
ANDROID_API_DEFAULT = "31"
NDK_CLANG = "toolchains/llvm/prebuilt/linux-x86_64/bin/aarch64-linux-android{api}-clang"


def ndk_clang(config: dict, target: str, environ: dict | None = None) -> tuple[str | None, str | None]:
    """(NDK directory, its aarch64 clang) of mode ap, as hexagon.mk finds them:
    target_settings.<target>.ndk_root, else ANDROID_NDK_ROOT, else the newest
    tools/android-ndk-* of the SDK; API HX_ANDROID_API (default 31).
    (None, None) when there is no NDK."""
    environ = os.environ if environ is None else environ
    ndk = _setting_or_env(config, target, "ndk_root", "ANDROID_NDK_ROOT", environ)
    sdk = sdk_paths(config, target, environ)["sdk_root"]
    if not ndk and sdk:
        cands = sorted(Path(sdk, "tools").glob("android-ndk-*"))
        ndk = str(cands[-1]) if cands else None
    api = environ.get("HX_ANDROID_API") or ANDROID_API_DEFAULT
    return ndk, (str(Path(ndk, NDK_CLANG.format(api=api))) if ndk else None)


def _ndk_problems(config: dict, target: str, environ: dict) -> list[str]:
    """Mode ap builds hxrun-ap with the NDK: say what is missing."""
    if device_mode(config, target) != "ap":
        return []
    ndk, clang = ndk_clang(config, target, environ)
    pre, how = f"target {target}: ", f"or set target_settings.{target}.mode: dsp-only to run hxrun alone on the cDSP"
    if not ndk:
        return [
            pre + "mode ap builds the application-processor driver hxrun-ap with the Android NDK, "
            f"and none was found: set ANDROID_NDK_ROOT or target_settings.{target}.ndk_root to an NDK "
            f"(r25 or newer; the Hexagon SDK ships one as tools/android-ndk-*), {how}"
        ]
    if not Path(clang).is_file():
        return [
            pre + f"no Android NDK clang at {clang}: set ANDROID_NDK_ROOT or target_settings.{target}.ndk_root "
            f"(and HX_ANDROID_API), {how}"
        ]
    return []


def _zig_available(environ: dict) -> bool:
    cmd = shlex.split(environ["ZIG"]) if environ.get("ZIG") else [sys.executable, "-m", "ziglang"]
    try:
        r = subprocess.run(cmd + ["version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0 and bool(r.stdout.strip())


def preflight_ready(config: dict, error: str = "") -> bool:
    """Whether the target preflight (target_problems) can run on *config*:
    every target is a known name and *error*, the validation's message, names
    neither `targets` nor `target_settings` (the preflight reads both; a value
    the validation refused is reported by that message, not by a traceback)."""
    targets = config.get("targets")
    if not isinstance(targets, list) or not all(isinstance(t, str) and t in _targets.NAMES for t in targets):
        return False
    return not re.search(r"config\.target(s|_settings)\b", error)


def target_problems(config: dict, environ: dict | None = None, which=shutil.which, zig_ok=None) -> list[str]:
    """What each configured target lacks on this machine, one line per missing
    thing, each saying how to provide it.  Empty when every target can build
    and run.  `host` needs only make and a C compiler (make says so itself)."""
    environ = os.environ if environ is None else environ
    zig_ok = _zig_available if zig_ok is None else zig_ok
    problems: list[str] = []
    for target in config.get("targets", []):
        pre = f"target {target}: "
        if _targets.get(target).toolchain == "zig":
            if not zig_ok(environ):
                problems.append(
                    pre + f"zig is not installed: pip install ziglang=={ZIG_PIN} (or set ZIG to a zig command)"
                )
            qemu = (
                target_settings(config, target).get("qemu")
                or environ.get("QEMU_HEXAGON")
                or _targets.get(target).defaults["qemu"]
            )
            if not which(qemu):
                problems.append(
                    pre + f"{qemu} is not installed: apt-get install qemu-user (Debian/Ubuntu; provides qemu-hexagon)"
                )
        elif _targets.get(target).gpu:
            problems += _gpu.target_problems(config, target, environ, which=which)
        elif target in SDK_TARGETS:
            sp = sdk_paths(config, target, environ)
            key = f"target_settings.{target}"
            if not sp["sdk_root"]:
                problems.append(
                    pre + "needs the Qualcomm Hexagon SDK, and HEXAGON_SDK_ROOT is not "
                    "set: install the SDK (Qualcomm Package Manager / qpm-cli, Hexagon "
                    "SDK 5.x or 6.x) and `source <sdk>/setup_sdk_env.source`, or set "
                    f"{key}.sdk_root"
                )
            elif not Path(sp["sdk_root"], "incs", "HAP_perf.h").is_file():
                problems.append(
                    pre + f"HEXAGON_SDK_ROOT={sp['sdk_root']} does not look like a Hexagon SDK (no incs/HAP_perf.h)"
                )
            if not sp["clang"] or not Path(sp["clang"]).is_file():
                where = f" (looked for {sp['clang']})" if sp["clang"] else ""
                problems.append(
                    pre + f"hexagon-clang not found{where}: it comes with the Hexagon "
                    "SDK under tools/HEXAGON_Tools/<version>/Tools/bin; set "
                    f"HEXAGON_TOOLS_ROOT or {key}.tools_root"
                )
            if _targets.get(target).simulated and sp["sim"] and not Path(sp["sim"]).is_file():
                problems.append(
                    pre + f"hexagon-sim not found at {sp['sim']}: set HEXAGON_TOOLS_ROOT or {key}.tools_root"
                )
            if target == "hexagon":
                problems += _ndk_problems(config, target, environ)
                if not which("adb"):
                    problems.append(
                        pre + "adb is not installed: apt-get install adb (or Android "
                        "platform-tools) and connect the phone with USB debugging on"
                    )
                farm = device_serials(config, environ)
                if not target_settings(config, target).get("device_serials"):
                    problems += [pre + m for m in serial_problems(farm, "HX_DEVICE_SERIALS")]
                if not farm and not _setting_or_env(config, target, "device_serial", "HX_DEVICE_SERIAL", environ):
                    problems.append(
                        pre + "no device serial: set HX_DEVICE_SERIAL or "
                        f"{key}.device_serial to the phone's serial from `adb devices` "
                        f"(or {key}.device_serials to a list of phones: a device farm)"
                    )
                if farm and not which("flock"):
                    problems.append(
                        pre + "flock is not installed (util-linux): a device farm leases its phones through lock files"
                    )
    return problems


def make_vars(config: dict, target: str, environ: dict | None = None) -> list[str]:
    """make VAR=value arguments of a target's build (kernels/targets/<target>.mk)."""
    out = []
    if config["build"].get("cflags"):
        out.append(f"CFLAGS={config['build']['cflags']}")
    if "qemu" in _targets.get(target).defaults and target_settings(config, target).get("qemu"):
        out.append(f"QEMU_HEXAGON={target_settings(config, target)['qemu']}")
    if _targets.get(target).gpu:
        out += _gpu.make_vars(config, target, environ)
    if target in SDK_TARGETS:
        sp = sdk_paths(config, target, environ)
        for var, key in (
            ("HEXAGON_SDK_ROOT", "sdk_root"),
            ("HEXAGON_TOOLS_ROOT", "tools_root"),
            ("HEXKL_ROOT", "hexkl_root"),
            ("HEXAGON_ARCH", "arch"),
        ):
            if sp[key]:
                out.append(f"{var}={sp[key]}")
        # the pipeline's deploy/run rules talk to the device, not the build
        out.append("HX_BUILD_ONLY=1")
    if target == "hexagon":
        # the `build` rule's runner is hxrun, the dsp-only binary, whatever
        # the config's mode: it needs no NDK (mode ap's halves: ap_make_vars)
        out.append("HX_HEXAGON_MODE=dsp-only")
    return out


def ap_make_vars(config: dict, target: str, environ: dict | None = None) -> list[str]:
    """make VAR=value arguments of mode ap's build (hxrun-ap and
    libhxfuse_skel.so; rule build_ap): the target's own with
    HX_HEXAGON_MODE=ap and the configured NDK (else make finds it as the
    preflight did: ANDROID_NDK_ROOT, or the SDK's)."""
    out = [v for v in make_vars(config, target, environ) if not v.startswith("HX_HEXAGON_MODE=")]
    ndk = target_settings(config, target).get("ndk_root")
    return out + ([f"ANDROID_NDK_ROOT={ndk}"] if ndk else []) + ["HX_HEXAGON_MODE=ap"]


def run_env(config: dict, target: str, environ: dict | None = None) -> dict[str, str]:
    """Environment of the run prefix (kernels/hexagon/device.sh, sim.sh)."""
    if target not in SDK_TARGETS:
        return {}
    environ = os.environ if environ is None else environ
    sp = sdk_paths(config, target, environ)
    env = {"HEXAGON_ARCH": sp["arch"]}
    for var, key in (("HEXAGON_SDK_ROOT", "sdk_root"), ("HEXAGON_TOOLS_ROOT", "tools_root")):
        if sp[key]:
            env[var] = sp[key]
    if target == "hexagon":
        # one phone; a farm's serials are not a job parameter (which phone a
        # run gets must not rerun anything): see device_env
        serial = _setting_or_env(config, target, "device_serial", "HX_DEVICE_SERIAL", environ)
        if serial and not device_serials(config, environ):
            env["HX_DEVICE_SERIAL"] = serial
        env["HX_DEVICE_DIR"] = target_settings(config, target).get(
            "device_dir", _targets.get(target).defaults["device_dir"]
        )
    return env


def device_env(config: dict, environ: dict | None = None) -> dict[str, str]:
    """The device farm's environment, exported by the Snakefile to every job
    (kernels/hexagon/device.sh reads it): HX_DEVICE_SERIALS, the farm's
    serials (empty for one phone, so that a list left in the caller's
    environment cannot replace the phone the config names).  Not a job
    parameter: adding a phone to the farm reruns nothing."""
    if "hexagon" not in (config.get("targets") or []):
        return {}
    return {"HX_DEVICE_SERIALS": " ".join(device_serials(config, environ))}


def run_prefix(config: dict, target: str, kernels: Path | str = REPO_ROOT / "kernels") -> str:
    """The command that executes the target's runner on this machine:
    RUN_PREFIX of kernels/targets/<target>.mk (`make print-RUN_PREFIX`), with a
    script path inside the repository made absolute.  Raises ConfigError with
    make's message when the target's .mk refuses (missing tools)."""
    cmd = [
        "make",
        "-s",
        "--no-print-directory",
        "-C",
        str(kernels),
        f"TARGET={target}",
        *make_vars(config, target),
        "print-RUN_PREFIX",
    ]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"target {target}: cannot ask make for RUN_PREFIX: {exc}") from None
    if r.returncode != 0:
        msg = " ".join(line.split("***")[-1].strip() for line in r.stderr.splitlines() if line.strip())
        raise ConfigError(f"target {target}: {msg or 'make print-RUN_PREFIX failed'}")
    words = shlex.split(r.stdout.strip())
    if words and "/" in words[0] and not os.path.isabs(words[0]):
        words[0] = str(Path(kernels).resolve().parent / words[0])
    return shlex.join(words)
