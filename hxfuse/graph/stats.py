"""Tidy tables and the summary of graph points (workload 4, docs/graphs.md).

- :func:`trial_table`: one row per measured trial of one replicate: group,
  round, ``device_ns`` (the host's first submit to its seeing the last
  completion), ``e2e_ns`` (that plus the trial's preparation: allocating the
  buffers and workspaces, copying the graph's inputs in, and freeing),
  ``prep_ns``, the summed node CPU time and ``parallelism`` = node CPU time /
  device time (about 1 when the nodes take turns on one core, up to the
  engines in use when they really run at once).
- :func:`node_table`: one row per node per trial (launch, begin, end,
  engine), for timelines and for the group-semantics tests.
- :func:`summarize`: per point and group the median device and end-to-end
  times with two-level bootstrap intervals (replicates, then rounds:
  hxfuse.analysis.stats), and the paired speedups of D over A, B and C (ratio of the
  two groups' times in the same round of the same replicate), for device
  and end-to-end times.  A point whose check failed keeps its medians and
  gets no speedup.

Pure functions over DataFrames; reading files only in the ``read_*``
helpers.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from hxfuse.analysis import environment, stats, verdicts
from hxfuse.model import GROUPS
from hxfuse.runner import jsonl

SPEEDUPS = (("DA", "A"), ("DB", "B"), ("DC", "C"))
TIMES = ("device", "e2e")


def read_records(path: str | Path) -> list[dict]:
    """Every record of one graph runner output, meta first and end last
    (hxfuse.runner.jsonl, the one reader: IncompleteRunError naming the file
    and line of a malformed or unfinished run)."""
    return jsonl.read_records(path).records


def machine_load(records: list[dict]) -> dict:
    """Cores other work kept busy around one replicate (the runner's meta
    and end records; -1 or missing where unreadable): the larger of before
    and after, and the 1-minute load average before (hxfuse.analysis.environment)."""
    return environment.replicate_load(records[0], records[-1])


def trial_table(records: list[dict], point: str, replicate: int) -> pd.DataFrame:
    rows = []
    for r in records:
        if r.get("record") != "trial" or r.get("warmup"):
            continue
        cpu = sum(n["cpu_ns"] for n in r["nodes"])
        busy = sum(n["end"] - n["begin"] for n in r["nodes"])
        prep = r["alloc_ns"] + r["input_ns"] + r["free_ns"]
        rows.append(
            {
                "point": point,
                "replicate": replicate,
                "round": r["round"],
                "group": r["group"],
                "device_ns": r["device_ns"],
                "e2e_ns": r["e2e_ns"],
                "prep_ns": prep,
                "alloc_ns": r["alloc_ns"],
                "input_ns": r["input_ns"],
                "free_ns": r["free_ns"],
                "node_busy_ns": busy,
                "node_cpu_ns": cpu,
                "pack_ns": sum(n["pack_ns"] for n in r["nodes"]),
                "parallelism": cpu / r["device_ns"] if r["device_ns"] else math.nan,
                "checksums_ok": bool(r["checksums_ok"]),
            }
        )
    return pd.DataFrame(rows)


def node_table(records: list[dict], include_warmup: bool = False) -> pd.DataFrame:
    meta = records[0]
    cls = {n["name"]: n["class"] for n in meta["graph"]["nodes"]}
    rows = []
    for r in records:
        if r.get("record") != "trial" or (r.get("warmup") and not include_warmup):
            continue
        for n in r["nodes"]:
            rows.append(
                {
                    "round": r["round"],
                    "group": r["group"],
                    "node": n["name"],
                    "class": cls[n["name"]],
                    "engine": n["engine"],
                    "launch": n["launch"],
                    "begin": n["begin"],
                    "end": n["end"],
                    "cpu_ns": n["cpu_ns"],
                    "host_begin": r["host_begin"],
                    "host_end": r["host_end"],
                }
            )
    return pd.DataFrame(rows)


def paired_ratios(trials: pd.DataFrame, num: str, den: str, time: str = "device") -> pd.DataFrame:
    """T_num / T_den per (replicate, round) where both groups ran: the
    speedup of group *den* over group *num* (D/A = T_A / T_D)."""
    col = f"{time}_ns"
    wide = trials.pivot_table(index=["replicate", "round"], columns="group", values=col, aggfunc="first")
    if num not in wide or den not in wide:
        return pd.DataFrame(columns=["replicate", "round", "ratio"])
    r = (wide[num] / wide[den]).dropna().rename("ratio").reset_index()
    return r


def summarize_point(
    trials: pd.DataFrame,
    failed: bool,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    level: float = stats.DEFAULT_LEVEL,
    seed: int = stats.DEFAULT_SEED,
) -> dict:
    out: dict = {"trials": int(len(trials)), "replicates": int(trials["replicate"].nunique()) if len(trials) else 0}
    for g in GROUPS:
        sub = trials[trials["group"] == g]
        for t in TIMES:
            e = stats.hierarchical_bootstrap_median(sub[f"{t}_ns"], sub["replicate"], n_resamples, level, seed)
            out[f"{g}_{t}_ns"], out[f"{g}_{t}_ns_lo"], out[f"{g}_{t}_ns_hi"] = e.value, e.lo, e.hi
        out[f"{g}_prep_ns"] = float(sub["prep_ns"].median()) if len(sub) else math.nan
        out[f"{g}_parallelism"] = float(sub["parallelism"].median()) if len(sub) else math.nan
    for key, other in SPEEDUPS:
        for t in TIMES:
            name = f"{key}_{t}"
            if failed:
                out[name] = out[f"{name}_lo"] = out[f"{name}_hi"] = math.nan
                continue
            r = paired_ratios(trials, other, "D", t)
            e = stats.hierarchical_bootstrap_median(r["ratio"], r["replicate"], n_resamples, level, seed)
            out[name], out[f"{name}_lo"], out[f"{name}_hi"] = e.value, e.lo, e.hi
    d = trials[trials["group"] == "D"]
    out["D_prep_share"] = float((d["prep_ns"] / d["e2e_ns"]).median()) if len(d) else math.nan
    return out


def verdict(lo: float, hi: float, min_effect: float) -> str:
    """The reading of a speedup interval against the minimum effect band
    (as for the sweep points, docs/metrics.md)."""
    return verdicts.side_word(lo, hi, min_effect)


def summarize(
    trials: pd.DataFrame,
    points: list[dict],
    checks: dict[str, list[dict]],
    profiles: dict[str, dict],
    analysis: dict,
    load: dict[str, list[dict]] | None = None,
) -> pd.DataFrame:
    """One row per point: its description (model, label, reuse), its ready
    profile's headline numbers, the medians and speedups, ``failed`` with
    the reasons of its failed replicates, and (from *load*: per point, one
    :func:`machine_load` per replicate) the most cores other work kept busy
    around any of its replicates."""
    rows = []
    for p in points:
        name = p["name"]
        reasons = [
            f"rep{c.get('replicate')}: {r}" for c in checks.get(name, []) if c["status"] != "ok" for r in c["reasons"]
        ]
        sub = trials[trials["point"] == name] if len(trials) else trials
        row = {
            "point": name,
            "model": p["model"],
            "label": p.get("label", name),
            "reuse": bool(p.get("reuse")),
            **profiles[name],
            "failed": bool(reasons),
            "failed_reasons": "; ".join(reasons),
        }
        reps = [x for x in (load or {}).get(name, []) if np.isfinite(x["other_busy_cores"])]
        row["other_busy_cores_max"] = max(x["other_busy_cores"] for x in reps) if reps else math.nan
        # a point with a replicate on a loaded machine keeps its intervals
        # but gets no verdict: "inconclusive (loaded)"
        row["loaded"] = any(environment.busy_loaded(x["other_busy_cores"], x["online_cores"]) for x in reps)
        row.update(
            summarize_point(
                sub,
                bool(reasons),
                analysis.get("bootstrap", stats.DEFAULT_RESAMPLES),
                analysis.get("ci", stats.DEFAULT_LEVEL),
                analysis.get("seed", stats.DEFAULT_SEED),
            )
        )
        for key, _ in SPEEDUPS:
            for t in TIMES:
                v = verdict(row[f"{key}_{t}_lo"], row[f"{key}_{t}_hi"], analysis.get("min_effect", 0.03))
                row[f"{key}_{t}_verdict"] = "inconclusive (loaded)" if row["loaded"] and v != "none" else v
        rows.append(row)
    return pd.DataFrame(rows)
