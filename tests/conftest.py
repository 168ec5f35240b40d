"""Shared test helpers: synthetic runner output shaped like docs/runner.md.

The analysis tests never need the C runner: they build the JSON Lines records
here, with timelines chosen so that the expected metrics are known exactly.
Use the ``synth`` fixture (this module) from a test.
"""

from __future__ import annotations

import json
import os
import types
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pytest

ENGINE_OF = {"M": "mx", "V": "vec", "D": "dma"}

# The slow tests run the real pipeline (Snakemake, the runner, often several
# times), cross-compile and emulate the Hexagon runner, compile against the
# SDK declarations or need a quiet machine, and take from ~10 s to minutes
# each.  They are chosen by place, not by a hand-kept list: every module
# under tests/pipeline/ (the workflow end to end), and any other module that
# says ``pytestmark = pytest.mark.slow`` itself.  `pytest -m "not slow"` is
# the fast loop (under two minutes on a shared 2-core machine); CI and
# `python3 -m pytest` run everything.
SLOW_FOLDERS = ("pipeline",)


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        rel = item.path.relative_to(here)
        if rel.parts[0] in SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)


def pytest_report_header(config):
    """The machine, in the session's header: the suite's timing-dependent
    tests pass or skip by what it gives, and a log (CI's included) that
    names it says which kind of machine a result came from."""
    model, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown CPU":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    isa = " ".join(f for f in ("avx2", "avx512f", "amx_tile", "asimd", "sve") if f in flags) or "none named"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"machine: {model}; {os.cpu_count()} cores online, {usable} usable; vector ISA: {isa}"


def meta_record(online_cores: int = 4, **overrides: Any) -> dict[str, Any]:
    meta = {
        "record": "meta",
        "schema_version": 2,
        "target": "host",
        "kernels": "synthetic",
        "compiler": "none",
        "cflags": "",
        "cpu_model": "test cpu",
        "online_cores": online_cores,
        "engines": ["host", "vec", "mx", "dma"],
        "affinity": {"host": -1, "vec": -1, "mx": -1, "dma": -1},
        "engines_exceed_cores": online_cores < 4,
        "clock": {"source": "synthetic", "resolution_ns": 1, "read_overhead_ns": 20},
        "args": {},
        "workloads": ["mvd"],
        "tasks": {
            "M": {
                "precision": "fp32",
                "m": 64,
                "n": 64,
                "k": 64,
                "flops": 2 * 64**3,
                "bytes_in": 32768,
                "bytes_out": 16384,
                "prep_ns": 5000,
            },
            "V": {
                "precision": "fp32",
                "rows": 64,
                "cols": 256,
                "passes": 1,
                "variant": "onchip",
                "workers": 1,
                "bytes_in": 65536,
                "bytes_out": 66048,
                "in_scratch": True,
            },
            "D": {
                "rows": 64,
                "row_bytes": 1000,
                "src_stride": 2000,
                "dst_stride": 1000,
                "descriptors": 1,
                "bytes": 64000,
            },
        },
        "scratch": {"capacity": 8388608, "reserved": {"M": 0, "V": 0, "D": 0}},
        "calibration": None,
        "wait": "spin-block",
        "spin_ns": 20000,
        "early_completion": True,
        "labels": {},
        "warnings": [],
    }
    meta.update(overrides)
    return meta


def trial_record(
    *,
    round: int,
    workload: str,
    group: str,
    tasks: Sequence[tuple],  # (task, engine, begin, end[, host_seen[, cpu_ns[, launch]]])
    submit: tuple[float, float],
    wait: tuple[float, float],
    device: tuple[float, float] | None = None,
    waits: Sequence[tuple] = (),  # (who, on, begin, end)
    seq: int = 0,
    warmup: bool = False,
    empty: bool = False,
    scratch_peak_bytes: int = 0,
    checksums_ok: bool = True,
    host_totals: tuple[float, float, int] | None = None,  # submit_ns, wait_ns, requests
    cpu_share: float = 1.0,  # cpu_ns of a task = its span x this (1: ran the whole span)
    submits: Sequence[float] | None = None,  # host.submits (schema 2)
) -> dict[str, Any]:
    task_objs = []
    for t in tasks:
        name, engine, b, e = t[:4]
        seen = t[4] if len(t) > 4 else wait[1]
        cpu = t[5] if len(t) > 5 else (e - b) * cpu_share
        launch = t[6] if len(t) > 6 else b
        task_objs.append(
            {
                "task": name,
                "engine": engine,
                "launch": int(launch),
                "begin": int(b),
                "end": int(e),
                "host_seen": int(seen),
                "checksum": "0123456789abcdef",
                "cpu_ns": int(cpu),
                "cpu_begin": None,
                "cpu_end": None,
            }
        )
    return {
        "record": "trial",
        "round": round,
        "seq": seq,
        "warmup": warmup,
        "workload": workload,
        "group": group,
        "empty": empty,
        "host": {
            "submit_begin": int(submit[0]),
            "submit_end": int(submit[1]),
            "wait_begin": int(wait[0]),
            "wait_end": int(wait[1]),
        }
        | (
            {}
            if host_totals is None
            else {"submit_ns": int(host_totals[0]), "wait_ns": int(host_totals[1]), "requests": int(host_totals[2])}
        )
        | ({} if submits is None else {"submits": [int(x) for x in submits]}),
        "device": None if device is None else {"entry_begin": int(device[0]), "entry_end": int(device[1])},
        "tasks": task_objs,
        "waits": [{"who": w, "on": o, "begin": int(b), "end": int(e)} for w, o, b, e in waits],
        "scratch_peak_bytes": scratch_peak_bytes,
        "makespan_ns": int(wait[1] - submit[0]),
        "checksums_ok": checksums_ok,
    }


def end_record(n_trials: int, status: str = "ok") -> dict[str, Any]:
    return {"record": "end", "status": status, "trials": n_trials, "checksum_mismatches": 0, "wall_ns": 1}


def scheduled_trial(
    group: str,
    workload: str,
    durations: Mapping[str, float],
    t0: float,
    *,
    round: int = 0,
    submit_ns: float = 1000,
    gap_ns: float = 2000,
    entry_ns: float = 500,
    **kw: Any,
) -> dict[str, Any]:
    """A trial whose timeline follows the group's execution model.

    A: tasks one after another with a host round trip (gap) between them.
    B: all tasks start together on their engines.
    C: one entry, tasks one after another inside it (barrier between them).
    D: one entry, all tasks start together.
    alone: the single task.
    """
    names = [c.upper() for c in workload] if group != "alone" else [workload]
    s0, s1 = t0, t0 + submit_ns
    start = s1 + gap_ns
    tasks = []
    device = None
    waits = []
    if group in ("A", "alone"):
        t = start
        for n in names:
            tasks.append((n, ENGINE_OF[n], t, t + durations[n], t + durations[n] + gap_ns / 2))
            t = t + durations[n] + gap_ns
        last_end = t - gap_ns
    elif group == "B":
        for n in names:
            tasks.append((n, ENGINE_OF[n], start, start + durations[n], start + durations[n] + gap_ns / 2))
        last_end = max(e for _, _, _, e, _ in tasks)
    elif group in ("C", "D"):
        e0 = start
        t = e0 + entry_ns
        for n in names:
            b = t if group == "C" else e0 + entry_ns
            tasks.append((n, ENGINE_OF[n], b, b + durations[n], b + durations[n] + gap_ns / 2))
            if group == "C":
                t = b + durations[n]
        last_end = max(e for _, _, _, e, _ in tasks)
        device = (e0, last_end + entry_ns)
        v_end = next((e for n, _, _, e, _ in tasks if n == "V"), e0 + entry_ns)
        if "M" in names:
            m_end = next(e for n, _, _, e, _ in tasks if n == "M")
            waits.append(("vec", "eM", min(v_end, m_end), m_end))
        last_end = device[1]
    else:
        raise ValueError(group)
    wait = (s1, last_end + gap_ns)
    # Host wait records as the runner writes them: one per task in A (the
    # host submits the next task when it sees the previous one finish), one
    # per trial otherwise.
    if group == "A":
        w_begin = s1
        for i, (n, _, b, e, seen) in enumerate(tasks):
            w_end = wait[1] if i == len(tasks) - 1 else seen
            waits.append(("host", n, w_begin, w_end))
            w_begin = w_end + 100  # 100 ns to submit the next task
    else:
        waits.append(("host", {"B": "all", "alone": names[0]}.get(group, "req"), s1, wait[1]))
    host_waits = [(b, e) for who, _, b, e in waits if who == "host"]
    wait_ns = sum(e - b for b, e in host_waits)
    submit_ns = (s1 - s0) + 100 * (len(host_waits) - 1)
    kw.setdefault("host_totals", (submit_ns, wait_ns, len(host_waits)))
    return trial_record(
        round=round,
        workload=workload,
        group=group,
        tasks=tasks,
        submit=(s0, s1),
        wait=wait,
        device=device,
        waits=waits,
        **kw,
    )


def synthetic_run(
    durations: Mapping[str, float] = {"M": 100_000, "V": 80_000, "D": 60_000},
    *,
    workloads: Sequence[str] = ("mvd",),
    groups: Sequence[str] = ("A", "B", "C", "D"),
    rounds: int = 10,
    warmup: int = 2,
    jitter: float = 0.0,
    group_scale: Mapping[str, float] | None = None,
    empty_ns: float = 10,
    seed: int = 1,
    meta: Mapping[str, Any] | None = None,
    checksum_fail: Iterable[tuple[int, str]] = (),
    cpu_share: Mapping[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Records of a whole run: meta, warm-up and measured rounds, verify, end.

    ``group_scale`` multiplies every task duration of a group (contention or
    speed-up knobs); ``jitter`` is a relative per-trial noise, seeded.
    ``cpu_share`` (per group, default 1) is the share of its span each task
    spends running: 1 models engines that really run at once, 1 / n tasks
    time sharing one core.
    """
    shares = dict(cpu_share or {})
    rng = np.random.default_rng(seed)
    scale = {g: 1.0 for g in groups} | dict(group_scale or {})
    bad = set(checksum_fail)
    recs: list[dict[str, Any]] = [meta_record(**(meta or {}))]
    t = 1_000_000.0
    for r in range(-warmup, rounds):
        plan = [(w, g, e) for w in workloads for g in groups for e in (False, True)]
        plan += [(task, "alone", e) for task in durations for e in (False, True)]
        order = rng.permutation(len(plan))
        for seq, i in enumerate(order):
            w, g, empty = plan[i]
            f = (1.0 + jitter * rng.standard_normal()) * scale.get(g, 1.0)
            d = {k: (empty_ns if empty else v * f) for k, v in durations.items()}
            rec = scheduled_trial(
                g,
                w,
                d,
                t,
                round=r,
                seq=seq,
                warmup=r < 0,
                empty=empty,
                checksums_ok=(r, g) not in bad,
                cpu_share=shares.get(g, 1.0),
            )
            recs.append(rec)
            t = rec["host"]["wait_end"] + 10_000
    for w in workloads:
        recs.append({"record": "verify", "workload": w, "group": "D", "checksums": {}, "files": {}})
    recs.append(end_record(sum(1 for x in recs if x["record"] == "trial")))
    return recs


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> Path:
    path = Path(path)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def synth():
    """The helpers of this module, so tests can call ``synth.synthetic_run(...)`` etc."""
    names = [
        "ENGINE_OF",
        "meta_record",
        "trial_record",
        "end_record",
        "scheduled_trial",
        "synthetic_run",
        "write_jsonl",
    ]
    return types.SimpleNamespace(**{k: globals()[k] for k in names})


# The finished tiny run the pipeline tests share (session scope): a copy of
# the workflow (copy_repo) with one `all` on the tiny config done in it,
# about a minute and a half on 2 cores.  Tests read it, or copy it whole
# (shutil.copytree, symlinks kept) before they change anything: the
# end-to-end tests edit code in a copy, the relocation test moves a copy, the
# damaged-intermediate tests damage one; the report tests build their
# reports in it.  Here rather than in
# tests/pipeline/conftest.py: a second module named conftest would shadow this
# one for the tests that import its helpers (``from conftest import ...``).
@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    import copy
    import shutil

    from pipeline_util import TINY, copy_repo, snakemake, write_config

    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("needs make and a C compiler: apt-get install build-essential")
    wd = copy_repo(tmp_path_factory.mktemp("tiny_run"))
    write_config(wd, copy.deepcopy(TINY))
    res = snakemake(wd, "all")
    assert res.returncode == 0, res.stderr[-4000:]
    return wd
