"""The point table, each replicate's runner arguments, and the hashes.

The sweeps expand into the *point table* (:func:`points`): one row per
(target, sweep, workload, point), each its own target file.
:func:`runner_args` is one replicate's hxrun command line, written by
``hxfuse.runner.cli`` from the point's parameters and the target's run
settings.

Hashes: :func:`config_hash` hashes the whole validated config (provenance);
:func:`point_hash` hashes only what one runner invocation depends on, so that
changing one point's parameters reruns that point only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from hxfuse.config.params import point_params, replicates, run_settings
from hxfuse.runner import cli as runner_cli

# path of one point's files, relative to results/<target>/<stage>/
POINT_PATTERN = "{sweep}/{workload}/{point}"


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


def find_point(config: dict, target: str, sweep: str, workload: str, point: str) -> Point:
    for p in points(config):
        if (p.target, p.sweep, p.workload, p.point) == (target, sweep, workload, point):
            return p
    raise KeyError(f"no point {target}/{sweep}/{workload}/{point} in the config")


def runner_args(config: dict, p: Point, replicate: int = 0) -> list[str]:
    """hxrun options for one replicate of one point (docs/runner.md), without
    --out/--npy-dir.  Replicate r runs with seed run.seed + r: new inputs and
    a new round order, so replicates are independent samples of the point."""
    run = run_settings(config, p.target)
    if not 0 <= replicate < int(run["replicates"]):
        raise KeyError(
            f"no replicate {replicate} of {p.target}/{p.id}: run.replicates is "
            f"{run['replicates']} (replicates 0..{int(run['replicates']) - 1})"
        )
    values = {
        **p.params,
        "workloads": p.workload,
        "warmup": run["warmup"],
        "rounds": run["rounds"],
        "seed": run["seed"] + replicate,
        "groups": run["groups"],
    }
    return runner_cli.argv(values)


# --------------------------------------------------------------------------
# hashes


def canonical(obj: Any) -> bytes:
    """The bytes a hash is taken of: JSON with sorted keys, no spaces."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str).encode()


# The service mode's keys (hxfuse/serve/config.py) have their own rules and
# outputs: a change there must not rerun the summary of the A-D sweeps.
SERVE_KEYS = ("serve", "serve_study")


def config_hash(config: dict) -> str:
    """sha256 (12 hex digits) of the whole validated config (service-mode keys aside)."""
    return hashlib.sha256(canonical({k: v for k, v in config.items() if k not in SERVE_KEYS})).hexdigest()[:12]


def point_hash(config: dict, p: Point, replicate: int = 0) -> str:
    """sha256 (12 hex digits) of what one runner invocation depends on."""
    args = runner_args(config, p, replicate)
    return hashlib.sha256(canonical({"target": p.target, "args": args})).hexdigest()[:12]
