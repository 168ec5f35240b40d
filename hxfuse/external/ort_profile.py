"""ONNX Runtime's profile read as the tasks' intervals and the timeline's lanes (pure).

Owns :func:`profile_runs` (one session's profile -> each run's span and
each task's interval on the harness clock), :func:`thread_lanes` (the lane
of every thread that ran a node) and :func:`task_nodes` (one task's nodes
as the raw file's ``tasks[].nodes``).  Functions of the profile's events
only, so recorded profiles test them (tests/data).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from hxfuse.model import TASKS


def _node_name(event_name: str) -> str:
    return event_name[: -len("_kernel_time")] if event_name.endswith("_kernel_time") else event_name


def profile_runs(
    events: Sequence[Mapping[str, Any]],
    start_ns: int,
    epoch_ns: int = 0,
    task_of: Callable[[str], str | None] | None = None,
) -> list[dict[str, Any]]:
    """Per run of one session (in call order): its span and each task's interval.

    *events* is ONNX Runtime's profile (a list of Chrome trace events, ``ts``
    and ``dur`` in microseconds since the profiler's start ``start_ns``, which
    ``get_profiling_start_time_ns`` reports on the system clock).  Every
    ``model_run`` session event is one ``run()`` call, in order; each node's
    ``*_kernel_time`` event belongs to the run whose span contains it (nodes
    of a Loop body included).  A task's interval is its first node's start to
    its last node's end.  ``task_of`` maps a node name to its task (default:
    the name's first letter, since every node is named ``<task>_...``);
    nodes it maps to None are skipped.

    Returns dicts ``{"run", "begin", "end", "tasks": {task: {"begin", "end",
    "nodes", "tids"}}, "nodes": [{"name", "task", "begin", "end", "tid"}]}``
    with times in ns relative to ``epoch_ns``; ``nodes`` lists every node of
    a task in start order (``name`` without the ``_kernel_time`` suffix,
    ``tid`` the thread ORT ran it on).
    """
    task_of = task_of or (lambda name: name[0] if len(name) > 1 and name[1] == "_" and name[0] in TASKS else None)
    runs = sorted(
        (e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"), key=lambda e: e["ts"]
    )
    nodes = sorted(
        (e for e in events if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")),
        key=lambda e: e["ts"],
    )

    def ns(us: float) -> int:
        return int(start_ns + round(us * 1000) - epoch_ns)

    out: list[dict[str, Any]] = []
    j = 0
    for i, r in enumerate(runs):
        r0, r1 = r["ts"], r["ts"] + r["dur"]
        tasks: dict[str, dict[str, Any]] = {}
        node_list: list[dict[str, Any]] = []
        while j < len(nodes) and nodes[j]["ts"] < r0:
            j += 1  # nodes outside any run (none expected): skipped
        while j < len(nodes) and nodes[j]["ts"] <= r1:
            e = nodes[j]
            j += 1
            if e["ts"] + e["dur"] > r1:
                raise ValueError(f"profile: node {e['name']} at {e['ts']} us ends after its run ({r1} us)")
            name = _node_name(str(e["name"]))
            task = task_of(name)
            if task is None:
                continue
            node_list.append(
                {"name": name, "task": task, "begin": ns(e["ts"]), "end": ns(e["ts"] + e["dur"]), "tid": e.get("tid")}
            )
            t = tasks.setdefault(task, {"begin": e["ts"], "end": e["ts"] + e["dur"], "nodes": 0, "tids": []})
            t["begin"] = min(t["begin"], e["ts"])
            t["end"] = max(t["end"], e["ts"] + e["dur"])
            t["nodes"] += 1
            if e.get("tid") not in t["tids"]:
                t["tids"].append(e.get("tid"))
        for t in tasks.values():
            t["begin"], t["end"] = ns(t["begin"]), ns(t["end"])
        out.append({"run": i, "begin": ns(r0), "end": ns(r1), "tasks": tasks, "nodes": node_list})
    return out


def thread_lanes(
    runs_by_session: Mapping[str, Sequence[Mapping[str, Any]]], known: Mapping[Any, str]
) -> dict[Any, str]:
    """Lane name of every thread that ran a profiled node: the harness's own
    thread's name where ``known`` (OS thread id -> ``mx``, ``vec``, ``dma``,
    ``graph``) has it, else ``ort1``, ``ort2``, ... (ONNX Runtime's pool
    threads) in the order they first ran a node, sessions in the given order."""
    lanes: dict[Any, str] = {}
    k = 0
    for runs in runs_by_session.values():
        for r in runs:
            for n in sorted(r.get("nodes", ()), key=lambda n: n["begin"]):
                if n["tid"] in lanes:
                    continue
                if n["tid"] in known:
                    lanes[n["tid"]] = known[n["tid"]]
                else:
                    k += 1
                    lanes[n["tid"]] = f"ort{k}"
    return lanes


def task_nodes(run: Mapping[str, Any], task: str, lanes: Mapping[Any, str]) -> list[list]:
    """One task's profiled nodes in one run (an item of :func:`profile_runs`)
    as the raw file's ``tasks[].nodes``: ``[name, lane, begin, end]``, lane =
    the thread the node ran on (:func:`thread_lanes`), in start order."""
    return [[n["name"], lanes[n["tid"]], n["begin"], n["end"]] for n in run["nodes"] if n["task"] == task]
