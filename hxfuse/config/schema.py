"""The configuration's JSON Schema: loading it, its bounds, its messages.

``workflow/schemas/config.schema.yaml`` (JSON Schema 2020-12, every object
closed) says what each key may hold and fills the defaults
(:func:`default_filling_validator`); :func:`describe` turns each violation
into one line naming the key (``config.run.rounds: 0 is less than the
minimum of 1``).  Integers are strict: 5.0 is not one, as the runner refuses
it.

The schema's bounds and named values must equal what hxrun accepts
(``hxfuse.runner.cli``'s table): :func:`schema_limit_problems` says where
they differ, and validation refuses a schema that drifts, so the two cannot
silently disagree.  Keys that moved (:data:`MOVED_KEYS`) get a message
saying where they went instead of a silent change of meaning.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, Iterable

import yaml

from hxfuse.config.load import REPO_ROOT
from hxfuse.runner.cli import M_TILE_MULTIPLE, RUNNER_CHOICES, RUNNER_LIMITS

SCHEMA_PATH = REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml"


def load_schema(path: Path | str = SCHEMA_PATH) -> dict:
    # libyaml's loader where PyYAML has it: the same document, read in a
    # tenth of the time, and every Snakemake invocation reads it (the file is
    # the project's own, so the pure-Python loader's error messages, kept for
    # users' configs in load.py, are not needed here)
    with open(path) as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


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
                f"differ from the runner's {opt} [{lo}, {hi}] (hxfuse.runner.cli.RUNNER_LIMITS)"
            )
    if props["m_tile"].get("multipleOf") != M_TILE_MULTIPLE:
        problems.append(
            f"schema of m_tile is not a multiple of {M_TILE_MULTIPLE} as the runner's "
            "--m-tile requires (hxfuse.runner.cli.M_TILE_MULTIPLE)"
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
                f"{list(values)} (hxfuse.runner.cli.RUNNER_CHOICES)"
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


def default_filling_validator(schema: dict):
    # jsonschema is imported when a config is validated, not by every module
    # that reads the schema's path
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


def describe(err) -> str:
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
        # x-why: the schema's reason for the allowed values, where they are
        # not self-explanatory (e.g. the simulator's one mode)
        why = f" ({err.schema['x-why']})" if err.schema.get("x-why") else ""
        return f"{key}: {err.instance!r} is not one of {err.validator_value}{why}"
    if err.validator == "propertyNames":
        return f"{key}: invalid name {err.instance!r}: {err.message}"
    return f"{key}: {err.message}"
