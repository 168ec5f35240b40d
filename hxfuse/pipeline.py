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
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from . import aggregate as agg
from . import config as hxconfig
from . import provenance
from .io import IncompleteRunError, read_run

POINT_COLS = ["target", "sweep", "point_id", "point", "x", "label"]
# runner exit codes (docs/runner.md): 0 ok, 4 checksum mismatch recorded (the
# output is complete; `check` marks the point failed)
ACCEPTED_EXIT = (0, 4)
KILL_AFTER_S = 10


class PointFailed(RuntimeError):
    """The runner of one point hung, crashed or left an incomplete output."""


def _has_end_record(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 4096))
            last = fh.read().decode("utf-8", "replace").strip().splitlines()[-1]
        return json.loads(last).get("record") == "end"
    except (OSError, IndexError, ValueError):
        return False


def run_point(runner: str, args: list[str], prefix: str, timeout_s: float, config: dict,
              point: tuple[str, str, str, str], out_jsonl: str, out_provenance: str,
              out_npy: str, log: str) -> int:
    """Run one point's runner under ``timeout`` and move its outputs into place.

    Everything is written in ``<out_jsonl>.work/`` first; on any failure the
    work directory is removed and nothing is left that could be mistaken for
    a result.  Returns 0 on success, 1 on failure (message on stderr and in
    the log, naming the point, the cause and the log).
    """
    from . import provenance

    pid = "/".join(point)
    work = Path(out_jsonl + ".work")
    shutil.rmtree(work, ignore_errors=True)
    (work / "npy").mkdir(parents=True)
    cmd = ["timeout", f"--kill-after={KILL_AFTER_S}", str(timeout_s), *shlex.split(prefix or ""),
           runner, "--out", str(work / "trials.jsonl"), "--npy-dir", str(work / "npy"),
           "--label", f"point={pid}", *map(str, args)]
    target = point[0]
    extra_env = hxconfig.run_env(config, target)
    env = {**os.environ, **extra_env}
    load_before = provenance.loadavg()
    t0 = time.time()
    with open(log, "w") as lf:
        if extra_env:
            lf.write("# env: " + " ".join(f"{k}={v}" for k, v in sorted(extra_env.items())) + "\n")
        lf.write("$ " + shlex.join(cmd) + "\n")
        lf.flush()
        try:
            rc = subprocess.run(cmd, stdout=lf, stderr=subprocess.STDOUT, env=env).returncode
        except OSError as exc:
            rc, msg = 127, f"cannot start the runner: {exc}"
        else:
            msg = ""
        wall = time.time() - t0
        if rc in (124, 137) or (rc == -9):
            msg = (f"runner killed after {timeout_s} s (config run.timeout_s): "
                   "it hung or is too slow for the timeout")
        elif rc not in ACCEPTED_EXIT and not msg:
            msg = f"runner exited with status {rc}"
        elif not msg and not _has_end_record(work / "trials.jsonl"):
            msg = "runner output has no end record (incomplete)"
        if msg:
            text = f"hxfuse: point {pid} FAILED: {msg}; no result kept (log: {log})"
            lf.write(text + "\n")
            print(text, file=__import__("sys").stderr)
            shutil.rmtree(work, ignore_errors=True)
            return 1
        lf.write(f"hxfuse: runner exit {rc} after {wall:.1f} s\n")
    target, sweep, workload, name = point
    p = hxconfig.find_point(config, target, sweep, workload, name)
    rec = provenance.sidecar(config, p, work / "trials.jsonl", Path(runner), load_before)
    rec["runner_exit"] = rc
    rec["runner_wall_s"] = wall
    rec["run_prefix"] = prefix or ""
    rec["emulated"] = bool(rec.get("runner_env", {}).get("emulated")) or target in hxconfig.EMULATED_TARGETS
    (work / "provenance.json").write_text(json.dumps(rec, indent=1, sort_keys=True, default=str) + "\n")
    shutil.rmtree(out_npy, ignore_errors=True)
    os.replace(work / "npy", out_npy)
    os.replace(work / "provenance.json", out_provenance)
    os.replace(work / "trials.jsonl", out_jsonl)  # last: the result appears whole
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


NOT_ASSESSED = "not assessed (emulated)"
# verdict columns of hxfuse.aggregate.summarize that draw a conclusion
_CONCLUSION_COLS = ("verdict_matches", "relations", "conclusion", "next_step")


def group_mapping(prov: dict) -> dict:
    """meta.group_mapping of the target's runs (from the provenance sidecars);
    differing mappings are listed per point."""
    maps = {json.dumps((v.get("runner_env") or {}).get("group_mapping"), sort_keys=True): pid
            for pid, v in prov.items() if (v.get("runner_env") or {}).get("group_mapping")}
    if not maps:
        return {}
    if len(maps) == 1:
        return json.loads(next(iter(maps)))
    return {pid: json.loads(m) for m, pid in maps.items()}


def label_target(summary: pd.DataFrame, target: str, emulated: bool, mapping: dict) -> pd.DataFrame:
    """Add the target's labels to summarize()'s table: ``emulated`` (bool) and
    ``group_mapping`` (what the row's group is on this target).  An emulated
    target's timings are not performance: its verdicts are replaced by
    "not assessed (emulated)" and no conclusion is drawn."""
    summary = summary.copy()
    summary["emulated"] = bool(emulated)
    if mapping and all(isinstance(v, str) for v in mapping.values()):
        summary["group_mapping"] = summary["group"].map(lambda g: mapping.get(g, ""))
    else:
        summary["group_mapping"] = ""
    if emulated and "verdict" in summary:
        d = summary["group"] == "D"
        ok = summary.get("point_ok", pd.Series(True, index=summary.index)).astype(bool)
        summary.loc[d & ok, "verdict"] = NOT_ASSESSED
        summary.loc[d & ok, "verdict_key"] = "emulated"
        for col in _CONCLUSION_COLS:
            if col in summary:
                summary.loc[d, col] = ""
        if "timeline_overlap" in summary:
            summary.loc[d, "timeline_overlap"] = None
    return summary


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
    emulated = target in hxconfig.EMULATED_TARGETS or any(
        bool((v.get("runner_env") or {}).get("emulated")) for v in prov.values())
    trials = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    if "target" in trials:
        trials["target"] = target  # meta target; keep the pipeline's name
    else:
        trials["target"] = pd.Series(dtype=str)
    trials.to_csv(out_trials, index=False)
    if len(trials):
        summary = agg.summarize(trials, point_cols=POINT_COLS, n_resamples=analysis["bootstrap"],
                                level=analysis["ci"], seed=analysis["seed"])
        summary = label_target(summary, target, emulated, group_mapping(prov))
        verdicts = agg.verdict_table(summary, point_cols=POINT_COLS)
    else:
        summary, verdicts = pd.DataFrame(columns=POINT_COLS), pd.DataFrame()
    summary.to_csv(out_summary, index=False)

    base = provenance.base_record(config)
    commits = {(v.get("git_commit"), v.get("git_dirty")) for v in prov.values()}
    info = hxconfig.TARGETS.get(target, {})
    doc = {
        "target": target,
        "emulated": emulated,
        "target_status": info.get("status", ""),
        # what A-D are in the runner on this target (its meta record), and what
        # group B maps to on the target's backend or its limitation
        "group_mapping": group_mapping(prov),
        "group_b_backend": info.get("group_b", ""),
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
