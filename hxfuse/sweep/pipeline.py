"""Glue between the pipeline's files and the pure analysis (hxfuse.analysis.aggregate).

:func:`aggregate_target` reads every replicate of every point of one target
(raw JSON Lines, the check verdict, the provenance sidecar, the .npy files),
refuses raw files whose SHA-256 differs from their sidecar
(hxfuse.runner.integrity), and writes

- ``trials.csv.gz``: the tidy per-trial table (hxfuse.analysis.aggregate.trial_table)
  of all points, with the point columns below, ``replicate`` (0-based: which
  runner invocation) and ``check_ok``;
- ``summary.csv``: one row per point x workload x group
  (hxfuse.analysis.aggregate.summarize; columns in docs/columns.md);
- ``summary.json``: provenance (config hash, git commit and dirty flag,
  compilers; ``points``: the sidecar of each point's replicate 0, keyed by
  point id; ``replicate_sidecars``: every replicate's, keyed
  ``<point id>/rep<r>``; ``device_serials``: the phone each replicate of a
  device farm ran on), ``replicates`` per point, the failed points with
  their reasons, the verdict table and ``group_b_concurrency`` (whether B's
  tasks ran at once, per point: hxfuse.analysis.transport; the verdicts
  carry the same as ``group_b_concurrency`` and ``group_b_text``).

Point columns (identify a point in both tables): ``target``, ``sweep``,
``point_id`` (``sweep/workload/point``), ``point``, ``x``, ``label``.

Every value comes in as an argument (the aggregate job's inputs and params:
the points with their x, label and parameters, the analysis settings, the
config hash, what the target is); nothing is read from the config, so a
changed label or hash reruns this job.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from hxfuse import intermediate
from hxfuse.analysis import aggregate as agg
from hxfuse.analysis import transport
from hxfuse.sweep import families
from hxfuse.runner import integrity
from hxfuse.runner import provenance
from hxfuse.runner.records import IncompleteRunError, read_run
from hxfuse.config.targets import emulated_flag, emulated_results

POINT_COLS = ["target", "sweep", "point_id", "point", "x", "label"]


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    return obj


NOT_ASSESSED = "not assessed (emulated)"
# verdict columns of hxfuse.analysis.aggregate.summarize that draw a conclusion
_CONCLUSION_COLS = ("verdict_matches", "relations", "conclusion", "next_step")


def group_mapping(prov: dict) -> dict:
    """meta.group_mapping of the target's runs (from the provenance sidecars);
    differing mappings are listed per point."""
    maps = {
        json.dumps((v.get("runner_env") or {}).get("group_mapping"), sort_keys=True): pid
        for pid, v in prov.items()
        if (v.get("runner_env") or {}).get("group_mapping")
    }
    if not maps:
        return {}
    if len(maps) == 1:
        return json.loads(next(iter(maps)))
    return {pid: json.loads(m) for m, pid in maps.items()}


# How the host reached the engines, per runner mode (summary.json's
# transport_modes, the paper's setup table): the AP driver records its mode
# in meta.transport; a runner without one ran in one process (host,
# emulators) or, on a Hexagon target, wholly on the cDSP.
TRANSPORT_TEXT = {
    "in-process": "the host and the engines are threads of one process on one machine: every request is a queue "
    "push and a futex wake",
    "dsp-only": "the whole runner ran on the cDSP (run_main_on_hexagon): the host is a DSP thread, so groups A and B "
    "pay no application-processor round trip and only C against D is a valid comparison",
    "ap": "hxrun-ap on the application processor submitted every request over dspqueue to the DSP skel (FastRPC for "
    "set-up): groups A-D crossed the real AP-DSP boundary",
    "ap-stand-in": "hxrun-ap through the loopback stand-in for libcdsprpc.so (the skel in the same process on the host "
    "CPU): the code paths of the AP-DSP boundary, not its timings",
}


def transport_mode(runner_env: dict, hexagon_target: bool) -> str:
    """One run's mode (a key of ``TRANSPORT_TEXT``) from its meta record."""
    t = runner_env.get("transport") if isinstance(runner_env, dict) else None
    if isinstance(t, dict) and t.get("mode") == "ap":
        return "ap-stand-in" if t.get("stand_in") else "ap"
    return "dsp-only" if hexagon_target else "in-process"


def transport_modes(prov: dict, hexagon_target: bool) -> dict:
    """{mode: {"text": ..., "replicates": n}} over the target's replicates."""
    out: dict = {}
    for v in prov.values():
        mode = transport_mode(v.get("runner_env") or {}, hexagon_target)
        entry = out.setdefault(mode, {"text": TRANSPORT_TEXT[mode], "replicates": 0})
        entry["replicates"] += 1
    return out


def device_serials(prov: dict) -> dict:
    """{replicate id: serial of the phone it ran on} from the sidecars'
    runner labels (kernels/hexagon/device.sh labels every device run)."""
    out = {}
    for rid, v in prov.items():
        labels = (v.get("runner_env") or {}).get("labels")
        if isinstance(labels, dict) and labels.get("device_serial"):
            out[rid] = labels["device_serial"]
    return out


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
        for col in ("progress_overlap", "wall_overlap", "d_equiv_b"):
            if col in summary:
                summary.loc[d, col] = None
    return summary


def aggregate_target(
    target: str,
    points: Sequence[dict],
    raws: Sequence[str],
    checks: Sequence[str],
    provenances: Sequence[str],
    npys: Sequence[str] | None,
    analysis: dict,
    tolerance: dict,
    config_hash: str,
    target_info: dict,
    out_trials: str,
    out_summary: str,
    out_json: str,
) -> dict:
    """Aggregate one target.  *points*: one dict per point (``id``, ``sweep``,
    ``point``, ``x``, ``label``, ``params``, ``replicates``); *raws*,
    *checks*, *provenances* and *npys*: one entry per replicate, point-major
    (the replicates of points[0] first).  *target_info*: ``emulated``,
    ``status``, ``group_b`` of the target.  Raises IntegrityError (naming
    every file) when a raw file's SHA-256 differs from its sidecar."""
    layout = [(p, r) for p in points for r in range(int(p["replicates"]))]
    if not len(layout) == len(raws) == len(checks) == len(provenances):
        raise ValueError(
            f"{len(layout)} replicates in the point list but {len(raws)} raw, "
            f"{len(checks)} check and {len(provenances)} provenance files"
        )
    npys = list(npys) if npys is not None else [None] * len(layout)
    tables, prov, reasons = _read_replicates(target, layout, raws, checks, provenances, npys)
    emulated = emulated_results(target, doc=target_info) or any(
        emulated_flag((v.get("runner_env") or {}).get("emulated")) for v in prov.values()
    )
    # .copy(): one block per dtype, so the columns added below do not fragment it
    trials = pd.concat(tables, ignore_index=True).copy() if tables else pd.DataFrame()
    if len(trials):
        # a point is correct only when every replicate passed its check
        trials["check_ok"] = ~trials["point_id"].isin(set(reasons))
    if "target" in trials:
        trials["target"] = target  # meta target; keep the pipeline's name
    else:
        trials["target"] = pd.Series(dtype=str)
    trials.to_csv(out_trials, index=False)
    if len(trials):
        extra = {k: analysis[k] for k in ("min_effect", "min_replicates", "overlap_min_fraction") if k in analysis}
        summary = agg.summarize(
            trials,
            point_cols=POINT_COLS,
            n_resamples=analysis["bootstrap"],
            level=analysis["ci"],
            seed=analysis["seed"],
            **extra,
        )
        summary = label_target(summary, target, emulated, group_mapping(prov))
        summary = add_reruns(summary, prov)
        # control overhead as a share of the makespan (the granularity family)
        summary = families.add_control_share(summary)
        verdicts = agg.verdict_table(summary, point_cols=POINT_COLS)
    else:
        summary, verdicts = pd.DataFrame(columns=POINT_COLS), pd.DataFrame()
    # did B's tasks run at once? (a serialised B is a finding: named per point)
    b_rows = transport.group_b_concurrency(trials)
    verdicts = transport.annotate_verdicts(verdicts, b_rows)
    summary.to_csv(out_summary, index=False)
    failed = [{"target": target, "point_id": pid, "reason": "; ".join(why)} for pid, why in reasons.items()]
    doc = _summary_doc(target, emulated, target_info, points, prov, failed, verdicts, tolerance, analysis, config_hash)
    doc["group_b_concurrency"] = transport.summary_entry(b_rows)
    Path(out_json).write_text(json.dumps(_json_safe(doc), indent=1, sort_keys=True, default=str) + "\n")
    return doc


def _stale_problems(p: dict, rep: int, side: dict, raw: str) -> list[str]:
    """The replicate when its sidecar's point_hash is not the current point's:
    measured with other parameters (metadata lost, --touch, mtime-only rerun
    triggers), it must not be aggregated as this point.  *p* carries the
    current hashes (``point_hashes``, one per replicate) when the workflow
    passes them."""
    want = (p.get("point_hashes") or [None] * (rep + 1))[rep]
    if want is None or side.get("point_hash") == want:
        return []
    return [
        f"{raw}: measured for point_hash {side.get('point_hash')}, the point is now {want} "
        f"(its parameters changed since; rerun it with: {intermediate.redo_command(raw)})"
    ]


def _read_replicates(
    target: str,
    layout: Sequence[tuple[dict, int]],
    raws: Sequence[str],
    checks: Sequence[str],
    provenances: Sequence[str],
    npys: Sequence[str | None],
) -> tuple[list[pd.DataFrame], dict[str, dict], dict[str, list[str]]]:
    """Each replicate's trial table, its provenance sidecar (keyed
    ``<point id>/rep<r>``) and, per failed point, why each replicate failed.
    Raises IntegrityError naming every raw file that differs from its sidecar."""
    tables, prov, bad = [], {}, []
    reasons: dict[str, list[str]] = {}  # point id -> why it failed, per replicate
    for (p, rep), raw, chk, side, npy in zip(layout, raws, checks, provenances, npys):
        pid = p["id"]
        sweep, workload, name = pid.split("/")
        rid = f"{pid}/rep{rep}"
        check = intermediate.read_json_object(chk)
        # a damaged sidecar is redone by rerunning its replicate (the run job writes it)
        prov[rid] = intermediate.read_json_object(side, redo=raw)
        bad += integrity.sha256_problems(prov[rid].get("raw_sha256"), raw, npy)
        bad += _stale_problems(p, rep, prov[rid], raw)
        ok = check.get("status") == "ok"
        if not ok:
            why = "; ".join(check.get("reasons", [])) or "check failed"
            reasons.setdefault(pid, []).append(f"rep{rep}: {why}")
        try:
            run = read_run(raw)
        except IncompleteRunError as exc:
            if ok:
                reasons.setdefault(pid, []).append(f"rep{rep}: {exc}")
            continue
        point = {"sweep": sweep, "point_id": pid, "point": name, "x": p["x"], "label": p["label"], "replicate": rep}
        point.update(p["params"])
        tables.append(agg.trial_table(run, point))
    if bad:
        raise integrity.IntegrityError(
            f"hxfuse: aggregation of {target} refused: raw files differ from their provenance "
            "sidecars (changed after the run, or measured with other parameters; rerun those "
            "replicates with snakemake -f):\n  " + "\n  ".join(bad)
        )
    return tables, prov, reasons


def add_reruns(summary: pd.DataFrame, prov: dict[str, dict]) -> pd.DataFrame:
    """``reruns``: how many times the point's replicates were run again
    because their runner saw other work (the sidecars' ``reruns``,
    hxfuse.runner.quiet), on every row of the point; 0 for sidecars
    without the field."""
    if "point_id" not in summary:
        return summary
    per: dict[str, int] = {}
    for rid, v in prov.items():
        pid = rid.rsplit("/rep", 1)[0]
        per[pid] = per.get(pid, 0) + int(v.get("reruns") or 0)
    summary["reruns"] = summary["point_id"].map(per).fillna(0).astype(int)
    return summary


def _summary_doc(
    target: str,
    emulated: bool,
    target_info: dict,
    points: Sequence[dict],
    prov: dict[str, dict],
    failed: list[dict],
    verdicts: pd.DataFrame,
    tolerance: dict,
    analysis: dict,
    config_hash: str,
) -> dict:
    """summary.json: the target, its provenance, failed points and verdicts."""
    base = provenance.base_record(config_hash)
    commits = {(v.get("git_commit"), v.get("git_dirty")) for v in prov.values()}
    return {
        "target": target,
        "emulated": emulated,
        "target_status": target_info.get("status", ""),
        # what A-D are in the runner on this target (its meta record), and what
        # group B maps to on the target's backend or its limitation
        "group_mapping": group_mapping(prov),
        "group_b_backend": target_info.get("group_b", ""),
        # how the host reached the engines (in-process, dsp-only, ap), per replicate count
        "transport_modes": transport_modes(prov, bool(target_info.get("hexagon"))),
        "provenance": {
            **base,
            "points_git": [{"git_commit": c, "git_dirty": d} for c, d in sorted(commits, key=str)],
            "compilers": sorted({str(v.get("compiler")) for v in prov.values()}),
            "runner_sha256": sorted({str(v.get("runner_sha256")) for v in prov.values()}),
            # one sidecar per point (its replicate 0, as the environment page
            # shows it) and every replicate's sidecar
            "points": {pid: prov[f"{pid}/rep0"] for pid in (p["id"] for p in points) if f"{pid}/rep0" in prov},
            "replicate_sidecars": prov,
            # the phone of a device farm each replicate ran on (its records'
            # labels.device_serial), keyed <point id>/rep<r>; empty elsewhere
            "device_serials": device_serials(prov),
        },
        "n_points": len(points),
        # independent runner invocations per point (run.replicates)
        "replicates": {p["id"]: int(p["replicates"]) for p in points},
        "failed_points": failed,
        # replicates run again because their runner saw other work (run.max_reruns)
        "reruns": {rid: int(v.get("reruns") or 0) for rid, v in prov.items() if v.get("reruns")},
        "verdicts": verdicts.to_dict(orient="records"),
        "tolerance": tolerance,
        "analysis": analysis,
    }
