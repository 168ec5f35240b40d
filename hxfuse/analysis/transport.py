"""Did group B's tasks run at once?  A check of B's premise, per point.

Group B is the backend's own concurrency: independent requests on
independent queues, waited for together.  Whether the engines really ran
them at once is not given: a transport may serialise them (one DSP callback
thread serving every imported queue, a FastRPC lock, one engine thread), and
then B measures A's schedule with less host round trips, not concurrency.
That is a finding about the transport and must be said, not left as a
silent equality of B and A in the speedup tables.

The evidence is each measured B trial's ``concurrent_ns`` (hxfuse.analysis.
metrics: the time at least two engines were busy, from the device-side
intervals of the threads that ran the tasks).  In mode ap those intervals are
DSP times mapped onto the AP clock with one offset, so their overlap with
each other does not depend on the clock alignment's error.  Warm-up and
empty-variant trials and workloads of one task are left out.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

B = "B"
# statuses, in words
SERIALISED = "serialised"
PARTLY = "partly serialised"
OVERLAPPING = "overlapping"


def _sentence(point_id: str, workload: str, status: str, n: int, n_overlap: int, median_ns: float) -> str:
    if status == SERIALISED:
        return (
            f"{point_id} ({workload}): group B's tasks never ran at once in {n} measured trial(s): B was serialised "
            "(by the transport or the engines), so B against A or D measures request overhead, not concurrency"
        )
    if status == PARTLY:
        return (
            f"{point_id} ({workload}): group B's tasks ran at once in only {n_overlap} of {n} measured trial(s): "
            "B was partly serialised"
        )
    return (
        f"{point_id} ({workload}): group B's tasks ran at once in all {n} measured trial(s) "
        f"(median {median_ns:.0f} ns with two or more engines busy)"
    )


def group_b_concurrency(trials: pd.DataFrame, min_overlap_ns: float = 0.0) -> list[dict[str, Any]]:
    """One entry per point x workload with measured B trials of two or more
    tasks: ``n`` trials, ``n_overlapping`` (``concurrent_ns`` above
    *min_overlap_ns*), ``n_unknown`` (no intervals), ``median_concurrent_ns``,
    ``status`` (serialised, partly serialised, overlapping) and ``text``."""
    need = {"point_id", "workload", "group", "concurrent_ns", "n_tasks"}
    if trials is None or not len(trials) or not need <= set(trials.columns):
        return []
    b = trials[trials["group"] == B]
    if "warmup" in b:
        b = b[~b["warmup"].astype(bool)]
    if "empty" in b:
        b = b[~b["empty"].astype(bool)]
    b = b[pd.to_numeric(b["n_tasks"], errors="coerce") >= 2]
    out = []
    for (pid, wl), g in b.groupby(["point_id", "workload"], sort=True):
        c = pd.to_numeric(g["concurrent_ns"], errors="coerce")
        known = c.dropna()
        n, n_ov = int(len(known)), int((known > min_overlap_ns).sum())
        if n == 0:
            status = "unknown"
        elif n_ov == 0:
            status = SERIALISED
        elif n_ov < n:
            status = PARTLY
        else:
            status = OVERLAPPING
        med = float(known.median()) if n else math.nan
        out.append(
            {
                "point_id": str(pid),
                "workload": str(wl),
                "n": n,
                "n_overlapping": n_ov,
                "n_unknown": int(c.isna().sum()),
                "median_concurrent_ns": med,
                "status": status,
                "text": (
                    f"{pid} ({wl}): group B's device intervals are missing: its concurrency cannot be checked"
                    if status == "unknown"
                    else _sentence(str(pid), str(wl), status, n, n_ov, med)
                ),
            }
        )
    return out


def summary_entry(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """summary.json's ``group_b_concurrency``: every point's entry, the
    serialised ones named, and one sentence for the whole target."""
    serial = [f"{r['point_id']} ({r['workload']})" for r in rows if r["status"] == SERIALISED]
    partly = [f"{r['point_id']} ({r['workload']})" for r in rows if r["status"] == PARTLY]
    if not rows:
        text = "no measured B trial with two or more tasks: B's concurrency was not checked"
    elif not serial and not partly:
        text = "group B's tasks ran at once in every measured trial of every point"
    else:
        parts = []
        if serial:
            parts.append(f"serialised (never at once) at {len(serial)} of {len(rows)} point(s): {', '.join(serial)}")
        if partly:
            parts.append(f"partly serialised at {len(partly)}: {', '.join(partly)}")
        text = "group B was " + "; ".join(parts) + ": there B does not measure concurrency (a transport finding)"
    return {"points": rows, "serialised": serial, "partly_serialised": partly, "text": text}


def annotate_verdicts(verdicts: pd.DataFrame, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The verdict table with ``group_b_concurrency`` (status) and
    ``group_b_text`` (the sentence) per point x workload; empty strings
    where B was not checked."""
    v = verdicts.copy()
    if not len(v) or not {"point_id", "workload"} <= set(v.columns):
        return v
    by = {(r["point_id"], r["workload"]): r for r in rows}
    keys = list(zip(v["point_id"].astype(str), v["workload"].astype(str)))
    v["group_b_concurrency"] = [by[k]["status"] if k in by else "" for k in keys]
    v["group_b_text"] = [by[k]["text"] if k in by else "" for k in keys]
    return v
