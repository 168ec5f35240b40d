"""Glue between the pipeline's files and the pure analysis (hxfuse.aggregate).

:func:`aggregate_target` reads every point of one target (raw JSON Lines, the
check verdict, the provenance sidecar) and writes

- ``trials.csv.gz``: the tidy per-trial table (hxfuse.aggregate.trial_table)
  of all points, with the point columns below and ``check_ok``;
- ``summary.csv``: one row per point x workload x group
  (hxfuse.aggregate.summarize; columns in docs/columns.md);
- ``summary.json``: provenance (config hash, git commit and dirty flag,
  compilers, runner environment per point), the failed points with their
  reasons, and the verdict table.

Point columns (identify a point in both tables): ``target``, ``sweep``,
``point_id`` (``sweep/workload/point``), ``point``, ``x``, ``label``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from . import aggregate as agg
from . import config as hxconfig
from . import provenance
from .io import IncompleteRunError, read_run

POINT_COLS = ["target", "sweep", "point_id", "point", "x", "label"]


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


def aggregate_target(target: str, point_ids: Sequence[str], raws: Sequence[str],
                     checks: Sequence[str], provenances: Sequence[str], config: dict,
                     analysis: dict, out_trials: str, out_summary: str, out_json: str) -> dict:
    tables, failed, prov = [], [], {}
    for pid, raw, chk, side in zip(point_ids, raws, checks, provenances):
        sweep, workload, name = pid.split("/")
        p = hxconfig.find_point(config, target, sweep, workload, name)
        check = json.loads(Path(chk).read_text())
        prov[pid] = json.loads(Path(side).read_text())
        ok = check.get("status") == "ok"
        if not ok:
            failed.append({"target": target, "point_id": pid,
                           "reason": "; ".join(check.get("reasons", [])) or "check failed"})
        try:
            run = read_run(raw)
        except IncompleteRunError as exc:
            if ok:
                failed.append({"target": target, "point_id": pid, "reason": str(exc)})
            continue
        point = {"sweep": sweep, "point_id": pid, "point": name, "x": p.x, "label": p.label}
        point.update({k: v for k, v in p.params.items()})
        tt = agg.trial_table(run, point)
        tt["check_ok"] = ok
        tables.append(tt)
    trials = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    if "target" in trials:
        trials["target"] = target  # meta target; keep the pipeline's name
    else:
        trials["target"] = pd.Series(dtype=str)
    trials.to_csv(out_trials, index=False)
    if len(trials):
        summary = agg.summarize(trials, point_cols=POINT_COLS, n_resamples=analysis["bootstrap"],
                                level=analysis["ci"], seed=analysis["seed"])
        verdicts = agg.verdict_table(summary, point_cols=POINT_COLS)
    else:
        summary, verdicts = pd.DataFrame(columns=POINT_COLS), pd.DataFrame()
    summary.to_csv(out_summary, index=False)

    base = provenance.base_record(config)
    commits = {(v.get("git_commit"), v.get("git_dirty")) for v in prov.values()}
    doc = {
        "target": target,
        "provenance": {
            **base,
            "points_git": [{"git_commit": c, "git_dirty": d} for c, d in sorted(commits, key=str)],
            "compilers": sorted({str(v.get("compiler")) for v in prov.values()}),
            "runner_sha256": sorted({str(v.get("runner_sha256")) for v in prov.values()}),
            "points": prov,
        },
        "n_points": len(point_ids),
        "failed_points": failed,
        "verdicts": verdicts.to_dict(orient="records"),
        "tolerance": config["check"],
        "analysis": analysis,
    }
    Path(out_json).write_text(json.dumps(_json_safe(doc), indent=1, sort_keys=True, default=str) + "\n")
    return doc
