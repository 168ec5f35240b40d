"""The harness: one point's groups run under ONNX Runtime, in hxrun's protocol.

Owns :class:`Harness`: it builds every session (one per task, one
multi-branch graph per workload) and the engine threads, verifies each
session's outputs once, then runs warm-up and measured rounds in a seeded
order, each round every group of every workload and each task alone:

``A_ort``        one session per task, run back to back (the host hands one
                 task to its thread, waits, then the next);
``B_ort``        the same sessions' ``run`` called from their engine threads,
                 armed and started by one event: ONNX Runtime's best
                 concurrency for independent models;
``B_ort_graph``  one graph holding the independent branches, executed with
                 ``ExecutionMode.ORT_PARALLEL`` (negative control);
``alone``        each task's session alone.

After the rounds it reads every session's profile
(:mod:`hxfuse.external.ort_profile`) and hands the trials to
:mod:`hxfuse.external.ort_records`, which writes the file.
"""

from __future__ import annotations

import os
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from hxfuse.external.ort_checks import check_arrays
from hxfuse.external.ort_engines import Engine
from hxfuse.external.ort_inputs import round_order, runner_inputs
from hxfuse.external.ort_point import Spec, engine_cores
from hxfuse.external.ort_profile import profile_runs, thread_lanes
from hxfuse.external.ort_records import (
    load_average,
    meta_record,
    other_busy_cores,
    task_meta,
    trial_record,
    write_run,
)
from hxfuse.external.ort_sessions import BoundSession
from hxfuse.model import ENGINE_OF, ORT_GROUPS, WORKLOAD_TASKS
from hxfuse.runner.checks import DEFAULT_F32_ATOL, DEFAULT_F32_RTOL


class Harness:
    """One point's sessions and engine threads; :meth:`run` measures it.
    :meth:`close` stops the threads and removes the profiles' directory."""

    def __init__(
        self,
        spec: Spec,
        rtol: float = DEFAULT_F32_RTOL,
        atol: float = DEFAULT_F32_ATOL,
        point: Spec | None = None,
        matching: Mapping[str, dict] | None = None,
    ):
        """*spec* is what runs; *point* the point as configured where duration
        matching (*matching*, :mod:`hxfuse.external.ort_match`) rescaled it."""
        import onnxruntime as ort

        self.spec, self.rtol, self.atol = spec, rtol, atol
        self.point, self.matching = point or spec, dict(matching or {})
        self.ort_version = ort.__version__
        self.cores = engine_cores(spec.affinity, spec.workloads, os.cpu_count() or 1)
        self.inputs = runner_inputs(spec)
        self._tmp = tempfile.TemporaryDirectory(prefix="hxort-")
        pref = lambda name: str(Path(self._tmp.name, name))  # noqa: E731
        self.sessions = {
            t: BoundSession(
                spec,
                [t],
                self.inputs,
                intra_threads=spec.v_workers if t == "V" else 1,
                parallel=False,
                profile_prefix=pref(t),
            )
            for t in spec.tasks
        }
        self.graphs = {
            w: BoundSession(
                spec, WORKLOAD_TASKS[w], self.inputs, intra_threads=1, parallel=True, profile_prefix=pref("graph_" + w)
            )
            for w in spec.workloads
        }
        self.completions: queue.SimpleQueue = queue.SimpleQueue()
        self.engines = {t: Engine(ENGINE_OF[t], self.cores[ENGINE_OF[t]], self.completions) for t in spec.tasks}
        self.graph_engine = Engine("graph", -1)
        if self.cores["host"] >= 0:
            os.sched_setaffinity(0, {self.cores["host"]})

    def close(self) -> None:
        for e in [*self.engines.values(), self.graph_engine]:
            e.stop()
        self._tmp.cleanup()

    def _await(self, task: str) -> dict[str, Any]:
        """Wait for the one task in flight (A_ort, alone, verification)."""
        name = self.completions.get()
        if name != ENGINE_OF[task]:
            raise RuntimeError(f"completion of engine {name} while waiting for {ENGINE_OF[task]}")
        return self.engines[task].wait()

    # one trial -----------------------------------------------------------
    def _trial(self, group: str, workload: str) -> dict[str, Any]:
        """Run one group; returns the trial record with run indices in place of intervals."""
        host: dict[str, Any] = {"submits": []}
        tasks = WORKLOAD_TASKS.get(workload, (workload,))
        rec: dict[str, Any] = {"group": group, "workload": workload, "tasks": []}
        if group == "B_ort_graph":
            return self._graph_trial(workload, tasks, rec, host)
        for t in tasks:
            self.sessions[t].poison()
        order = list(tasks)
        if group in ("A_ort", "alone"):
            results, seen = self._serial_trial(order, host)
        else:  # B_ort: hand every task over, then wait for all
            results, seen = self._handover_trial(order, host)
        rec["_runs"] = [(t, results[t]["run"]) for t in order]
        for t in order:
            r = results[t]
            rec["tasks"].append(
                {
                    "task": t,
                    "engine": ENGINE_OF[t],
                    "launch": r["launch"],
                    "host_seen": seen[t],
                    "checksum": self.sessions[t].checksum(t),
                    "cpu_ns": r["cpu_ns"],
                    "cpu_begin": r["cpu_begin"],
                    "cpu_end": r["cpu_end"],
                }
            )
        rec["_host"] = host
        return rec

    def _graph_trial(self, workload: str, tasks: Sequence[str], rec: dict[str, Any], host: dict[str, Any]) -> dict:
        """B_ort_graph: one session run of the whole graph, ONNX Runtime's own
        inter-op threads running its independent branches."""
        sess = self.graphs[workload]
        sess.poison()
        t0 = time.time_ns()
        self.graph_engine.submit(sess)
        t1 = time.time_ns()
        self.graph_engine.completions.get()
        r = self.graph_engine.wait()
        t2 = time.time_ns()
        host.update(submit_begin=t0, submit_end=t1, wait_begin=t1, wait_end=t2, requests=1)
        host["submits"].append(t1 - t0)
        rec["_runs"] = [("graph:" + workload, r["run"])]
        for t in tasks:
            # the calling thread's CPU time cannot be split between the
            # branches (nor does it include ORT's inter-op threads): null
            rec["tasks"].append(
                {
                    "task": t,
                    "engine": "graph",
                    "launch": r["launch"],
                    "host_seen": t2,
                    "checksum": sess.checksum(t),
                    "cpu_ns": None,
                    "cpu_begin": r["cpu_begin"],
                    "cpu_end": r["cpu_end"],
                }
            )
        rec["_host"] = host
        return rec

    def _serial_trial(self, order: list[str], host: dict[str, Any]) -> tuple[dict[str, dict], dict[str, int]]:
        """A_ort and alone: one task at a time, the host waiting for each."""
        results: dict[str, dict] = {}
        seen: dict[str, int] = {}
        sb = None
        wait_total = sub_total = 0
        for t in order:
            a = time.time_ns()
            sb = a if sb is None else sb
            self.engines[t].submit(self.sessions[t])
            b = time.time_ns()
            results[t] = self._await(t)
            c = time.time_ns()
            seen[t] = c
            # the host's wait for this task (as hxrun's host records it in A
            # and alone: on the task letter)
            host.setdefault("waits", []).append((t, b, c))
            host["submits"].append(b - a)
            sub_total += b - a
            wait_total += c - b
        host.update(
            submit_begin=sb,
            submit_end=b,
            wait_begin=b,
            wait_end=c,
            requests=len(order),
            submit_ns=sub_total,
            wait_ns=wait_total,
        )
        return results, seen

    def _handover_trial(self, order: list[str], host: dict[str, Any]) -> tuple[dict[str, dict], dict[str, int]]:
        """B_ort: every task's engine armed with its session, then started by
        one signal (the hand-over: ``submit_begin`` to ``submit_end``); the
        host waits for all of them.  Each engine runs its own session with
        one intra-op thread, and ``run_with_iobinding`` releases the GIL, so
        the kernels run in parallel on the engines' cores."""
        results: dict[str, dict] = {}
        seen: dict[str, int] = {}
        gate = threading.Event()
        for t in order:
            self.engines[t].arm(self.sessions[t], gate)
        for t in order:
            # each engine waits on the gate before the clock starts, as
            # hxrun's engines wait on their queues before its host pushes
            if not self.engines[t].armed.wait(30):
                raise RuntimeError(f"engine {ENGINE_OF[t]} did not arm within 30 s")
        a = time.time_ns()
        gate.set()
        b = time.time_ns()
        host["submits"].append(b - a)
        task_of_engine = {ENGINE_OF[t]: t for t in order}
        for _ in order:
            t = task_of_engine[self.completions.get()]
            seen[t] = time.time_ns()
            results[t] = self.engines[t].wait()  # already done: returns at once
        c = time.time_ns()
        host.update(
            submit_begin=a,
            submit_end=b,
            wait_begin=b,
            wait_end=c,
            requests=len(order),
            submit_ns=b - a,
            wait_ns=c - b,
        )
        return results, seen

    # verification --------------------------------------------------------
    def verify(self, npy_dir: str | None) -> tuple[list[dict], dict[str, dict[str, str]], list[str]]:
        """One run of every session, outputs checked against numpy.  Returns the
        verify records, the verified checksums per session key, and problems."""
        problems: list[str] = []
        verified: dict[str, dict[str, str]] = {}
        for t, sess in self.sessions.items():
            sess.poison()
            self.engines[t].submit(sess)
            self._await(t)
            arrays = {k: v for k, v in self.inputs.items() if k.startswith(t + "_")} | dict(sess.outputs)
            problems += [f"{t} session: {p}" for p in check_arrays(self.spec, arrays, self.rtol, self.atol)]
            verified[t] = {t: sess.checksum(t)}
        records = []
        for w, sess in self.graphs.items():
            sess.poison()
            self.graph_engine.submit(sess)
            self.graph_engine.completions.get()
            self.graph_engine.wait()
            arrays = {k: v for k, v in self.inputs.items() if k[0] in WORKLOAD_TASKS[w]} | dict(sess.outputs)
            problems += [f"{w} graph: {p}" for p in check_arrays(self.spec, arrays, self.rtol, self.atol)]
            verified["graph:" + w] = {t: sess.checksum(t) for t in WORKLOAD_TASKS[w]}
            files = {}
            if npy_dir:
                d = Path(npy_dir, w)
                d.mkdir(parents=True, exist_ok=True)
                for t in WORKLOAD_TASKS[w]:
                    s = self.sessions[t]
                    save = {k: v for k, v in self.inputs.items() if k.startswith(t + "_")} | dict(s.outputs)
                    if "D_src" in save:  # the last window, as hxrun saves it
                        save["D_src"] = save["D_src"][(self.spec.d_repeat - 1) * self.spec.d_rows :]
                    for name, arr in save.items():
                        np.save(d / f"{name}.npy", arr)
                        files[name] = f"{w}/{name}.npy"
            records.append(
                {
                    "record": "verify",
                    "workload": w,
                    "group": "B_ort",
                    "checksums": {t: verified[t][t] for t in WORKLOAD_TASKS[w]},
                    "graph_checksums": verified["graph:" + w],
                    "files": files,
                }
            )
        return records, verified, problems

    # the whole run -------------------------------------------------------
    def run(self, out: str, npy_dir: str | None = None, labels: Mapping[str, str] | None = None) -> int:
        """The whole run: verification, the rounds, the file *out* (see
        :func:`~hxfuse.external.ort_records.write_run`).  Returns 0, or 4
        when the check found problems or a trial's checksum differs."""
        load_before = load_average()
        busy_before = other_busy_cores()
        epoch = time.time_ns()
        t_start = time.monotonic_ns()
        verify_records, verified, problems = self.verify(npy_dir)
        trials = self._rounds()
        intervals = self._intervals(epoch)
        known = {e.native_id: e.name for e in [*self.engines.values(), self.graph_engine]}
        lanes = thread_lanes(intervals, known)
        options = {key: sess.options for key, sess in self._all_sessions()}
        meta = meta_record(self.spec, self.ort_version, self.cores, options, load_before, busy_before, labels or {})
        meta.update(point_tasks=task_meta(self.point), matching=self.matching or None)
        done = [trial_record(rec, intervals, verified, epoch, lanes) for rec in trials]
        mismatches = write_run(out, meta, done, verify_records, problems, t_start)
        for p in problems:
            print(f"hxfuse.external.ort: check failed: {p}", file=sys.stderr)
        return 4 if (problems or mismatches) else 0

    def _all_sessions(self) -> list[tuple[str, BoundSession]]:
        """Every session by its key: the task's letter, or ``graph:<workload>``."""
        return [*self.sessions.items(), *(("graph:" + w, s) for w, s in self.graphs.items())]

    def _rounds(self) -> list[dict[str, Any]]:
        """The warm-up and measured rounds, each every group of every workload
        and each task alone in the round's seeded order."""
        spec = self.spec
        items = [(g, w) for w in spec.workloads for g in ORT_GROUPS] + [("alone", t) for t in spec.tasks]
        trials: list[dict[str, Any]] = []
        for rnd in range(-spec.warmup, spec.rounds):
            order_seed = spec.seed if spec.order_seed is None else spec.order_seed
            for seq, (g, w) in enumerate(round_order(order_seed, rnd, items)):
                rec = self._trial(g, w)
                rec.update(round=rnd, seq=seq, warmup=rnd < 0)
                trials.append(rec)
        return trials

    def _intervals(self, epoch: int) -> dict[str, list[dict]]:
        """Every session's profile read as its runs' intervals (relative to *epoch*)."""
        intervals: dict[str, list[dict]] = {}
        for key, sess in self._all_sessions():
            runs = profile_runs(sess.end_profiling(), sess.profile_start_ns, epoch)
            if len(runs) != sess.runs:
                raise RuntimeError(
                    f"session {key}: {sess.runs} run() calls but {len(runs)} model_run events in its profile"
                )
            intervals[key] = runs
        return intervals
