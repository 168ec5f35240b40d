"""Fixed vs searched: the search's choice, the confirmation's regret, the verdict.

Pure functions over tidy tables; the file glue (``write_*``) is at the end,
plotting is in :mod:`hxfuse.search.plots`.

**The search** (rule ``search_select``): each candidate of the plan
(:mod:`hxfuse.search.space`) was measured by one runner invocation of group D.
:func:`candidate_table` gives one row per candidate: its correctness check
(a candidate whose check failed is ``failed``, keeps no number and can never
be chosen), the median of its measured D makespans with a bootstrap interval
(:func:`hxfuse.analysis.stats.bootstrap_median`), the runner's wall seconds and the
environment findings of its run.  :func:`select` picks the lowest median
among the candidates that passed.  The search's cost is the candidates
evaluated, their measured D rounds and the runner seconds they took.

**The confirmation** (rule ``search_result``): the best found and the fixed
default, re-measured in ``pairs`` pairs of invocations run back to back in
alternating order (:mod:`hxfuse.search.confirm`), groups A, C and D each.

- regret = median(fixed D makespan) / median(best D makespan) - 1, over the
  pooled measured rounds of each side, with a *paired* two-level bootstrap
  interval (:func:`paired_ratio`): each resample draws pairs with
  replacement, the same pairs for both sides, then each side's rounds within
  each drawn pair.  A drift of the machine that moves both sides of a pair
  alike therefore cancels instead of widening the interval;
- D/A and D/C of each side: per-round paired speedups within each
  invocation, medians with the two-level bootstrap over the pairs
  (:func:`hxfuse.analysis.stats.hierarchical_bootstrap_median`), as in the summary;
- the verdict (:func:`regret_verdict`) with the minimum effect m
  (``analysis.min_effect``): ``fixed~best`` "the fixed default is as good as
  searched" when the regret interval lies within [-m, m]; ``fixed>best`` "the
  search found a better configuration" when it lies above m; ``fixed<best``
  when it lies below -m (the search's pick did not hold up); ``undetermined``
  when it crosses an edge.  ``inconclusive`` first, with the reason, when a
  confirmation run failed its check or the machine disturbed a run (loaded,
  fewer free cores than engines: hxfuse.analysis.environment's rule).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from hxfuse.analysis import stats as st
from hxfuse.analysis.environment import disturbance_warnings, environment_warnings, run_environment
from hxfuse.runner.records import Run, read_run

# The machine readings each confirmation run lists (run_environment's).
RUN_ENV_COLUMNS = ("other_busy_cores_before", "other_busy_cores_after", "online_cores")
CANDIDATE_COLUMNS = [
    "id",
    "index",
    "label",
    "status",
    "reasons",
    "n",
    "d_median_ns",
    "d_lo_ns",
    "d_hi_ns",
    "runner_wall_s",
    "env_warning",
    "disturbed",
    "is_best",
    "is_fixed",
]
VERDICTS = {
    "fixed~best": "the fixed default is as good as searched",
    "fixed>best": "the search found a better configuration than the fixed default",
    "fixed<best": "the fixed default is faster than the searched best (the search's pick did not hold up)",
    "undetermined": "regret undetermined (its interval crosses an edge of the minimum-effect band)",
    "inconclusive": "inconclusive",
}


# --------------------------------------------------------------------------
# tidy tables from runner outputs


def measured(run: Run, groups: Sequence[str]) -> pd.DataFrame:
    """The measured (not warm-up, not empty) trials of *groups* in one run:
    columns group, round, makespan_ns."""
    t = run.trials
    m = t[t["group"].isin(list(groups)) & ~t["warmup"].astype(bool) & ~t["empty"].astype(bool)]
    return m[["group", "round", "makespan_ns"]].astype({"makespan_ns": float}).reset_index(drop=True)


# --------------------------------------------------------------------------
# the search


def candidate_row(
    cand: Mapping[str, Any],
    d_makespans: Sequence[float],
    check: Mapping[str, Any],
    env: Mapping[str, Any],
    runner_wall_s: float,
    n_resamples: int = st.DEFAULT_RESAMPLES,
    level: float = st.DEFAULT_LEVEL,
    seed: int = st.DEFAULT_SEED,
) -> dict[str, Any]:
    """One candidate's row: a failed check keeps no number."""
    ok = check.get("status") == "ok"
    est = st.bootstrap_median(d_makespans, n_resamples, level, seed) if ok else st.NAN_ESTIMATE
    return {
        "id": cand["id"],
        "index": int(cand["index"]),
        "label": cand["label"],
        "status": "ok" if ok else "failed",
        "reasons": "; ".join(check.get("reasons") or []),
        "n": est.n,
        "d_median_ns": est.value,
        "d_lo_ns": est.lo,
        "d_hi_ns": est.hi,
        "runner_wall_s": float(runner_wall_s),
        "env_warning": "; ".join(environment_warnings(env) if env else []),
        "disturbed": bool(env) and bool(disturbance_warnings(env)),
    }


def select(table: pd.DataFrame) -> str | None:
    """The id of the candidate with the lowest D median among those that
    passed their check (ties: the earlier candidate); None when none did.
    The fixed default's reference row (id ``fixed``) is never chosen."""
    ok = table[(table["status"] == "ok") & np.isfinite(table["d_median_ns"].astype(float)) & (table["id"] != "fixed")]
    if ok.empty:
        return None
    return str(ok.sort_values(["d_median_ns", "index"], kind="stable").iloc[0]["id"])


def fixed_candidate(plan: Mapping[str, Any]) -> str | None:
    """The candidate whose parameters are the fixed default's, if one was
    sampled (the fixed default's own reference row is ``fixed`` anyway)."""
    fp = json.dumps(plan["fixed"]["params"], sort_keys=True)
    for c in plan["candidates"]:
        if json.dumps(c["params"], sort_keys=True) == fp:
            return c["id"]
    return None


def search_doc(plan: Mapping[str, Any], table: pd.DataFrame) -> dict[str, Any]:
    """search.json: the plan's description, every candidate's row, the best
    found and the search's cost."""
    best = select(table)
    fid = fixed_candidate(plan)
    table = table.copy()
    table["is_best"] = table["id"] == best
    table["is_fixed"] = table["id"].isin(["fixed", fid])
    by_id = {c["id"]: c for c in plan["candidates"]}
    cands = table[table["id"] != "fixed"]
    ref = table[table["id"] == "fixed"]
    doc = {
        k: plan[k]
        for k in ("name", "target", "title", "workload", "space", "space_size", "exhaustive", "budget", "seed")
    }
    doc.update(
        {
            "fixed": {k: plan["fixed"][k] for k in ("values", "params", "label", "in_space", "space_values")}
            | {"candidate": fid},
            "cost": {
                "candidates": int(len(cands)),
                "d_rounds": int(len(cands)) * int(plan["budget"]["rounds"]),
                "runner_seconds": float(np.nansum(cands["runner_wall_s"].astype(float))),
                "reference_runs": int(len(ref)),
                "reference_seconds": float(np.nansum(ref["runner_wall_s"].astype(float))),
            },
            "failed": [
                {"id": r.id, "label": r.label, "reasons": r.reasons}
                for r in table[table["status"] != "ok"].itertuples()
            ],
            "disturbed": [str(i) for i in table[table["disturbed"]]["id"]],
            "candidates": [_clean_row(r) for r in table[CANDIDATE_COLUMNS].to_dict("records")],
            "best": None,
        }
    )
    if best is not None:
        row = table[table["id"] == best].iloc[0]
        c = by_id[best]
        doc["best"] = {
            "id": best,
            "label": c["label"],
            "values": c["values"],
            "params": c["params"],
            "d_median_ns": float(row["d_median_ns"]),
            "is_fixed": best == fid,
        }
    return doc


def _clean_row(r: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in r.items():
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, float) and not math.isfinite(v):
            v = None
        out[k] = v
    return out


# --------------------------------------------------------------------------
# the confirmation


def paired_ratio(
    num: Sequence[float],
    num_pairs: Sequence[Any],
    den: Sequence[float],
    den_pairs: Sequence[Any],
    n_resamples: int = st.DEFAULT_RESAMPLES,
    level: float = st.DEFAULT_LEVEL,
    seed: int = st.DEFAULT_SEED,
) -> st.Estimate:
    """median(num) / median(den) over the pooled samples, with a paired
    two-level bootstrap interval: each resample draws the pairs (labels
    shared by both sides) with replacement, the same draw for both sides,
    then within each drawn pair as many of each side's samples as it has,
    with replacement.  NaNs are ignored; a pair missing on either side is
    left out.  ``n`` counts the pairs used."""
    a, ca = np.asarray(num, float).ravel(), np.asarray(num_pairs).ravel()
    b, cb = np.asarray(den, float).ravel(), np.asarray(den_pairs).ravel()
    if a.shape != ca.shape or b.shape != cb.shape:
        raise ValueError("samples and pair labels differ in length")
    fa, fb = np.isfinite(a), np.isfinite(b)
    a, ca, b, cb = a[fa], ca[fa], b[fb], cb[fb]
    labels = [x for x in dict.fromkeys(ca.tolist()) if x in set(cb.tolist())]
    if not labels:
        return st.NAN_ESTIMATE
    ga = [a[ca == x] for x in labels]
    gb = [b[cb == x] for x in labels]
    value = float(np.median(np.concatenate(ga)) / np.median(np.concatenate(gb)))
    r = len(labels)
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, r, size=(n_resamples, r))

    def medians(groups: list[np.ndarray]) -> np.ndarray:
        sizes = np.array([len(g) for g in groups])
        nmax = int(sizes.max())
        table = np.full((r, nmax), np.nan)
        for i, g in enumerate(groups):
            table[i, : len(g)] = g
        n_pick = sizes[pick]
        within = (rng.random((n_resamples, r, nmax)) * n_pick[..., None]).astype(np.int64)
        draws = table[pick[..., None], within]
        draws[np.arange(nmax)[None, None, :] >= n_pick[..., None]] = np.nan
        return np.nanmedian(draws.reshape(n_resamples, -1), axis=1)

    ratios = medians(ga) / medians(gb)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(ratios, [alpha, 1.0 - alpha])
    return st.Estimate(value, float(lo), float(hi), r)


def regret(
    long: pd.DataFrame,
    n_resamples: int = st.DEFAULT_RESAMPLES,
    level: float = st.DEFAULT_LEVEL,
    seed: int = st.DEFAULT_SEED,
) -> st.Estimate:
    """Regret of the fixed default: median(fixed D) / median(best D) - 1 with
    the paired interval.  *long*: side, pair, group, round, makespan_ns."""
    d = long[long["group"] == "D"]
    f, b = d[d["side"] == "fixed"], d[d["side"] == "best"]
    e = paired_ratio(f["makespan_ns"], f["pair"], b["makespan_ns"], b["pair"], n_resamples, level, seed)
    return st.Estimate(e.value - 1.0, e.lo - 1.0, e.hi - 1.0, e.n)


def speedups(
    long: pd.DataFrame,
    side: str,
    n_resamples: int = st.DEFAULT_RESAMPLES,
    level: float = st.DEFAULT_LEVEL,
    seed: int = st.DEFAULT_SEED,
) -> dict[str, st.Estimate]:
    """D/A and D/C of one side: T_Y / T_D within each round of each
    invocation, then the median with the two-level bootstrap over pairs."""
    s = long[long["side"] == side]
    wide = s.pivot_table(index=["pair", "round"], columns="group", values="makespan_ns", aggfunc="first")
    out = {}
    for y in ("A", "C"):
        if y not in wide or "D" not in wide:
            out[f"D/{y}"] = st.NAN_ESTIMATE
            continue
        ratio = (wide[y] / wide["D"]).dropna()
        out[f"D/{y}"] = st.hierarchical_bootstrap_median(
            ratio.to_numpy(), ratio.index.get_level_values("pair").to_numpy(), n_resamples, level, seed
        )
    return out


def regret_verdict(est: st.Estimate, min_effect: float, reasons: Sequence[str] = ()) -> tuple[str, str]:
    """(key, text) of the regret interval against the band [-m, m];
    ``inconclusive`` first when *reasons* is not empty."""
    if reasons:
        return "inconclusive", "inconclusive: " + "; ".join(reasons)
    if not (math.isfinite(est.lo) and math.isfinite(est.hi)):
        return "inconclusive", "inconclusive: no regret (no measured D rounds on a side)"
    m = float(min_effect)
    if est.lo >= -m and est.hi <= m:
        key = "fixed~best"
    elif est.lo > m:
        key = "fixed>best"
    elif est.hi < -m:
        key = "fixed<best"
    else:
        key = "undetermined"
    return key, VERDICTS[key]


def _est(e: st.Estimate) -> dict[str, Any]:
    return {k: (v if math.isfinite(v) else None) for k, v in (("value", e.value), ("lo", e.lo), ("hi", e.hi))} | {
        "n": e.n
    }


def confirmation(
    long: pd.DataFrame,
    failed: Sequence[str],
    disturbed: Sequence[str],
    min_effect: float,
    n_resamples: int = st.DEFAULT_RESAMPLES,
    level: float = st.DEFAULT_LEVEL,
    seed: int = st.DEFAULT_SEED,
) -> dict[str, Any]:
    """The confirmation's numbers and verdict.  *failed*: runs whose check
    failed (their rounds must already be out of *long*); *disturbed*: the
    environment findings that withhold a verdict."""
    reasons = ([f"correctness check failed: {', '.join(failed)}"] if failed else []) + list(disturbed)
    reg = regret(long, n_resamples, level, seed)
    key, text = regret_verdict(reg, min_effect, reasons)
    d = long[long["group"] == "D"]
    out = {
        "regret": _est(reg),
        "verdict": key,
        "verdict_text": text,
        "min_effect": float(min_effect),
        "reasons": reasons,
    }
    for side in ("fixed", "best"):
        sd = d[d["side"] == side]
        med = st.hierarchical_bootstrap_median(
            sd["makespan_ns"].to_numpy(), sd["pair"].to_numpy(), n_resamples, level, seed
        )
        out[side] = {
            "d_makespan_ns": _est(med),
            **{k: _est(v) for k, v in speedups(long, side, n_resamples, level, seed).items()},
        }
    return out


# --------------------------------------------------------------------------
# the figure's data


def candidates_long(doc: Mapping[str, Any]) -> pd.DataFrame:
    """Left panel: one row per candidate (evaluation order), its D median and
    interval in ms, whether it is the best or the fixed default, its status."""
    s = doc["search"]
    rows = []
    for c in s["candidates"]:

        def ms(v):
            return math.nan if v is None else float(v) / 1e6

        rows.append(
            {
                "id": c["id"],
                "label": c["label"],
                "status": c["status"],
                "median_ms": ms(c["d_median_ns"]),
                "lo_ms": ms(c["d_lo_ns"]),
                "hi_ms": ms(c["d_hi_ns"]),
                "best": bool(c["is_best"]),
                "fixed": bool(c["is_fixed"]),
                "disturbed": bool(c["disturbed"]),
            }
        )
    return pd.DataFrame(
        rows, columns=["id", "label", "status", "median_ms", "lo_ms", "hi_ms", "best", "fixed", "disturbed"]
    )


def confirmation_long(doc: Mapping[str, Any]) -> pd.DataFrame:
    """Right panel: fixed / best (the regret + 1) and D/A, D/C of each side,
    with their intervals."""
    c = doc.get("confirmation")
    rows = []
    if not c:
        return pd.DataFrame(columns=["quantity", "side", "value", "lo", "hi"])

    def f(v):
        return math.nan if v is None else float(v)

    r = c["regret"]
    rows.append(
        {
            "quantity": "fixed / best (D makespan)",
            "side": "ratio",
            "value": f(r["value"]) + 1,
            "lo": f(r["lo"]) + 1,
            "hi": f(r["hi"]) + 1,
        }
    )
    for side in ("fixed", "best"):
        for q in ("D/A", "D/C"):
            e = c[side][q]
            rows.append({"quantity": q, "side": side, "value": f(e["value"]), "lo": f(e["lo"]), "hi": f(e["hi"])})
    return pd.DataFrame(rows, columns=["quantity", "side", "value", "lo", "hi"])


# --------------------------------------------------------------------------
# the paper's table


def _pct(v) -> str:
    return "--" if v is None else f"{100 * v:+.1f}\\%"


def table_rows(docs: Iterable[Mapping[str, Any]], tex_escape) -> list[dict[str, str]]:
    """One row per (target, search) of the LaTeX table from result.json docs."""
    rows = []
    for doc in docs:
        s, c = doc["search"], doc["confirmation"]
        reg = c["regret"] if c else {"value": None, "lo": None, "hi": None}
        best = s["best"] or {}

        def spd(side, key, c=c):
            e = (c or {}).get(side, {}).get(key) or {}
            return "--" if e.get("value") is None else f"{e['value']:.2f}"

        rows.append(
            {
                "target": tex_escape(s["target"]),
                "search": tex_escape(s["name"]),
                "space": f"{s['space_size']}",
                "evaluated": f"{s['cost']['candidates']}",
                "cost_s": f"{s['cost']['runner_seconds']:.0f}",
                "best": tex_escape(best.get("label", "--")),
                "fixed": tex_escape(s["fixed"]["label"]),
                "regret": _pct(reg["value"]),
                "regret_lo": _pct(reg["lo"]),
                "regret_hi": _pct(reg["hi"]),
                "da_fixed": spd("fixed", "D/A"),
                "da_best": spd("best", "D/A"),
                "verdict": tex_escape(c["verdict"] if c else "no candidate passed"),
            }
        )
    return rows


# --------------------------------------------------------------------------
# file glue


def write_search(
    plan: Mapping[str, Any],
    raws: Sequence[str],
    npys: Sequence[str],
    provenances: Sequence[str],
    out_json: str,
    out_csv: str,
    rtol: float,
    atol: float,
    analysis: Mapping[str, Any],
) -> dict[str, Any]:
    """Check every candidate's run, tabulate, choose; write search.json and
    candidates.csv (inputs in the order of plan['candidates'], then the
    fixed default's reference run)."""
    from hxfuse.runner.checks import check_point

    rows = []
    for cand, raw, npy, prov in zip([*plan["candidates"], plan["fixed"]], raws, npys, provenances):
        side = json.loads(Path(prov).read_text())
        if side.get("failed"):
            # the run itself failed (hxfuse.search.confirm.mark_failed): no number
            rows.append(candidate_row(cand, [], {"status": "failed", "reasons": [side["failed"]]}, {}, math.nan))
            continue
        check = check_point(raw, npy, rtol=rtol, atol=atol)
        run = read_run(raw)
        d = measured(run, ["D"])
        rows.append(
            candidate_row(
                cand,
                d["makespan_ns"].to_numpy(),
                check,
                run_environment(run),
                side.get("runner_wall_s", math.nan),
                analysis["bootstrap"],
                analysis["ci"],
                analysis["seed"],
            )
        )
    table = pd.DataFrame(rows, columns=[c for c in CANDIDATE_COLUMNS if c not in ("is_best", "is_fixed")])
    doc = search_doc(plan, table)
    Path(out_json).write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    pd.DataFrame(doc["candidates"], columns=CANDIDATE_COLUMNS).to_csv(out_csv, index=False)
    return doc


def write_result(
    search_json: str, confirm_dir: str, out_json: str, rtol: float, atol: float, analysis: Mapping[str, Any]
) -> dict[str, Any]:
    """Check every confirmation run, compute regret, speedups and verdict;
    write result.json (the search's doc, the confirmation, each run's check
    and environment)."""
    from hxfuse.runner.checks import check_point

    sdoc = json.loads(Path(search_json).read_text())
    cdir = Path(confirm_dir)
    runs_doc = json.loads((cdir / "runs.json").read_text())
    parts, failed, disturbed, runs = [], [], [], []
    for r in runs_doc["order"]:
        side, k = r["side"], r["pair"]
        raw = cdir / side / f"rep{k}.jsonl"
        check = check_point(raw, cdir / "npy" / side / f"rep{k}", rtol=rtol, atol=atol)
        run = read_run(raw)
        env = run_environment(run)
        dist = disturbance_warnings(env)
        tag = f"{side} pair {k}"
        runs.append(
            {
                **r,
                "status": check["status"],
                "reasons": check["reasons"],
                "env_warning": "; ".join(environment_warnings(env)),
                **{c: env.get(c) for c in RUN_ENV_COLUMNS},
            }
        )
        disturbed += [f"{tag}: {w}" for w in dist]
        if check["status"] != "ok":
            failed.append(tag)
            continue
        m = measured(run, ["A", "C", "D"])
        m["side"], m["pair"] = side, k
        parts.append(m)
    long = (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["group", "round", "makespan_ns", "side", "pair"])
    )
    conf = confirmation(
        long, failed, disturbed, analysis["min_effect"], analysis["bootstrap"], analysis["ci"], analysis["seed"]
    )
    conf["runs"] = runs
    conf["pairs"] = runs_doc.get("pairs")
    conf["job_wall_s"] = runs_doc.get("job_wall_s")
    doc = {"search": sdoc, "confirmation": conf}
    Path(out_json).write_text(json.dumps(_json_safe(doc), indent=1, sort_keys=True) + "\n")
    return doc


def _json_safe(obj):
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
