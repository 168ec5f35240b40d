"""Configuration of the service mode (docs/serve.md): the ``serve`` block of
the config and the serve study named by ``serve_study``.

Validated by workflow/rules/serve_common.smk when the workflow is read, before any
job: every problem is listed with its key (``config.serve.rate`` ...), an
unknown key included, and the workflow stops.  Defaults fill what the block
omits.  A serve study (config/studies/<name>.yaml with ``serve_points``,
optionally overriding other serve keys) replaces the points whole.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
STUDIES_DIR = REPO_ROOT / "config" / "studies"
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")

# One small point, sized so that the default `all` spends seconds on it:
# 150 requests at 400/s replay in about 0.4 s; 3 policies x 2 repetitions x 2
# replicates = 12 replays.  Service times on a 2-core x86-64 host: compute
# (GEMM 256x256x256) ~0.5 ms, bandwidth (GEMV 512x2048 + 256 KiB copy) ~0.25 ms.
DEFAULTS: dict[str, Any] = {
    "replicates": 2,
    "reps": 2,
    "requests": 150,
    "seed": 1,
    "compute_share": 0.5,
    "compute_sizes": [256],
    "bandwidth_sizes": [512],
    "deadline_ms": {"compute": 10.0, "bandwidth": 2.0},
    "gemm_nk": [256, 256],
    "gemv_cols": 2048,
    "copy_row_bytes": 512,
    "copy_src_stride": 1024,
    "pool": 2,
    "timeout_s": 300,
    "points": [{"name": "default", "rate": 400, "window_us": 300}],
}
STUDY_KEYS = ("description", "serve_points") + tuple(k for k in DEFAULTS if k != "points")


class ServeConfigError(ValueError):
    pass


@dataclass(frozen=True)
class ServePoint:
    name: str
    rate: float
    window_us: int


def _int(v, lo, hi) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _num(v, lo, hi, open_lo=False) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return False
    return (v > lo if open_lo else v >= lo) and v <= hi


def _sizes_problem(v) -> str | None:
    if not isinstance(v, list) or not 1 <= len(v) <= 16 or not all(_int(x, 1, 4096) for x in v):
        return "a list of 1 to 16 integers in [1, 4096]"
    if len(set(v)) != len(v):
        return "sizes must differ"
    return None


def _points_problems(points, key: str) -> list[str]:
    if not isinstance(points, list) or not points:
        return [f"{key}: a non-empty list of {{name, rate, window_us}}"]
    out, seen = [], set()
    for i, p in enumerate(points):
        k = f"{key}[{i}]"
        if not isinstance(p, dict):
            out.append(f"{k}: a mapping with name, rate (requests/s) and window_us")
            continue
        extra = sorted(set(p) - {"name", "rate", "window_us"})
        if extra:
            out.append(f"{k}: unknown key(s) {', '.join(map(repr, extra))} (allowed: name, rate, window_us)")
        missing = [m for m in ("name", "rate", "window_us") if m not in p]
        if missing:
            out.append(f"{k}: missing {', '.join(missing)}")
        name = p.get("name")
        if "name" in p and not (isinstance(name, str) and NAME.match(name)):
            out.append(f"{k}.name: {name!r} must be a letter then letters, digits, _ or - (at most 40)")
        elif name in seen:
            out.append(f"{k}.name: {name!r} given twice (point names must differ)")
        seen.add(name)
        if "rate" in p and not _num(p["rate"], 0, 1e6, open_lo=True):
            out.append(f"{k}.rate: {p['rate']!r} is not a number of requests per second in (0, 1e6]")
        if "window_us" in p and not _int(p["window_us"], 0, 10_000_000):
            out.append(f"{k}.window_us: {p['window_us']!r} is not an integer in [0, 10000000]")
    return out


def problems(s: dict, where: str = "config.serve") -> list[str]:
    """Every problem of a filled serve block (messages name the key)."""
    out = []
    extra = sorted(set(s) - set(DEFAULTS))
    if extra:
        out.append(f"{where}: unknown key(s) {', '.join(map(repr, extra))} (allowed: {', '.join(DEFAULTS)})")
    ints = {
        "replicates": (1, 20),
        "reps": (1, 100),
        "requests": (1, 100000),
        "seed": (0, 2**31 - 1 - 20),
        "gemv_cols": (1, 65536),
        "copy_row_bytes": (1, 1 << 20),
        "copy_src_stride": (1, 1 << 21),
        "pool": (1, 16),
    }
    for k, (lo, hi) in ints.items():
        if not _int(s.get(k), lo, hi):
            out.append(f"{where}.{k}: {s.get(k)!r} is not an integer in [{lo}, {hi}]")
    if not _num(s.get("compute_share"), 0, 1):
        out.append(f"{where}.compute_share: {s.get('compute_share')!r} is not a number in [0, 1]")
    if not _num(s.get("timeout_s"), 0, 86400, open_lo=True):
        out.append(f"{where}.timeout_s: {s.get('timeout_s')!r} is not a number of seconds in (0, 86400]")
    for k in ("compute_sizes", "bandwidth_sizes"):
        why = _sizes_problem(s.get(k))
        if why:
            out.append(f"{where}.{k}: {s.get(k)!r}: {why}")
    dl = s.get("deadline_ms")
    if (
        not isinstance(dl, dict)
        or set(dl) != {"compute", "bandwidth"}
        or not all(_num(v, 0, 1e6, open_lo=True) for v in dl.values())
    ):
        out.append(f"{where}.deadline_ms: {dl!r} must be {{compute: MS, bandwidth: MS}} with positive numbers")
    nk = s.get("gemm_nk")
    if not isinstance(nk, list) or len(nk) != 2 or not all(_int(x, 1, 4096) for x in nk):
        out.append(f"{where}.gemm_nk: {nk!r} is not [N, K] with integers in [1, 4096]")
    if (
        _int(s.get("copy_row_bytes"), 1, 1 << 20)
        and _int(s.get("copy_src_stride"), 1, 1 << 21)
        and s["copy_src_stride"] < s["copy_row_bytes"]
    ):
        out.append(
            f"{where}.copy_src_stride: {s['copy_src_stride']} is below copy_row_bytes "
            f"{s['copy_row_bytes']} (source rows would overlap)"
        )
    out += _points_problems(s.get("points"), f"{where}.points")
    return out


def _load_study(study: str) -> tuple[dict, str]:
    path = STUDIES_DIR / f"{study}.yaml" if NAME.match(study) else Path(study)
    if not path.is_file():
        avail = ", ".join(sorted(q.stem for q in STUDIES_DIR.glob("*.yaml")))
        raise ServeConfigError(f"config.serve_study: no study file {path} (studies: {avail})")
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ServeConfigError(f"{path}: YAML error: {exc}") from None
    if not isinstance(doc, dict) or "serve_points" not in doc:
        raise ServeConfigError(
            f"{path}: a serve study is a mapping with `serve_points` (and optionally "
            f"`description` and serve keys to override)"
        )
    extra = sorted(set(doc) - set(STUDY_KEYS))
    if extra:
        raise ServeConfigError(
            f"{path}: unknown key(s) {', '.join(map(repr, extra))} (allowed: {', '.join(STUDY_KEYS)})"
        )
    return doc, str(path)


def resolve(config: dict) -> dict:
    """The filled, validated serve block of *config*: defaults < config.serve
    < the serve study (config.serve_study).  Raises ServeConfigError listing
    every problem."""
    block = config.get("serve")
    if block is None:
        block = {}
    if not isinstance(block, dict):
        raise ServeConfigError(f"invalid configuration:\n  config.serve: {block!r} is not a mapping")
    s = copy.deepcopy(DEFAULTS)
    s.update(copy.deepcopy(block))
    where = "config.serve"
    study = config.get("serve_study")
    if study is not None:
        if not isinstance(study, str) or not study:
            raise ServeConfigError(f"invalid configuration:\n  config.serve_study: {study!r} is not a study name")
        doc, where = _load_study(study)
        s.update({k: copy.deepcopy(v) for k, v in doc.items() if k not in ("description", "serve_points")})
        s["points"] = copy.deepcopy(doc["serve_points"])
    errs = problems(s, where)
    if errs:
        errs = [e.replace(f"{where}.points", f"{where}: serve_points") if where != "config.serve" else e for e in errs]
        raise ServeConfigError("invalid configuration:\n  " + "\n  ".join(errs))
    return s


def points(s: dict) -> list[ServePoint]:
    return [ServePoint(p["name"], float(p["rate"]), int(p["window_us"])) for p in s["points"]]


def trace_params(s: dict, p: ServePoint, replicate: int) -> dict:
    """What the trace of one replicate depends on (hxfuse.serve.stats.make_trace)."""
    return {
        "rate_per_s": p.rate,
        "n": s["requests"],
        "seed": s["seed"] + replicate,
        "compute_share": s["compute_share"],
        "compute_sizes": s["compute_sizes"],
        "bandwidth_sizes": s["bandwidth_sizes"],
        "deadline_ms": s["deadline_ms"],
    }


def runner_args(s: dict, p: ServePoint, replicate: int) -> list[str]:
    """hxserve's options for one replicate (the trace added by the rule, out,
    npy-dir and the point's label by the run wrapper)."""
    return [
        "--policies",
        "A,B,D",
        "--reps",
        str(s["reps"]),
        "--window-us",
        str(p.window_us),
        "--seed",
        str(s["seed"] + replicate),
        "--gemm-nk",
        f"{s['gemm_nk'][0]},{s['gemm_nk'][1]}",
        "--gemv-cols",
        str(s["gemv_cols"]),
        "--copy-row-bytes",
        str(s["copy_row_bytes"]),
        "--copy-src-stride",
        str(s["copy_src_stride"]),
        "--pool",
        str(s["pool"]),
        # the run wrapper adds the point's label (hxfuse.runner.runpoint)
        "--label",
        f"replicate={replicate}",
    ]
