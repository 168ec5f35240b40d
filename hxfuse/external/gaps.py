"""Hand-over gaps of a trial: the part of its makespan no task's kernel covers.

Either backend's makespan runs from the host's first hand-over
(``submit_begin``) to the host seeing the last completion (``wait_end``).
What of it no task's [begin, end] span covers is time spent handing work
over and reporting it back: before the first kernel starts (``start``),
between kernels (``between``) and after the last one ends (``end``).  The
same rule on both sides, so a Python harness's hand-over can be set
against the runner's (docs/ort.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ["trial_id", "group", "workload", "gap_ns", "start_gap_ns", "between_gap_ns", "end_gap_ns"]


def _union_ns(spans: list[tuple[float, float]]) -> float:
    total, cur_b, cur_e = 0.0, None, None
    for b, e in sorted(spans):
        if cur_e is None or b > cur_e:
            if cur_e is not None:
                total += cur_e - cur_b
            cur_b, cur_e = b, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_b if cur_e is not None else 0.0)


def trial_gaps(run) -> pd.DataFrame:
    """One row per measured trial of *run* (a :class:`hxfuse.runner.records.Run`)
    with its gaps in ns (see the module docstring); NaN where a trial has no
    task spans."""
    tr = run.trials[~run.trials["warmup"].astype(bool) & ~run.trials["empty"].astype(bool)]
    spans = run.tasks.dropna(subset=["begin", "end"]).groupby("trial_id")
    rows = []
    for t in tr.itertuples(index=False):
        sb, we = float(t.host_submit_begin), float(t.host_wait_end)
        if t.trial_id not in spans.groups:
            rows.append([t.trial_id, t.group, t.workload, *[np.nan] * 4])
            continue
        s = spans.get_group(t.trial_id)
        b, e = s["begin"].to_numpy(float), s["end"].to_numpy(float)
        covered = _union_ns(list(zip(b, e)))
        start, end = max(b.min() - sb, 0.0), max(we - e.max(), 0.0)
        between = max((e.max() - b.min()) - covered, 0.0)
        rows.append([t.trial_id, t.group, t.workload, start + between + end, start, between, end])
    return pd.DataFrame(rows, columns=COLUMNS)
