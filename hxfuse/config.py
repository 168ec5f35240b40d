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

Studies: the sweeps are chosen as a whole, never merged.  ``config.yaml``
has no ``sweeps``; ``study: NAME`` loads ``config/studies/NAME.yaml`` (or a
path to a YAML file), and a ``--configfile`` may give ``sweeps`` directly
instead.  Giving both is an error; giving neither loads the default study.
:func:`resolve_study` does this before validation; YAML errors in files the
project reads itself name the file and line (:func:`load_yaml`).

Runner limits: :data:`RUNNER_LIMITS` (integer bounds) and
:data:`RUNNER_CHOICES` (named values) are the one table of what ``hxrun``
accepts for each config key; every runner option is a point parameter
(:data:`POINT_KEYS`), passed only where it differs from the runner's own
default (:data:`RUNNER_DEFAULTS`) for the options added with the sweep
families, so existing points keep their arguments and cached results.  The schema's bounds must equal it
(:func:`schema_limit_problems`, checked on every validation) and a test asks
the built runner to refuse each bound + 1, so the two cannot drift;
:func:`check_semantics` adds the runner's cross-field rules.

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

from hxfuse import targets as _targets
from hxfuse.model import V_VARIANT_DEFAULTS, WORKLOAD_TASKS

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml"

POINT_KEYS = (
    "precision",
    "m_shape",
    "v_variant",
    "v_shape",
    "v_passes",
    "v_workers",
    "d_shape",
    "d_src_stride",
    "d_desc_rows",
    "d_repeat",
    "scratch_bytes",
    "calibrate",
    "affinity",
    # every other runner option is a point parameter too, so any sweep can
    # vary it (docs/runner.md): M's tile, D's buffers, V's scratch release,
    # the fused entry's concurrency window, bandwidth antagonists and the
    # host's wait policy
    "m_tile",
    "d_buffers",
    "v_release",
    "window",
    "antagonist",
    "antagonist_bytes",
    "wait",
    "spin_ns",
    "early_completion",
)
STUDIES_DIR = REPO_ROOT / "config" / "studies"
DEFAULT_STUDY = "default"
# Threads a placement map may name (docs/runner.md): the host thread, the
# vector engine's control thread and its extra workers, the matrix and copy
# engines, and the bandwidth antagonists bw0..bw7 (threads like the engines:
# they take a core's time as well as memory bandwidth).
AFFINITY_ENGINES = (
    ("host", "vec", "mx", "dma") + tuple(f"vec{i}" for i in range(1, 8)) + tuple(f"bw{i}" for i in range(8))
)

# What hxrun accepts, per config key (kernels/hxrun/args.c): the runner option,
# and the inclusive bounds of each integer (of each element for shapes).  The
# schema's bounds must be the same (schema_limit_problems); the test
# tests/config/test_config_limits.py asks the built runner to refuse bound + 1.
RUNNER_LIMITS = {
    "m_shape": ("--m-shape", 1, 8192),
    "v_shape": ("--v-shape", 1, 65536),
    "v_passes": ("--v-passes", 1, 4096),
    "v_workers": ("--v-workers", 1, 8),
    "d_shape": ("--d-shape", 1, 1 << 24),
    "d_src_stride": ("--d-src-stride", 1, 1 << 26),
    "d_desc_rows": ("--d-desc-rows", 1, 1 << 24),
    "d_repeat": ("--d-repeat", 1, 1 << 20),
    "scratch_bytes": ("--scratch-bytes", 0, 1 << 34),
    "warmup": ("--warmup", 0, 1_000_000),
    "rounds": ("--rounds", 1, 10_000_000),
    "seed": ("--seed", 0, (1 << 64) - 1),
    "spin_ns": ("--spin-ns", 0, 1_000_000_000),
    "m_tile": ("--m-tile", 8, 8192),  # and a multiple of 8 (M_TILE_MULTIPLE)
    "d_buffers": ("--d-buffers", 1, 2),
    "window": ("--window", 1, 3),  # or "all" (RUNNER_CHOICES)
    "antagonist": ("--antagonist", 0, 8),
    "antagonist_bytes": ("--antagonist-bytes", 1 << 20, 1 << 30),
}
M_TILE_MULTIPLE = 8
# Options with named values: what hxrun accepts for each config key (the
# schema's enums must be the same; tests/config/test_config_limits.py asks the
# runner to accept each and refuse anything else).  `window` takes "all"
# beside its integers; early_completion is a boolean passed as on/off.
RUNNER_CHOICES = {
    "v_variant": ("--v-variant", ("compute", "onchip", "ddr", "stream")),
    "v_release": ("--v-release", ("at-completion", "at-entry-end")),
    "wait": ("--wait", ("spin", "spin-block")),
    "window": ("--window", ("all",)),
    "precision": ("--precision", ("fp32", "u8i8")),
}
# The runner's own default of each option the pipeline passes only when a
# point differs from it: points that do not use an option keep their runner
# arguments (and so their point hash and cached results), and a backend
# without a tile parameter never sees --m-tile (null: the backend's own
# blocking).
RUNNER_DEFAULTS = {
    "m_tile": None,
    "d_buffers": 1,
    "v_release": "at-completion",
    "window": "all",
    "antagonist": 0,
    "antagonist_bytes": 1 << 26,
}
# cores an affinity map may name (the runner also refuses a core the machine
# does not have; check_semantics does that for the host target)
AFFINITY_MAX_CORE = 1023
# the workloads and the runner's per-variant V defaults: hxfuse.model
# path of one point's files, relative to results/<target>/<stage>/
POINT_PATTERN = "{sweep}/{workload}/{point}"

# What each target is, and its toolchain: hxfuse.targets (re-exported here
# for the code that reads them from the config module).
TARGETS = _targets.TARGETS
EMULATED_TARGETS = _targets.EMULATED_TARGETS
SDK_TARGETS = _targets.SDK_TARGETS
HEXAGON_TARGETS = _targets.HEXAGON_TARGETS
ZIG_PIN = _targets.ZIG_PIN
# VTCM of the SDK targets (target_settings.<target>.vtcm_bytes, 8 MiB on v73
# phones) and the HMX tile region a HexKL build keeps beside the scratch arena
# (HX_HMX_REGION_BYTES, kernels/hexagon/vtcm_qurt.h); the arena is rounded up
# to VTCM_ALIGN (kernels/hexagon/vtcm_qurt.c).
VTCM_BYTES_DEFAULT = 8 << 20
HMX_REGION_BYTES = 1 << 20
VTCM_ALIGN = 4096


class ConfigError(ValueError):
    """The configuration is invalid; the message names every offending key."""


# --------------------------------------------------------------------------
# schema validation


def load_schema(path: Path | str = SCHEMA_PATH) -> dict:
    with open(path) as fh:
        return yaml.safe_load(fh)


def load_yaml(path: Path | str) -> Any:
    """A YAML file, or ConfigError naming the file and line of a syntax error
    (yaml's own message names neither when the file came through Snakemake)."""
    try:
        with open(path) as fh:
            return yaml.safe_load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        what = " ".join(x for x in (exc.context, exc.problem) if x)
        raise ConfigError(f"{where}: YAML syntax error: {what}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: YAML error: {exc}") from None


def study_path(study: str, cwd: Path | str | None = None) -> Path:
    """The file of a study: a name (letters, digits, _ or -) is
    config/studies/<name>.yaml of this checkout; anything else is a path,
    relative to the working directory."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", study):
        return STUDIES_DIR / f"{study}.yaml"
    path = Path(study)
    return path if path.is_absolute() else Path(cwd or os.getcwd()) / path


STUDY_KEYS = ("description", "include", "sweeps", "searches")


def resolve_study(config: dict, cwd: Path | str | None = None) -> dict:
    """Put the study's sweeps into *config* (in place) and return it.

    ``sweeps`` given directly (a --configfile) is the study; otherwise
    ``study`` (default: the default study) names the file to load.  Both at
    once is an error: a study is replaced whole, never merged.  The loaded
    file's name is kept in ``study_file`` for the messages of validate()."""
    if not isinstance(config, dict):
        return config
    has_sweeps, study = "sweeps" in config, config.get("study")
    if has_sweeps and study is not None:
        raise ConfigError(
            "invalid configuration:\n  config.study and config.sweeps: give one "
            "(a study file replaces the sweeps whole; remove `study` to use the "
            "sweeps given here, or `sweeps` to use the study)"
        )
    if has_sweeps:
        config["study"] = None
        return config
    study = DEFAULT_STUDY if study is None else study
    if not isinstance(study, str) or not study:
        raise ConfigError(
            f"invalid configuration:\n  config.study: {study!r} is not a study name or a path to a YAML file"
        )
    path = study_path(study, cwd)
    if not path.is_file():
        avail = ", ".join(sorted(q.stem for q in STUDIES_DIR.glob("*.yaml")))
        raise ConfigError(
            f"invalid configuration:\n  config.study: no study file {path} (studies in {STUDIES_DIR}: {avail})"
        )
    sweeps, files = _study_sweeps(path, cwd, ())
    config["study"] = study
    config["sweeps"] = sweeps
    # a study file's own `searches` (fixed vs searched, hxfuse.search.space)
    # join those given directly; a name given by both is an error
    own = (load_yaml(path) or {}).get("searches") or {}
    given = config.get("searches") or {}
    if not isinstance(own, dict):
        raise ConfigError(f"invalid configuration:\n  {path}: searches: a mapping name -> search")
    both = sorted(set(own) & set(given)) if isinstance(given, dict) else []
    if both:
        raise ConfigError(
            f"invalid configuration:\n  {path}: search(es) {', '.join(map(repr, both))} "
            "given by both the study and the config (search names must differ)"
        )
    if own:
        config["searches"] = {**given, **own}
        if not given:
            config["_searches_file"] = str(path)
    # the file named in messages: the study itself, or where each sweep came
    # from when it includes others
    config["_study_file"] = str(path) if len(files) == 1 else f"{path} (with {', '.join(files[1:])})"
    return config


def _study_sweeps(path: Path, cwd, seen: tuple) -> tuple[dict, list[str]]:
    """The sweeps of a study file: those of every study it `include`s (in
    order), then its own.  A sweep name given twice, an include cycle or a
    missing file is an error naming the file."""
    if path in seen:
        raise ConfigError(
            f"invalid configuration:\n  {path}: includes itself ({' -> '.join(map(str, seen + (path,)))})"
        )
    if not path.is_file():
        avail = ", ".join(sorted(q.stem for q in STUDIES_DIR.glob("*.yaml")))
        raise ConfigError(
            f"invalid configuration:\n  {seen[-1] if seen else 'config.study'}: "
            f"no study file {path} (studies in {STUDIES_DIR}: {avail})"
        )
    doc = load_yaml(path)
    if not isinstance(doc, dict) or not ("sweeps" in doc or "include" in doc):
        raise ConfigError(
            f"invalid configuration:\n  {path}: a study file is a mapping with "
            "`sweeps` and/or `include` (and optionally `description`)"
        )
    extra = sorted(set(doc) - set(STUDY_KEYS))
    if extra:
        raise ConfigError(
            f"invalid configuration:\n  {path}: unknown key(s) "
            f"{', '.join(map(repr, extra))} (allowed: {', '.join(STUDY_KEYS)})"
        )
    inc = doc.get("include") or []
    if not isinstance(inc, list) or not all(isinstance(x, str) and x for x in inc):
        raise ConfigError(f"invalid configuration:\n  {path}: include: a list of study names or paths")
    sweeps: dict = {}
    origin: dict[str, Path] = {}
    files = [str(path)]
    for name in inc:
        sub_path = study_path(name, path.parent if not re.fullmatch(r"[A-Za-z0-9_-]+", name) else cwd)
        sub, sub_files = _study_sweeps(sub_path, cwd, seen + (path,))
        files += sub_files
        for k, v in sub.items():
            if k in sweeps:
                raise ConfigError(
                    f"invalid configuration:\n  {path}: sweep {k!r} is given by "
                    f"both {origin[k]} and {sub_path} (sweep names must differ)"
                )
            sweeps[k], origin[k] = v, sub_path
    own = doc.get("sweeps")
    if own is not None and not isinstance(own, dict):
        raise ConfigError(f"invalid configuration:\n  {path}: sweeps: a mapping name -> sweep")
    for k, v in (own or {}).items():
        if k in sweeps:
            raise ConfigError(
                f"invalid configuration:\n  {path}: sweep {k!r} is given by "
                f"both {origin[k]} and {path} (sweep names must differ)"
            )
        sweeps[k], origin[k] = v, path
    return sweeps, files


def _strict_integer(checker, instance) -> bool:
    # JSON Schema counts 5.0 as an integer; the runner does not ("5.0" is
    # refused by --rounds), so neither do we.
    return isinstance(instance, int) and not isinstance(instance, bool)


def schema_limit_problems(schema: dict) -> list[str]:
    """Where the schema's bounds differ from RUNNER_LIMITS (empty: they agree)."""
    defs = schema["$defs"]
    props = defs["point_props"]
    run = schema["properties"]["run"]["properties"]
    where = {
        "m_shape": defs["shape3"]["items"],
        "v_shape": defs["shape2v"]["items"],
        "d_shape": defs["shape2d"]["items"],
        "v_passes": props["v_passes"],
        "v_workers": props["v_workers"],
        "d_src_stride": props["d_src_stride"],
        "d_desc_rows": props["d_desc_rows"],
        "d_repeat": props["d_repeat"],
        "scratch_bytes": props["scratch_bytes"],
        "warmup": run["warmup"],
        "rounds": run["rounds"],
        "seed": run["seed"],
        "spin_ns": props["spin_ns"],
        "m_tile": props["m_tile"],
        "d_buffers": props["d_buffers"],
        "window": props["window"],
        "antagonist": props["antagonist"],
        "antagonist_bytes": props["antagonist_bytes"],
    }
    problems = []
    for key, (opt, lo, hi) in RUNNER_LIMITS.items():
        node = where[key]
        if (node.get("minimum"), node.get("maximum")) != (lo, hi):
            problems.append(
                f"schema bounds of {key} [{node.get('minimum')}, {node.get('maximum')}] "
                f"differ from the runner's {opt} [{lo}, {hi}] (hxfuse.config.RUNNER_LIMITS)"
            )
    if props["m_tile"].get("multipleOf") != M_TILE_MULTIPLE:
        problems.append(
            f"schema of m_tile is not a multiple of {M_TILE_MULTIPLE} as the runner's "
            "--m-tile requires (hxfuse.config.M_TILE_MULTIPLE)"
        )
    for key, (opt, values) in RUNNER_CHOICES.items():
        node = props[key]
        have = (
            tuple(node["enum"])
            if "enum" in node
            else (tuple(node.get("pattern", "").strip("^$()").split("|")) if "pattern" in node else ())
        )
        if sorted(have) != sorted(values):
            problems.append(
                f"schema values of {key} {list(have)} differ from the runner's {opt} "
                f"{list(values)} (hxfuse.config.RUNNER_CHOICES)"
            )
    target_run = schema["properties"]["target_settings"]["properties"]["host"]["properties"]["run"]
    for key in ("warmup", "rounds"):
        node = target_run["properties"][key]
        if (node.get("minimum"), node.get("maximum")) != RUNNER_LIMITS[key][1:]:
            problems.append(
                f"schema bounds of target_settings.<target>.run.{key} differ from "
                f"the runner's {RUNNER_LIMITS[key][0]} {list(RUNNER_LIMITS[key][1:])}"
            )
    return problems


# Keys that moved: a clear message instead of a silent change of meaning.
MOVED_KEYS = {
    ("run", "affinity"): "placement is now a point parameter: write `affinity: <value>` under "
    "`defaults` (or a sweep's `base`, or a point); values spread, none, "
    "or a map like {host: 1, vec: 1, mx: 0, dma: 0}",
    **{
        ("run", k): f"the wait policy is now a point parameter: write `{k}: <value>` under "
        "`defaults` (or a sweep's `base`, or a point), so a sweep can vary it"
        for k in ("wait", "spin_ns", "early_completion")
    },
}


def _default_filling_validator(schema: dict):
    from jsonschema import Draft202012Validator, validators

    validate_properties = Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema_):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if "default" in sub:
                    instance.setdefault(prop, copy.deepcopy(sub["default"]))
        yield from validate_properties(validator, properties, instance, schema_)

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", _strict_integer)
    cls = validators.extend(Draft202012Validator, {"properties": set_defaults}, type_checker=checker)
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
    drift = schema_limit_problems(schema)
    if drift:
        raise ConfigError("the schema and the runner disagree:\n  " + "\n  ".join(drift))
    moved = [
        f"config.{'.'.join(k)}: {why}"
        for k, why in MOVED_KEYS.items()
        if isinstance(config.get(k[0]), dict) and k[1] in config[k[0]]
    ]
    if moved:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(moved))
    resolve_study(config)
    study_file = config.pop("_study_file", None)
    searches_file = config.pop("_searches_file", None)

    def name_study(lines: list[str]) -> list[str]:
        # problems inside a study file name that file, not config.sweeps
        if searches_file:
            lines = [re.sub(r"^config\.searches\b", f"{searches_file}: searches", ln) for ln in lines]
        if not study_file:
            return lines
        return [re.sub(r"^config\.sweeps\b", f"{study_file}: sweeps", ln) for ln in lines]

    validator = _default_filling_validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = name_study(sorted({_describe(e) for e in errors}))
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    problems = name_study(check_semantics(config))
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
    if target in SDK_TARGETS:
        # the global default is sized for the host; on the cDSP the scratch
        # arena is VTCM, and by default it leaves room for HexKL's HMX region
        # (a sweep, point or target value above the VTCM is refused instead)
        params["scratch_bytes"] = min(params["scratch_bytes"], default_scratch_bytes(config, target))
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


def replicates(config: dict, target: str) -> int:
    """Independent runner invocations per point on *target* (run.replicates)."""
    return int(run_settings(config, target)["replicates"])


def vtcm_bytes(config: dict, target: str) -> int:
    """VTCM of an SDK target's cDSP (target_settings.<target>.vtcm_bytes)."""
    return int(target_settings(config, target).get("vtcm_bytes") or VTCM_BYTES_DEFAULT)


def default_scratch_bytes(config: dict, target: str) -> int:
    """scratch_bytes of an SDK target's points unless a sweep, point or the
    target's params say otherwise: the VTCM minus HexKL's HMX tile region
    (7 MiB of 8 MiB), whether or not this build uses HexKL, so that a point's
    parameters (and hash) do not depend on the environment."""
    return vtcm_bytes(config, target) - HMX_REGION_BYTES


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


def _serial_problems(serials: list, key: str) -> list[str]:
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
    hx = target_settings(config, "hexagon")
    key = "config.target_settings.hexagon"
    problems += _serial_problems(hx.get("device_serials") or [], f"{key}.device_serials")
    if hx.get("device_serials") and hx.get("device_serial"):
        problems.append(
            f"{key}: device_serial and device_serials are both set: give one (device_serials: [a] for a one-phone farm)"
        )
    # fixed vs searched: every candidate of every search space (hxfuse.search.space)
    from hxfuse.search.space import search_problems

    problems += search_problems(config)
    groups = config["run"]["groups"]
    if "A" not in groups:
        problems.append("config.run.groups: must include A (every speedup is relative to A)")
    for target in targets:
        run = run_settings(config, target)
        if run["seed"] + run["replicates"] - 1 > RUNNER_LIMITS["seed"][2]:
            problems.append(
                "config.run.seed: seed + replicates - 1 exceeds the runner's --seed "
                "range (replicate r runs with seed + r)"
            )
    return problems


def _affinity_problems(value: Any, key: str, target: str) -> list[str]:
    """A placement: spread, none, or {engine: core} (docs/runner.md)."""
    if value in ("spread", "none"):
        return []
    if not isinstance(value, dict) or not value:
        return [
            f"{key}: {value!r} must be spread, none or a map engine -> core, e.g. {{host: 1, vec: 1, mx: 0, dma: 0}}"
        ]
    problems = []
    cores = _host_cores() if _targets.get(target).native else None
    for eng, core in value.items():
        if eng not in AFFINITY_ENGINES:
            problems.append(f"{key}.{eng}: unknown engine (engines: {', '.join(AFFINITY_ENGINES)})")
        elif not isinstance(core, int) or isinstance(core, bool) or not 0 <= core <= AFFINITY_MAX_CORE:
            problems.append(f"{key}.{eng}: {core!r} must be an integer core id in [0, {AFFINITY_MAX_CORE}]")
        elif cores is not None and core >= cores:
            problems.append(f"{key}.{eng}: core {core} does not exist on this machine (online cores: 0..{cores - 1})")
    return problems


def _thread_problems(p: dict, pkey: str) -> list[str]:
    """Threads a placement map names must exist in the point: vecN needs
    v_workers > N and bwN needs antagonist > N (the runner refuses both).
    Antagonists are threads like the engines: placed, and counted."""
    value = p["affinity"]
    if not isinstance(value, dict):
        return []
    problems = []
    for eng in value:
        m = re.fullmatch(r"(vec|bw)([0-9])", str(eng))
        if not m:
            continue
        n = int(m.group(2))
        if m.group(1) == "vec" and n >= p["v_workers"]:
            problems.append(
                f"{pkey}.affinity.{eng}: no such vector worker: v_workers "
                f"{p['v_workers']} has workers vec1..vec{p['v_workers'] - 1}"
                if p["v_workers"] > 1
                else f"{pkey}.affinity.{eng}: no such vector worker: v_workers is 1"
            )
        if m.group(1) == "bw" and n >= p.get("antagonist", 0):
            k = p.get("antagonist", 0)
            problems.append(
                f"{pkey}.affinity.{eng}: no such antagonist: antagonist is {k}"
                + (f" (threads bw0..bw{k - 1})" if k else "")
            )
    return problems


def _host_cores() -> int:
    return os.cpu_count() or 1


def _scratch_need(p: dict) -> int:
    """Bytes of the runner's scratch plan (kernels/hxrun/tasks.c, arena.c): D's
    window and, for an onchip V, V's input and output, each slot rounded up to
    64 bytes.  The runner plans every slot whatever the workload."""

    def up(n: int) -> int:
        return (n + 63) & ~63

    rows, row_bytes = p["d_shape"]
    # D's window, and its second window when double-buffered
    need = up(rows * row_bytes) * (2 if p.get("d_buffers", 1) == 2 else 1)
    if p["v_variant"] == "onchip":
        vr, vc = _v_shape(p)
        need += up(2 * up(vr * vc * (4 if p["precision"] == "fp32" else 2)))
    return need


def _v_shape(p: dict) -> tuple[int, int]:
    vr, vc, _ = V_VARIANT_DEFAULTS[p["v_variant"]]
    return tuple(p["v_shape"]) if p["v_shape"] else (vr, vc)


def _point_problems(config: dict, target: str) -> list[str]:
    problems: list[str] = []
    for name, sweep in config["sweeps"].items():
        skey = f"config.sweeps.{name}"
        seen: dict[str, int] = {}
        xs: dict[float, str] = {}
        for i, pt in enumerate(sweep["points"]):
            pkey = f"{skey}.points[{i}]"
            if pt["name"] in seen:
                problems.append(f"{pkey}.name: duplicate point name {pt['name']!r} (also points[{seen[pt['name']]}])")
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
                problems.append(
                    f"{pkey}.d_src_stride: {p['d_src_stride']} is smaller than "
                    f"the row bytes {row_bytes} of d_shape (rows would overlap)"
                )
            stride = p["d_src_stride"] if p["d_src_stride"] is not None else 2 * row_bytes
            if "D" in uses and rows * stride * p["d_repeat"] > 8 << 30:
                problems.append(
                    f"{pkey}.d_repeat: the DDR source of D would take "
                    f"{rows * stride * p['d_repeat'] / 2**30:.1f} GiB (rows x stride x repeat); "
                    "keep it under 8 GiB"
                )
            if p["d_desc_rows"] > rows:
                problems.append(f"{pkey}.d_desc_rows: {p['d_desc_rows']} exceeds the {rows} rows of d_shape")
            # the runner plans D's window (and an onchip V's arrays) whatever
            # the workload, so an mv-only sweep needs room for D's window too
            need = _scratch_need(p)
            if need > p["scratch_bytes"]:
                vr, vc = _v_shape(p)
                v_part = f"onchip V ({vr}x{vc}, in+out) and " if p["v_variant"] == "onchip" else ""
                d_part = "D's two windows (d_buffers 2" if p.get("d_buffers", 1) == 2 else "D's window ("
                problems.append(
                    f"{pkey}.scratch_bytes: {p['scratch_bytes']} is less than the "
                    f"{need} bytes the runner plans for {v_part}{d_part}"
                    f"d_shape {rows}x{row_bytes}), whatever the workload"
                )
            vr, vc = _v_shape(p)
            if p["v_workers"] > vr:
                problems.append(
                    f"{pkey}.v_workers: {p['v_workers']} vector workers for {vr} rows "
                    "(the runner splits rows between workers: at most one per row)"
                )
            problems += _affinity_problems(p["affinity"], f"{pkey}.affinity", target)
            problems += _thread_problems(p, pkey)
            if target in SDK_TARGETS:
                limit, hexkl = scratch_limit(config, target)
                arena = -(-p["scratch_bytes"] // VTCM_ALIGN) * VTCM_ALIGN
                if arena > limit:
                    why = f"minus HexKL's {HMX_REGION_BYTES}-byte HMX tile region " if hexkl else ""
                    problems.append(
                        f"{pkey}.scratch_bytes: {p['scratch_bytes']} bytes of scratch "
                        f"(the arena is VTCM, in {VTCM_ALIGN}-byte pages) do not fit target "
                        f"{target}'s VTCM: {vtcm_bytes(config, target)} bytes "
                        f"(target_settings.{target}.vtcm_bytes) {why}leave {limit}; use "
                        f"scratch_bytes <= {limit}, e.g. "
                        f"target_settings.{target}.params.scratch_bytes: {limit}"
                    )
            if p.get("m_tile") is not None and target in HEXAGON_TARGETS:
                problems.append(
                    f"{pkey}.m_tile: target {target}'s GEMM (HVX, HMX or the reference) "
                    "has a fixed blocking and refuses --m-tile; leave m_tile null there "
                    f"(e.g. target_settings.{target}.params.m_tile: null)"
                )
            if p["calibrate"]:
                for task in p["calibrate"]:
                    if task not in uses:
                        problems.append(
                            f"{pkey}.calibrate.{task}: task {task} is in none of "
                            f"the workloads {sweep['workloads']} of {skey}"
                        )
            if target in HEXAGON_TARGETS and p["precision"] != "u8i8":
                why = _targets.get(target).integer_only
                problems.append(
                    f"{pkey}.precision: target {target} runs integer kernels only "
                    f"({why}); use precision u8i8, e.g. "
                    f"target_settings.{target}.params.precision: u8i8"
                )
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


def points(config: dict) -> list[Point]:
    """Every (target, sweep, workload, point) of the validated config, in config order."""
    out = []
    for target in config["targets"]:
        for sname, sweep in config["sweeps"].items():
            for workload in sweep["workloads"]:
                for pt in sweep["points"]:
                    out.append(
                        Point(
                            target,
                            sname,
                            workload,
                            pt["name"],
                            float(pt["x"]),
                            pt.get("label", pt["name"]),
                            point_params(config, sname, pt, target),
                        )
                    )
    return out


def point_table(config: dict):
    """The point table as a pandas DataFrame (one row per target file)."""
    import pandas as pd

    rows = []
    for i, p in enumerate(points(config)):
        row = {
            "target": p.target,
            "sweep": p.sweep,
            "workload": p.workload,
            "point": p.point,
            "x": p.x,
            "label": p.label,
            "order": i,
            "variable": config["sweeps"][p.sweep]["variable"],
        }
        row.update({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in p.params.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def aggregate_points(config: dict, target: str) -> list[dict]:
    """The aggregate job's view of a target's points (its params: a changed x,
    label or parameter reruns the summary): id, sweep, point, x, label,
    params, the number of replicates and each replicate's point_hash."""
    return [
        {
            "id": p.id,
            "sweep": p.sweep,
            "point": p.point,
            "x": p.x,
            "label": p.label,
            "params": p.params,
            "replicates": replicates(config, target),
            # what each replicate's sidecar must say it measured (pipeline: stale replicates are refused)
            "point_hashes": [point_hash(config, p, r) for r in range(replicates(config, target))],
        }
        for p in points(config)
        if p.target == target
    ]


def target_info(target: str) -> dict:
    """What a target is (emulated, status, group B), as a job parameter."""
    return _targets.info(target)


def find_point(config: dict, target: str, sweep: str, workload: str, point: str) -> Point:
    for p in points(config):
        if (p.target, p.sweep, p.workload, p.point) == (target, sweep, workload, point):
            return p
    raise KeyError(f"no point {target}/{sweep}/{workload}/{point} in the config")


def affinity_arg(value: Any) -> str:
    """--affinity value: spread, none, or engine=core pairs in a fixed order."""
    if isinstance(value, dict):
        return ",".join(f"{e}={value[e]}" for e in AFFINITY_ENGINES if e in value)
    return str(value)


def runner_args(config: dict, p: Point, replicate: int = 0) -> list[str]:
    """hxrun options for one replicate of one point (docs/runner.md), without
    --out/--npy-dir.  Replicate r runs with seed run.seed + r: new inputs and
    a new round order, so replicates are independent samples of the point."""
    pp, run = p.params, run_settings(config, p.target)
    if not 0 <= replicate < int(run["replicates"]):
        raise KeyError(
            f"no replicate {replicate} of {p.target}/{p.id}: run.replicates is "
            f"{run['replicates']} (replicates 0..{int(run['replicates']) - 1})"
        )
    args = [
        "--workloads",
        p.workload,
        "--precision",
        pp["precision"],
        "--m-shape",
        ",".join(map(str, pp["m_shape"])),
        "--v-variant",
        pp["v_variant"],
        "--v-workers",
        str(pp["v_workers"]),
        "--d-shape",
        ",".join(map(str, pp["d_shape"])),
        "--d-desc-rows",
        str(pp["d_desc_rows"]),
        "--d-repeat",
        str(pp["d_repeat"]),
        "--scratch-bytes",
        str(pp["scratch_bytes"]),
        "--warmup",
        str(run["warmup"]),
        "--rounds",
        str(run["rounds"]),
        "--seed",
        str(run["seed"] + replicate),
        "--affinity",
        affinity_arg(pp["affinity"]),
        "--wait",
        pp["wait"],
        "--spin-ns",
        str(pp["spin_ns"]),
        "--early-completion",
        "on" if pp["early_completion"] else "off",
        "--groups",
        ",".join(run["groups"]),
    ]
    # options passed only where the point differs from the runner's default
    # (RUNNER_DEFAULTS): the runner's meta.args records every value anyway
    for key in RUNNER_DEFAULTS:
        v = pp.get(key, RUNNER_DEFAULTS[key])
        if v == RUNNER_DEFAULTS[key] or (key == "antagonist_bytes" and not pp.get("antagonist")):
            continue
        opt = (RUNNER_LIMITS.get(key) or RUNNER_CHOICES[key])[0]
        args += [opt, str(v)]
    if pp["v_shape"] is not None:
        args += ["--v-shape", ",".join(map(str, pp["v_shape"]))]
    if pp["v_passes"] is not None:
        args += ["--v-passes", str(pp["v_passes"])]
    if pp["d_src_stride"] is not None:
        args += ["--d-src-stride", str(pp["d_src_stride"])]
    if pp["calibrate"]:
        args += ["--calibrate", ",".join(f"{k}={_plain(v)}" for k, v in sorted(pp["calibrate"].items()))]
    return args


def _plain(v: float) -> str:
    """A number without exponent notation (the runner parses plain decimals)."""
    return str(int(v)) if float(v).is_integer() else f"{v:.6f}".rstrip("0")


# --------------------------------------------------------------------------
# targets: what a target needs on this machine, its make variables, its
# run prefix and environment


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
                if not which("adb"):
                    problems.append(
                        pre + "adb is not installed: apt-get install adb (or Android "
                        "platform-tools) and connect the phone with USB debugging on"
                    )
                farm = device_serials(config, environ)
                if not target_settings(config, target).get("device_serials"):
                    problems += [pre + m for m in _serial_problems(farm, "HX_DEVICE_SERIALS")]
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


# --------------------------------------------------------------------------
# hashes


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()


# The service mode's keys (hxfuse/serve/config.py) have their own rules and
# outputs: a change there must not rerun the summary of the A-D sweeps.
SERVE_KEYS = ("serve", "serve_study")


def config_hash(config: dict) -> str:
    """sha256 (12 hex digits) of the whole validated config (service-mode keys aside)."""
    return hashlib.sha256(_canonical({k: v for k, v in config.items() if k not in SERVE_KEYS})).hexdigest()[:12]


def point_hash(config: dict, p: Point, replicate: int = 0) -> str:
    """sha256 (12 hex digits) of what one runner invocation depends on."""
    args = runner_args(config, p, replicate)
    return hashlib.sha256(_canonical({"target": p.target, "args": args})).hexdigest()[:12]


def _deep_merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def main(argv: list[str] | None = None) -> int:
    """python -m hxfuse.config [FILE ...]: validate config.yaml with FILEs
    merged over it, as `snakemake --configfile FILE ...` would, and print the
    points; a YAML error names the file and line (Snakemake's own message for
    a --configfile names neither)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m hxfuse.config", description=main.__doc__)
    ap.add_argument("files", nargs="*", help="--configfile files, merged over --base in order")
    ap.add_argument("--base", default="config.yaml", help="the Snakefile's config (default: %(default)s)")
    a = ap.parse_args(argv)
    try:
        cfg = load_yaml(a.base) if Path(a.base).is_file() else {}
        for f in a.files:
            cfg = _deep_merge(cfg or {}, load_yaml(f) or {})
        validate(cfg)
    except ConfigError as err:
        print(f"hxfuse: {err}", file=sys.stderr)
        return 1
    pts = points(cfg)
    print(
        f"study {cfg.get('study') or '(sweeps given directly)'}: {len(pts)} points, "
        f"{sum(replicates(cfg, p.target) for p in pts)} runner jobs"
    )
    for p in pts:
        print(f"  {p.target}/{p.id}")
    from hxfuse.search.space import search_summary

    for line in search_summary(cfg):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
