"""Pipeline configuration: schema validation, semantic checks, the point table.

The Snakefile calls :func:`prepare` once, before any job is scheduled.  It

1. validates ``config.yaml`` against ``workflow/schemas/config.schema.yaml``
   (JSON Schema 2020-12, every object closed) and fills the defaults, raising
   :class:`ConfigError` with one line per problem naming the key
   (``config.run.rounds: 0 is less than the minimum of 1``);
2. runs :func:`check_semantics` for what a schema cannot say (unique point
   names, strides, scratch capacity, calibration of absent tasks, ...);
3. expands the sweeps into the *point table*: one row per
   (target, sweep, workload, point), each its own target file.

:func:`target_problems` is the targets' preflight (tools, SDK, device), run
by the Snakefile after validation so that a target that cannot run on this
machine stops the workflow before any job, naming what is missing.

Hashes: :func:`config_hash` hashes the whole validated config (provenance);
:func:`point_hash` hashes only what one runner invocation depends on, so that
changing one point's parameters reruns that point only.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml"

POINT_KEYS = (
    "precision", "m_shape", "v_variant", "v_shape", "v_passes", "v_workers",
    "d_shape", "d_src_stride", "d_desc_rows", "d_repeat", "scratch_bytes", "calibrate",
)
WORKLOAD_TASKS = {"mv": ("M", "V"), "md": ("M", "D"), "mvd": ("M", "V", "D")}
# runner defaults per V variant (docs/runner.md): rows, cols, passes
V_VARIANT_DEFAULTS = {
    "compute": ((64, 256), 32),
    "onchip": ((512, 1024), 1),
    "ddr": ((4096, 4096), 1),
}
# path of one point's files, relative to results/<target>/<stage>/
POINT_PATTERN = "{sweep}/{workload}/{point}"

# What each target is (README, "Targets"; kernels/hexagon/README.md).
# `group_b` is what group B (existing best concurrency) maps to on the
# target's backend, or its limitation, as the plan requires it be recorded
# with B's results (the runner's own meta.group_mapping says what B is in
# the runner on that target).
_B_HEXAGON = (
    "separate requests on independent queues (one dspqueue / FastRPC session per task kind, "
    "each served by its own DSP thread). Limitations: each task pays its own message and "
    "completion signal and the host waits on each; VTCM and the HMX lock are acquired per "
    "request (HAP_compute_res), so requests needing them serialise unless given disjoint "
    "pre-reserved shares; FastRPC calls on one handle serialise; QNN/HTP graphs run one after "
    "another. In the runner (run_main_on_hexagon, one process) B is the executor's request-queue "
    "path with one queue per engine thread; the FastRPC transport cost is not included.")
TARGETS = {
    "host": {
        "emulated": False, "status": "native: real timings",
        "group_b": "one request per task, pushed at once to each task's own engine queue "
                   "(threads mx, vec, dma); the host waits for all",
    },
    "hexagon-qemu": {
        "emulated": True,
        "status": "EMULATED under qemu-hexagon: correctness only, timings are not performance",
        "group_b": "the runner's request-queue path (one queue per engine thread) under emulation: "
                   "correctness only. On the device: " + _B_HEXAGON,
    },
    "hexagon": {
        "emulated": False,
        "status": "Hexagon cDSP over adb (Hexagon SDK): written against the documented API, "
                  "not yet run on hardware",
        "group_b": _B_HEXAGON,
    },
    "hexagon-sim": {
        "emulated": False, "simulated": True,
        "status": "Hexagon SDK simulator: written against the documented API, not yet run; "
                  "timings are a cycle model, not a phone",
        "group_b": _B_HEXAGON,
    },
}
EMULATED_TARGETS = frozenset(t for t, info in TARGETS.items() if info["emulated"])
SDK_TARGETS = ("hexagon", "hexagon-sim")
HEXAGON_TARGETS = ("hexagon-qemu", "hexagon", "hexagon-sim")
ZIG_PIN = "0.17.1"


class ConfigError(ValueError):
    """The configuration is invalid; the message names every offending key."""


# --------------------------------------------------------------------------
# schema validation


def load_schema(path: Path | str = SCHEMA_PATH) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh)


def _default_filling_validator(schema: dict):
    from jsonschema import Draft202012Validator, validators

    validate_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema_):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if "default" in sub:
                    instance.setdefault(prop, copy.deepcopy(sub["default"]))
        yield from validate_properties(validator, properties, instance, schema_)

    cls = validators.extend(Draft202012Validator, {"properties": set_defaults})
    return cls(schema)


def _key_path(path: Iterable[Any]) -> str:
    out = "config"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _describe(err) -> str:
    """One readable line per schema error, naming the key."""
    key = _key_path(err.absolute_path)
    if err.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)' (?:was|were) unexpected", err.message)
        names = re.findall(r"'([^']+)'", err.message.split("(")[-1]) if "(" in err.message else extra
        allowed = sorted(err.schema.get("properties", {}))
        hint = f" (allowed: {', '.join(allowed)})" if allowed else ""
        return f"{key}: unknown key(s) {', '.join(repr(n) for n in names)}{hint}"
    if err.validator == "required":
        return f"{key}: {err.message}"
    if err.validator == "enum":
        return f"{key}: {err.instance!r} is not one of {err.validator_value}"
    if err.validator == "propertyNames":
        return f"{key}: invalid name {err.instance!r}: {err.message}"
    return f"{key}: {err.message}"


def validate(config: dict, schema: dict | None = None) -> dict:
    """Validate *config* in place (filling defaults) and return it.

    Raises ConfigError listing every schema violation, then every semantic one.
    """
    if not isinstance(config, dict):
        raise ConfigError("config: must be a mapping (is config.yaml empty?)")
    schema = schema or load_schema()
    validator = _default_filling_validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = sorted({_describe(e) for e in errors})
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    problems = check_semantics(config)
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    return config


# --------------------------------------------------------------------------
# semantic checks


def target_settings(config: dict, target: str) -> dict:
    """config.target_settings.<target> (empty when absent)."""
    ts = config.get("target_settings")
    ts = ts.get(target) if isinstance(ts, dict) else None
    return ts if isinstance(ts, dict) else {}


def point_params(config: dict, sweep: str, point: dict, target: str | None = None) -> dict:
    """The effective parameters of one point:
    defaults < sweep.base < point < target_settings.<target>.params."""
    params = {k: copy.deepcopy(config["defaults"][k]) for k in POINT_KEYS}
    params.update(copy.deepcopy(config["sweeps"][sweep].get("base", {})))
    params.update({k: copy.deepcopy(v) for k, v in point.items() if k in POINT_KEYS})
    if target is not None:
        params.update(copy.deepcopy(target_settings(config, target).get("params") or {}))
    return params


def run_settings(config: dict, target: str) -> dict:
    """config.run with target_settings.<target>.run on top."""
    run = dict(config["run"])
    run.update(target_settings(config, target).get("run") or {})
    return run


def check_semantics(config: dict) -> list[str]:
    """Problems a JSON schema cannot express.  Returns messages naming keys."""
    problems: list[str] = []
    targets = config.get("targets", []) or ["host"]
    for target in targets:
        forced = bool(target_settings(config, target).get("params"))
        tag = f" [target {target}, with target_settings.{target}.params]" if forced else ""
        for msg in _point_problems(config, target):
            msg += tag
            if msg not in problems:
                problems.append(msg)
    groups = config["run"]["groups"]
    if "A" not in groups:
        problems.append("config.run.groups: must include A (every speedup is relative to A)")
    return problems


def _point_problems(config: dict, target: str) -> list[str]:
    problems: list[str] = []
    for name, sweep in config["sweeps"].items():
        skey = f"config.sweeps.{name}"
        seen: dict[str, int] = {}
        xs: dict[float, str] = {}
        for i, pt in enumerate(sweep["points"]):
            pkey = f"{skey}.points[{i}]"
            if pt["name"] in seen:
                problems.append(f"{pkey}.name: duplicate point name {pt['name']!r} "
                                f"(also points[{seen[pt['name']]}])")
            seen[pt["name"]] = i
            if pt["x"] in xs:
                problems.append(f"{pkey}.x: duplicate value {pt['x']} (also point {xs[pt['x']]!r})")
            xs[pt["x"]] = pt["name"]
            if sweep.get("log_x") and pt["x"] <= 0:
                problems.append(f"{pkey}.x: {pt['x']} must be > 0 because {skey}.log_x is true")
            p = point_params(config, name, pt, target)
            rows, row_bytes = p["d_shape"]
            uses = set().union(*(WORKLOAD_TASKS[w] for w in sweep["workloads"]))
            if p["d_src_stride"] is not None and p["d_src_stride"] < row_bytes:
                problems.append(f"{pkey}.d_src_stride: {p['d_src_stride']} is smaller than "
                                f"the row bytes {row_bytes} of d_shape (rows would overlap)")
            stride = p["d_src_stride"] if p["d_src_stride"] is not None else 2 * row_bytes
            if "D" in uses and rows * stride * p["d_repeat"] > 8 << 30:
                problems.append(f"{pkey}.d_repeat: the DDR source of D would take "
                                f"{rows * stride * p['d_repeat'] / 2**30:.1f} GiB (rows x stride x repeat); "
                                "keep it under 8 GiB")
            if p["d_desc_rows"] > rows:
                problems.append(f"{pkey}.d_desc_rows: {p['d_desc_rows']} exceeds the "
                                f"{rows} rows of d_shape")
            if "D" in uses and rows * row_bytes > p["scratch_bytes"]:
                problems.append(f"{pkey}.d_shape: D copies {rows * row_bytes} bytes into a "
                                f"scratch arena of scratch_bytes={p['scratch_bytes']}")
            if "V" in uses and p["v_variant"] == "onchip":
                (vr, vc), _ = V_VARIANT_DEFAULTS["onchip"]
                vr, vc = p["v_shape"] or (vr, vc)
                elem = 4 if p["precision"] == "fp32" else 2
                need = 2 * vr * vc * elem  # x and y live in scratch
                if "D" in uses:
                    need += rows * row_bytes
                if need > p["scratch_bytes"]:
                    problems.append(f"{pkey}.v_shape: onchip V ({vr}x{vc}, in+out) plus D need "
                                    f"{need} bytes of scratch > scratch_bytes={p['scratch_bytes']}")
            if p["calibrate"]:
                for task in p["calibrate"]:
                    if task not in uses:
                        problems.append(f"{pkey}.calibrate.{task}: task {task} is in none of "
                                        f"the workloads {sweep['workloads']} of {skey}")
            if target in HEXAGON_TARGETS and p["precision"] != "u8i8":
                why = ("QEMU has no HVX floating point" if target == "hexagon-qemu" else
                       "its fp32 path is scalar reference code, not HVX/HMX")
                problems.append(f"{pkey}.precision: target {target} runs integer kernels only "
                                f"({why}); use precision u8i8, e.g. "
                                f"target_settings.{target}.params.precision: u8i8")
    return problems


# --------------------------------------------------------------------------
# the point table


@dataclass(frozen=True)
class Point:
    target: str
    sweep: str
    workload: str
    point: str
    x: float
    label: str
    params: dict

    @property
    def id(self) -> str:
        return POINT_PATTERN.format(sweep=self.sweep, workload=self.workload, point=self.point)

    def wildcards(self) -> dict:
        return {"target": self.target, "sweep": self.sweep,
                "workload": self.workload, "point": self.point}


def points(config: dict) -> list[Point]:
    """Every (target, sweep, workload, point) of the validated config, in config order."""
    out = []
    for target in config["targets"]:
        for sname, sweep in config["sweeps"].items():
            for workload in sweep["workloads"]:
                for pt in sweep["points"]:
                    out.append(Point(target, sname, workload, pt["name"], float(pt["x"]),
                                     pt.get("label", pt["name"]),
                                     point_params(config, sname, pt, target)))
    return out


def point_table(config: dict):
    """The point table as a pandas DataFrame (one row per target file)."""
    import pandas as pd

    rows = []
    for i, p in enumerate(points(config)):
        row = {"target": p.target, "sweep": p.sweep, "workload": p.workload,
               "point": p.point, "x": p.x, "label": p.label, "order": i,
               "variable": config["sweeps"][p.sweep]["variable"]}
        row.update({k: (json.dumps(v) if isinstance(v, (list, dict)) else v)
                    for k, v in p.params.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def find_point(config: dict, target: str, sweep: str, workload: str, point: str) -> Point:
    for p in points(config):
        if (p.target, p.sweep, p.workload, p.point) == (target, sweep, workload, point):
            return p
    raise KeyError(f"no point {target}/{sweep}/{workload}/{point} in the config")


def runner_args(config: dict, p: Point) -> list[str]:
    """hxrun options for one point (docs/runner.md), without --out/--npy-dir."""
    pp, run = p.params, run_settings(config, p.target)
    args = [
        "--workloads", p.workload,
        "--precision", pp["precision"],
        "--m-shape", ",".join(map(str, pp["m_shape"])),
        "--v-variant", pp["v_variant"],
        "--v-workers", str(pp["v_workers"]),
        "--d-shape", ",".join(map(str, pp["d_shape"])),
        "--d-desc-rows", str(pp["d_desc_rows"]),
        "--d-repeat", str(pp["d_repeat"]),
        "--scratch-bytes", str(pp["scratch_bytes"]),
        "--warmup", str(run["warmup"]),
        "--rounds", str(run["rounds"]),
        "--seed", str(run["seed"]),
        "--wait", run["wait"],
        "--spin-ns", str(run["spin_ns"]),
        "--early-completion", "on" if run["early_completion"] else "off",
        "--groups", ",".join(run["groups"]),
    ]
    if pp["v_shape"] is not None:
        args += ["--v-shape", ",".join(map(str, pp["v_shape"]))]
    if pp["v_passes"] is not None:
        args += ["--v-passes", str(pp["v_passes"])]
    if pp["d_src_stride"] is not None:
        args += ["--d-src-stride", str(pp["d_src_stride"])]
    if run["affinity"]:
        args += ["--affinity", run["affinity"]]
    if pp["calibrate"]:
        args += ["--calibrate", ",".join(f"{k}={_plain(v)}" for k, v in sorted(pp["calibrate"].items()))]
    return args


def _plain(v: float) -> str:
    """A number without exponent notation (the runner parses plain decimals)."""
    return str(int(v)) if float(v).is_integer() else f"{v:.6f}".rstrip("0")


# --------------------------------------------------------------------------
# targets: what a target needs on this machine, its make variables, its
# run prefix and environment


def _setting_or_env(config: dict, target: str, key: str, env_name: str,
                    environ: dict) -> str | None:
    v = target_settings(config, target).get(key)
    return v if v else (environ.get(env_name) or None)


def sdk_paths(config: dict, target: str, environ: dict | None = None) -> dict:
    """SDK root, tools root, hexagon-clang, hexagon-sim, HexKL of an SDK target
    (config first, then the environment, as kernels/targets/hexagon.mk does)."""
    environ = os.environ if environ is None else environ
    ts = target_settings(config, target)
    sdk = _setting_or_env(config, target, "sdk_root", "HEXAGON_SDK_ROOT", environ)
    tools = ts.get("tools_root") or environ.get("HEXAGON_TOOLS_ROOT") or \
        environ.get("DEFAULT_HEXAGON_TOOLS_ROOT")
    if not tools and sdk:
        cands = sorted(Path(sdk, "tools", "HEXAGON_Tools").glob("*"))
        tools = str(cands[-1]) if cands else None
    return {
        "sdk_root": sdk, "tools_root": tools,
        "clang": str(Path(tools, "Tools", "bin", "hexagon-clang")) if tools else None,
        "sim": str(Path(tools, "Tools", "bin", "hexagon-sim")) if tools else None,
        "hexkl_root": _setting_or_env(config, target, "hexkl_root", "HEXKL_ROOT", environ),
        "arch": ts.get("arch", "v73"),
    }


def _zig_available(environ: dict) -> bool:
    cmd = shlex.split(environ["ZIG"]) if environ.get("ZIG") else [sys.executable, "-m", "ziglang"]
    try:
        r = subprocess.run(cmd + ["version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0 and bool(r.stdout.strip())


def target_problems(config: dict, environ: dict | None = None, which=shutil.which,
                    zig_ok=None) -> list[str]:
    """What each configured target lacks on this machine, one line per missing
    thing, each saying how to provide it.  Empty when every target can build
    and run.  `host` needs only make and a C compiler (make says so itself)."""
    environ = os.environ if environ is None else environ
    zig_ok = _zig_available if zig_ok is None else zig_ok
    problems: list[str] = []
    for target in config.get("targets", []):
        pre = f"target {target}: "
        if target == "hexagon-qemu":
            if not zig_ok(environ):
                problems.append(pre + f"zig is not installed: pip install ziglang=={ZIG_PIN} "
                                "(or set ZIG to a zig command)")
            qemu = target_settings(config, target).get("qemu") or environ.get("QEMU_HEXAGON") \
                or "qemu-hexagon"
            if not which(qemu):
                problems.append(pre + f"{qemu} is not installed: apt-get install qemu-user "
                                "(Debian/Ubuntu; provides qemu-hexagon)")
        elif target in SDK_TARGETS:
            sp = sdk_paths(config, target, environ)
            key = f"target_settings.{target}"
            if not sp["sdk_root"]:
                problems.append(pre + "needs the Qualcomm Hexagon SDK, and HEXAGON_SDK_ROOT is not "
                                "set: install the SDK (Qualcomm Package Manager / qpm-cli, Hexagon "
                                "SDK 5.x or 6.x) and `source <sdk>/setup_sdk_env.source`, or set "
                                f"{key}.sdk_root")
            elif not Path(sp["sdk_root"], "incs", "HAP_perf.h").is_file():
                problems.append(pre + f"HEXAGON_SDK_ROOT={sp['sdk_root']} does not look like a "
                                "Hexagon SDK (no incs/HAP_perf.h)")
            if not sp["clang"] or not Path(sp["clang"]).is_file():
                where = f" (looked for {sp['clang']})" if sp["clang"] else ""
                problems.append(pre + f"hexagon-clang not found{where}: it comes with the Hexagon "
                                "SDK under tools/HEXAGON_Tools/<version>/Tools/bin; set "
                                f"HEXAGON_TOOLS_ROOT or {key}.tools_root")
            if target == "hexagon-sim" and sp["sim"] and not Path(sp["sim"]).is_file():
                problems.append(pre + f"hexagon-sim not found at {sp['sim']}: set "
                                f"HEXAGON_TOOLS_ROOT or {key}.tools_root")
            if target == "hexagon":
                if not which("adb"):
                    problems.append(pre + "adb is not installed: apt-get install adb (or Android "
                                    "platform-tools) and connect the phone with USB debugging on")
                if not _setting_or_env(config, target, "device_serial", "HX_DEVICE_SERIAL", environ):
                    problems.append(pre + "no device serial: set HX_DEVICE_SERIAL or "
                                    f"{key}.device_serial to the phone's serial from `adb devices`")
    return problems


def make_vars(config: dict, target: str, environ: dict | None = None) -> list[str]:
    """make VAR=value arguments of a target's build (kernels/targets/<target>.mk)."""
    out = []
    if config["build"].get("cflags"):
        out.append(f"CFLAGS={config['build']['cflags']}")
    if target == "hexagon-qemu" and target_settings(config, target).get("qemu"):
        out.append(f"QEMU_HEXAGON={target_settings(config, target)['qemu']}")
    if target in SDK_TARGETS:
        sp = sdk_paths(config, target, environ)
        for var, key in (("HEXAGON_SDK_ROOT", "sdk_root"), ("HEXAGON_TOOLS_ROOT", "tools_root"),
                         ("HEXKL_ROOT", "hexkl_root"), ("HEXAGON_ARCH", "arch")):
            if sp[key]:
                out.append(f"{var}={sp[key]}")
        # the pipeline's deploy/run rules talk to the device, not the build
        out.append("HX_BUILD_ONLY=1")
    return out


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
        serial = _setting_or_env(config, target, "device_serial", "HX_DEVICE_SERIAL", environ)
        if serial:
            env["HX_DEVICE_SERIAL"] = serial
        env["HX_DEVICE_DIR"] = target_settings(config, target).get("device_dir",
                                                                   "/data/local/tmp/hxfuse")
    return env


def run_prefix(config: dict, target: str, kernels: Path | str = REPO_ROOT / "kernels") -> str:
    """The command that executes the target's runner on this machine:
    RUN_PREFIX of kernels/targets/<target>.mk (`make print-RUN_PREFIX`), with a
    script path inside the repository made absolute.  Raises ConfigError with
    make's message when the target's .mk refuses (missing tools)."""
    cmd = ["make", "-s", "--no-print-directory", "-C", str(kernels), f"TARGET={target}",
           *make_vars(config, target), "print-RUN_PREFIX"]
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


# --------------------------------------------------------------------------
# hashes


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()


def config_hash(config: dict) -> str:
    """sha256 (12 hex digits) of the whole validated config."""
    return hashlib.sha256(_canonical(config)).hexdigest()[:12]


def point_hash(config: dict, p: Point) -> str:
    """sha256 (12 hex digits) of what one runner invocation depends on."""
    return hashlib.sha256(_canonical({"target": p.target, "args": runner_args(config, p)})).hexdigest()[:12]


def load(path: Path | str) -> dict:
    """Load and validate a config file (for scripts and tests)."""
    with open(path) as fh:
        cfg = yaml.safe_load(fh)
    return validate(cfg)
