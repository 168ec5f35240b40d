"""Graph studies (workload 4): which model-block graphs the pipeline runs.

``config.graph_study`` names a study file (``config/studies/<name>.yaml``, or
a path; null runs none).  The file::

    description: ...
    graphs:
      run: {warmup: 3, rounds: 20, replicates: 3, timeout_s: 120}   # all optional
      points:
        - name: mobilenetv2          # letters, digits, _ and -
          model: mobilenetv2         # a builder of hxfuse.graph.build
          label: "MobileNetV2 block"  # optional
          params: {images: 2}        # the builder's parameters (optional)
          reuse: false               # share storage between buffers (optional)

:func:`load_study` checks every key, value and model, and builds every graph
once (a builder's own check, e.g. heads not dividing d_model, fails here),
so a bad study stops the workflow before any job, with one line per problem.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from hxfuse.config.load import ConfigError, load_yaml, study_path
from hxfuse.graph.profile import levels
from hxfuse.graph.build import BUILDERS, build

DEFAULT_GRAPH_STUDY = "graphs-default"
RUN_DEFAULTS = {"warmup": 3, "rounds": 20, "replicates": 3, "timeout_s": 120.0}
RUN_LIMITS = {"warmup": (0, 1_000_000), "rounds": (1, 10_000_000), "replicates": (1, 100), "timeout_s": (0.001, 86_400)}
POINT_KEYS = ("name", "model", "label", "params", "reuse")
NAME_RE = r"[A-Za-z][A-Za-z0-9_-]*"


def _problems_run(run, where: str) -> list[str]:
    if run is None:
        return []
    if not isinstance(run, dict):
        return [f"{where}.run: a mapping of {', '.join(RUN_DEFAULTS)}"]
    out = []
    for k, v in run.items():
        if k not in RUN_LIMITS:
            out.append(f"{where}.run: unknown key {k!r} (known: {', '.join(RUN_LIMITS)})")
            continue
        lo, hi = RUN_LIMITS[k]
        ok_type = isinstance(v, (int, float)) if k == "timeout_s" else isinstance(v, int)
        if isinstance(v, bool) or not ok_type or not lo <= v <= hi:
            out.append(
                f"{where}.run.{k}: {v!r} is not {'a number' if k == 'timeout_s' else 'an integer'} in [{lo}, {hi}]"
            )
    return out


def _problems_point(i: int, p, where: str) -> list[str]:
    w = f"{where}.points[{i}]"
    if not isinstance(p, dict):
        return [f"{w}: a mapping with {', '.join(POINT_KEYS)}"]
    out = [f"{w}: unknown key {k!r} (known: {', '.join(POINT_KEYS)})" for k in p if k not in POINT_KEYS]
    name = p.get("name")
    if not isinstance(name, str) or not re.fullmatch(NAME_RE, name):
        out.append(f"{w}.name: {name!r} is not a name (a letter, then letters, digits, _ or -)")
    else:
        w = f"{where}.points[{i}] ({name})"
    model = p.get("model")
    if model not in BUILDERS:
        out.append(f"{w}.model: {model!r} is not a graph model (known: {', '.join(BUILDERS)})")
        return out
    params = p.get("params") or {}
    if not isinstance(params, dict):
        return out + [f"{w}.params: a mapping of {model}'s parameters"]
    known = inspect.signature(BUILDERS[model]).parameters
    for k, v in params.items():
        if k not in known:
            out.append(f"{w}.params: {model} has no parameter {k!r} (known: {', '.join(known)})")
        elif isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 4096:
            out.append(f"{w}.params.{k}: {v!r} is not an integer in [1, 4096]")
    if "reuse" in p and not isinstance(p["reuse"], bool):
        out.append(f"{w}.reuse: {p['reuse']!r} is not true or false")
    if "label" in p and not isinstance(p["label"], str):
        out.append(f"{w}.label: {p['label']!r} is not a string")
    if not out:
        try:
            levels(build(model, params, bool(p.get("reuse"))))
        except ValueError as exc:
            out.append(f"{w}: {exc}")
    return out


def study_problems(doc, where: str) -> list[str]:
    if not isinstance(doc, dict) or "graphs" not in doc:
        return [f"{where}: a graph study is a mapping with `graphs` (and optionally `description`)"]
    out = [
        f"{where}: unknown key {k!r} (allowed: description, graphs)" for k in doc if k not in ("description", "graphs")
    ]
    g = doc["graphs"]
    if not isinstance(g, dict):
        return out + [f"{where}.graphs: a mapping with `points` (and optionally `run`)"]
    out += [f"{where}.graphs: unknown key {k!r} (allowed: run, points)" for k in g if k not in ("run", "points")]
    out += _problems_run(g.get("run"), f"{where}.graphs")
    pts = g.get("points")
    if not isinstance(pts, list) or not pts:
        return out + [f"{where}.graphs.points: a non-empty list of points"]
    for i, p in enumerate(pts):
        out += _problems_point(i, p, f"{where}.graphs")
    names = [p.get("name") for p in pts if isinstance(p, dict)]
    out += [f"{where}.graphs.points: name {n!r} given twice" for n in sorted(set(names), key=str) if names.count(n) > 1]
    return out


def load_study(study: str | None, cwd: str | Path | None = None) -> dict:
    """The study's run settings and points (``{"run": ..., "points": [...]}``);
    none when *study* is None.  Raises ConfigError listing every problem."""
    if study is None:
        return {"run": dict(RUN_DEFAULTS), "points": []}
    if not isinstance(study, str) or not study:
        raise ConfigError(f"invalid configuration:\n  config.graph_study: {study!r} is not a study name or path")
    path = study_path(study, cwd)
    if not path.is_file():
        raise ConfigError(f"invalid configuration:\n  config.graph_study: no study file {path}")
    doc = load_yaml(path)
    problems = study_problems(doc, str(path))
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    g = doc["graphs"]
    points = [
        {
            "name": p["name"],
            "model": p["model"],
            "label": p.get("label", p["name"]),
            "params": dict(p.get("params") or {}),
            "reuse": bool(p.get("reuse", False)),
        }
        for p in g["points"]
    ]
    return {"run": {**RUN_DEFAULTS, **(g.get("run") or {})}, "points": points}


def runner_args(run: dict, replicate: int, seed: int) -> list[str]:
    """hxgraph's options for one replicate (replicate r: seed + r)."""
    return ["--warmup", str(run["warmup"]), "--rounds", str(run["rounds"]), "--seed", str(seed + replicate)]
