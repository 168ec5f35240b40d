"""The ready-task profile of a graph (workload 4, docs/graphs.md): the ASAP
step of every node (0 without predecessors, else one more than its latest
predecessor), how many nodes of each engine class are ready at each step,
and headline numbers.  Pure functions over the graph dict of
hxfuse.graph.build."""

from __future__ import annotations

import pandas as pd

from hxfuse.graph.build import CLASSES, OP_CLASS


def levels(graph: dict) -> dict[str, int]:
    """ASAP step of every node: 0 without predecessors, else one more than its
    latest predecessor (a node is ready at its step when every engine keeps
    up).  Raises ValueError on a cycle or an unknown node."""
    preds = {n["name"]: list(n.get("after", [])) for n in graph["nodes"]}
    for n, ps in preds.items():
        for p in ps:
            if p not in preds:
                raise ValueError(f"node {n!r}: 'after' names unknown node {p!r}")
    level: dict[str, int] = {}
    pending = dict(preds)
    while pending:
        ready = [n for n, ps in pending.items() if all(p in level for p in ps)]
        if not ready:
            raise ValueError(f"the dependencies form a cycle through {sorted(pending)}")
        for n in ready:
            level[n] = 1 + max((level[p] for p in preds[n]), default=-1)
            del pending[n]
    return level


def ready_profile(graph: dict) -> pd.DataFrame:
    """Ready tasks per topological step and engine class: one row per (step,
    class) with ``ready`` (how many nodes of that class have that ASAP step),
    every class present at every step (zeros included)."""
    lv = levels(graph)
    cls = {n["name"]: OP_CLASS[n["op"]] for n in graph["nodes"]}
    steps = range(max(lv.values()) + 1)
    rows = [
        {"step": s, "class": c, "ready": sum(1 for n in lv if lv[n] == s and cls[n] == c)}
        for s in steps
        for c in CLASSES
    ]
    return pd.DataFrame(rows, columns=["step", "class", "ready"])


def profile_summary(graph: dict) -> dict:
    """Headline numbers of the ready profile: nodes per class, steps (the
    critical path in nodes), the widest step, the mean width, and the number
    of steps where two or more engine classes have ready work (where fusion
    across engines can overlap anything)."""
    prof = ready_profile(graph)
    width = prof.groupby("step")["ready"].sum()
    mixed = prof[prof["ready"] > 0].groupby("step")["class"].nunique()
    counts = {c: int(prof.loc[prof["class"] == c, "ready"].sum()) for c in CLASSES}
    return {
        "nodes": int(width.sum()),
        **{f"n_{c}": v for c, v in counts.items()},
        "steps": int(len(width)),
        "max_ready": int(width.max()),
        "mean_ready": float(width.mean()),
        "mixed_steps": int((mixed >= 2).sum()),
        "edges": sum(len(n.get("after", [])) for n in graph["nodes"]),
    }
