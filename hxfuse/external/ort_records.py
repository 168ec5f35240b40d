"""The records the harness writes, in the runner's raw schema (docs/runner.md).

Owns the meta record (:func:`meta_record`: the backend, the point, the
tasks' sizes :func:`task_meta`, each group's meaning :data:`GROUP_MAPPING`,
the session options, the machine's state before), each trial record
(:func:`trial_record`: a trial's calls and host times joined with the
profiled intervals, relative to the run's epoch), and the file itself
(:func:`write_run`: verify records, the end record with the runner's
integrity fields, written to FILE.tmp and renamed).  The machine readings
the meta and end records carry (load average, cores busy with others, CPU
model) are here too.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict
from typing import Any, Mapping, Sequence

from hxfuse.external.ort_checks import v_activation
from hxfuse.external.ort_graphs import OPSET
from hxfuse.external.ort_point import Spec
from hxfuse.external.ort_profile import task_nodes
from hxfuse.model import ENGINE_OF
from hxfuse.runner.integrity import fnv1a64

SCHEMA_VERSION = 2
GROUP_MAPPING = {
    "A_ort": "ONNX Runtime (CPU EP): one InferenceSession per task, each run() called by its own "
    "thread, the host waits for each before handing over the next (back to back)",
    "B_ort": "ONNX Runtime (CPU EP): the same sessions (one intra-op thread each), every engine "
    "thread armed with its session and started by one event; run_with_iobinding releases the GIL, "
    "so the runs execute concurrently: ONNX Runtime's best concurrency for independent models",
    "B_ort_graph": "ONNX Runtime (CPU EP): one graph with the independent branches, "
    "ExecutionMode.ORT_PARALLEL, inter_op_num_threads = branches; a negative control "
    "(an all-CPU graph executes as one stream)",
    "alone": "each task's session run alone by its thread",
}


def load_average() -> float:
    try:
        return float(os.getloadavg()[0])
    except (OSError, AttributeError):
        return -1.0


def _cpu_times() -> dict[str, tuple[int, int]] | None:
    try:
        out = {}
        with open("/proc/stat") as fh:
            for line in fh:
                f = line.split()
                if f and f[0].startswith("cpu") and f[0] != "cpu":
                    vals = list(map(int, f[1:]))
                    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
                    out[f[0]] = (sum(vals), idle)
        return out
    except OSError:
        return None


def other_busy_cores(sample_s: float = 0.2) -> float:
    """Cores kept busy by others over *sample_s* while the harness idles (as
    hxrun's ``other_busy_cores_*``): the summed busy fraction; -1 where unreadable."""
    a = _cpu_times()
    time.sleep(sample_s)
    b = _cpu_times()
    if not a or not b:
        return -1.0
    busy = 0.0
    for cpu, (tot, idle) in b.items():
        if cpu in a:
            dt, di = tot - a[cpu][0], idle - a[cpu][1]
            busy += (dt - di) / dt if dt > 0 else 0.0
    return round(busy, 3)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def task_meta(spec: Spec) -> dict[str, Any]:
    """meta.tasks in the runner's shape (docs/runner.md)."""
    v_bytes = spec.v_rows * spec.v_cols * 4
    window = spec.d_rows * spec.d_row_bytes
    return {
        "M": {
            "precision": "fp32",
            "m": spec.m,
            "n": spec.n,
            "k": spec.k,
            "flops": 2 * spec.m * spec.n * spec.k,
            "bytes_in": 4 * (spec.m * spec.k + spec.k * spec.n),
            "bytes_out": 4 * spec.m * spec.n,
            "prep_ns": 0,
        },
        "V": {
            "precision": "fp32",
            "activation": v_activation(spec),
            "rows": spec.v_rows,
            "cols": spec.v_cols,
            "passes": spec.v_passes,
            "variant": spec.v_variant,
            "workers": spec.v_workers,
            "bytes_in": v_bytes,
            "bytes_out": v_bytes + 8 * spec.v_rows,
            "in_scratch": False,
        },
        "D": {
            "rows": spec.d_rows,
            "row_bytes": spec.d_row_bytes,
            "src_stride": spec.d_src_stride,
            "dst_stride": spec.d_row_bytes,
            "descriptors": None,
            "repeat": spec.d_repeat,
            "window_bytes": window,
            "bytes": window * spec.d_repeat,
        },
    }


def trial_record(
    rec: dict,
    intervals: Mapping[str, list[dict]],
    verified: Mapping[str, Mapping[str, str]],
    epoch: int,
    lanes: Mapping[Any, str],
) -> dict[str, Any]:
    """The trial record of one trial the harness ran (its calls, host times
    and the run index of each session it ran: ``_runs``, ``_host``), with
    each task's interval from the profile (*intervals*, per session key),
    its checksum checked against *verified*, times relative to *epoch*."""
    host = rec.pop("_host")
    runs = rec.pop("_runs")
    rel = lambda v: None if v is None else int(v - epoch)  # noqa: E731
    ok = True
    tasks_out = []
    for t in rec["tasks"]:
        key, idx = next((k, i) for k, i in runs if k == t["task"] or k.startswith("graph:"))
        iv = intervals[key][idx]["tasks"].get(t["task"])
        if iv is None:
            raise RuntimeError(f"session {key} run {idx}: no profiled node of task {t['task']}")
        ok &= t["checksum"] == verified[key][t["task"]]
        # engine: the thread that called run() (for B_ort_graph the graph
        # thread, whichever pool threads ran the nodes: tasks[].nodes says)
        nodes = task_nodes(intervals[key][idx], t["task"], lanes)
        tasks_out.append(
            {
                "task": t["task"],
                "engine": t["engine"],
                "launch": rel(t["launch"]),
                "begin": iv["begin"],
                "end": iv["end"],
                "host_seen": rel(t["host_seen"]),
                "checksum": t["checksum"],
                "cpu_ns": t["cpu_ns"],
                "cpu_begin": t["cpu_begin"],
                "cpu_end": t["cpu_end"],
                "profile_nodes": iv["nodes"],
                "nodes": nodes,
            }
        )
    h = {k: rel(host[k]) for k in ("submit_begin", "submit_end", "wait_begin", "wait_end")}
    h.update(
        submit_ns=host.get("submit_ns", host["submit_end"] - host["submit_begin"]),
        wait_ns=host.get("wait_ns", host["wait_end"] - host["wait_begin"]),
        requests=host["requests"],
        submits=host["submits"],
    )
    return {
        "record": "trial",
        "round": rec["round"],
        "seq": rec["seq"],
        "warmup": rec["warmup"],
        "workload": rec["workload"],
        "group": rec["group"],
        "empty": False,
        "host": h,
        "device": None,
        "tasks": tasks_out,
        "scratch_peak_bytes": None,
        "waits": [{"who": "host", "on": t, "begin": rel(b), "end": rel(c)} for t, b, c in host.get("waits", ())],
        "makespan_ns": h["wait_end"] - h["submit_begin"],
        "checksums_ok": bool(ok),
    }


def meta_record(
    spec: Spec,
    ort_version: str,
    cores: Mapping[str, int],
    sessions: Mapping[str, Mapping[str, Any]],
    load_before: float,
    busy_before: float,
    labels: Mapping[str, str],
) -> dict[str, Any]:
    """The meta record: *cores* is each engine's core (:func:`~hxfuse.external.ort_point.engine_cores`),
    *sessions* each session's options by session key."""
    backend = f"onnxruntime {ort_version} CPUExecutionProvider"
    res = time.get_clock_info("time")
    warnings = [
        f"hxrun option {k.replace('_', '-')}={v} has no ONNX Runtime counterpart (recorded only)"
        for k, v in spec.ignored.items()
    ]
    if spec.v_workers > 1:
        warnings.append(
            f"V runs with intra_op_num_threads={spec.v_workers}: its cpu_ns counts only the "
            "calling thread, not ONNX Runtime's intra-op pool threads"
        )
    engines = [ENGINE_OF[t] for t in spec.tasks] + ["graph"]
    return {
        "record": "meta",
        "schema_version": SCHEMA_VERSION,
        "target": "host",
        "backend": backend,
        "kernels": backend,
        "harness": "hxfuse.external.ort",
        "onnxruntime": ort_version,
        "onnx_opset": OPSET,
        "compiler": None,
        "cflags": None,
        "cpu_model": _cpu_model(),
        "online_cores": os.cpu_count(),
        "cpu_governor": None,
        "load_average_before": load_before,
        "other_busy_cores_before": busy_before,
        "engines": ["host", *engines],
        "group_mapping": GROUP_MAPPING,
        "affinity": cores,
        "engines_exceed_cores": len(spec.tasks) > (os.cpu_count() or 1),
        "clock": {
            "source": "CLOCK_REALTIME (time.time_ns): the clock of ONNX Runtime's profiler",
            "resolution_ns": int(res.resolution * 1e9) or 1,
            "profile_resolution_ns": 1000,
        },
        "args": {k: v for k, v in asdict(spec).items() if k != "ignored"} | {"ignored": spec.ignored},
        "workloads": list(spec.workloads),
        "tasks": task_meta(spec),
        "sessions": dict(sessions),
        "scratch": None,
        "calibration": None,
        "wait": None,
        "spin_ns": None,
        "early_completion": None,
        "labels": dict(labels),
        "warnings": warnings,
        "emulated": False,
    }


def write_run(
    out: str,
    meta: Mapping[str, Any],
    trials: Sequence[Mapping[str, Any]],
    verify_records: Sequence[Mapping[str, Any]],
    problems: list[str],
    t_start: int,
) -> int:
    """Write the run's file: *meta*, the trial records, the verify records
    and the end record (status, the check's *problems*, the wall time since
    *t_start* on the monotonic clock, the machine's state after).  Written to
    FILE.tmp, renamed on success.  Returns the number of checksum mismatches."""
    mismatches = sum(not t["checksums_ok"] for t in trials)
    lines = [json.dumps(meta), *(json.dumps(t) for t in trials), *(json.dumps(v) for v in verify_records)]
    status = "check_failed" if problems else ("ok" if mismatches == 0 else "checksum_mismatch")
    # the runner's integrity fields (hxfuse.runner.integrity): the record count and
    # the FNV-1a 64 of every byte before the end record, newlines included
    head = ("\n".join(lines) + "\n").encode("utf-8")
    lines.append(
        json.dumps(
            {
                "record": "end",
                "records": len(lines),
                "digest": f"fnv1a64:{fnv1a64(head):016x}",
                "status": status,
                "trials": len(trials),
                "checksum_mismatches": mismatches,
                "check_problems": problems,
                "wall_ns": time.monotonic_ns() - t_start,
                "load_average_after": load_average(),
                "other_busy_cores_after": other_busy_cores(),
            }
        )
    )
    tmp = out + ".tmp"
    with open(tmp, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    os.replace(tmp, out)
    return mismatches
