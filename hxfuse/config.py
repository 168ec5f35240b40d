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

Hashes: :func:`config_hash` hashes the whole validated config (provenance);
:func:`point_hash` hashes only what one runner invocation depends on, so that
changing one point's parameters reruns that point only.
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml"

POINT_KEYS = (
    "precision", "m_shape", "v_variant", "v_shape", "v_passes", "v_workers",
    "d_shape", "d_src_stride", "d_desc_rows", "scratch_bytes", "calibrate",
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


def point_params(config: dict, sweep: str, point: dict) -> dict:
    """The effective parameters of one point: defaults < sweep.base < point."""
    params = {k: copy.deepcopy(config["defaults"][k]) for k in POINT_KEYS}
    params.update(copy.deepcopy(config["sweeps"][sweep].get("base", {})))
    params.update({k: copy.deepcopy(v) for k, v in point.items() if k in POINT_KEYS})
    return params


def check_semantics(config: dict) -> list[str]:
    """Problems a JSON schema cannot express.  Returns messages naming keys."""
    problems: list[str] = []
    targets = config.get("targets", [])
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
            p = point_params(config, name, pt)
            rows, row_bytes = p["d_shape"]
            uses = set().union(*(WORKLOAD_TASKS[w] for w in sweep["workloads"]))
            if p["d_src_stride"] is not None and p["d_src_stride"] < row_bytes:
                problems.append(f"{pkey}.d_src_stride: {p['d_src_stride']} is smaller than "
                                f"the row bytes {row_bytes} of d_shape (rows would overlap)")
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
            if "hexagon-qemu" in targets and p["precision"] != "u8i8":
                problems.append(f"{pkey}.precision: target hexagon-qemu has no HVX floating "
                                f"point; use precision u8i8")
    groups = config["run"]["groups"]
    if "A" not in groups:
        problems.append("config.run.groups: must include A (every speedup is relative to A)")
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
                                     point_params(config, sname, pt)))
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
    pp, run = p.params, config["run"]
    args = [
        "--workloads", p.workload,
        "--precision", pp["precision"],
        "--m-shape", ",".join(map(str, pp["m_shape"])),
        "--v-variant", pp["v_variant"],
        "--v-workers", str(pp["v_workers"]),
        "--d-shape", ",".join(map(str, pp["d_shape"])),
        "--d-desc-rows", str(pp["d_desc_rows"]),
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
