"""The harness's engine threads: hxrun's engines, with ONNX Runtime doing the work.

Owns :class:`Engine`, a persistent thread (pinned where the point's affinity
says) that calls one session's ``run()`` when the host hands it a job and
reads the run's launch and return times, its thread CPU time and the cores
it began and ended on.
"""

from __future__ import annotations

import ctypes
import os
import queue
import threading
import time
from typing import Any, Callable

from hxfuse.external.ort_sessions import BoundSession


def _sched_getcpu() -> Callable[[], int | None]:
    try:
        f = ctypes.CDLL(None, use_errno=True).sched_getcpu
        f.restype = ctypes.c_int
        return lambda: (lambda c: c if c >= 0 else None)(f())
    except (OSError, AttributeError):
        return lambda: None


_getcpu = _sched_getcpu()


class Engine:
    """A persistent thread that calls one session's run() when the host hands
    it a job (hxrun's engine threads, with ONNX Runtime doing the work)."""

    def __init__(self, name: str, core: int, completions: queue.SimpleQueue | None = None):
        self.name, self.core = name, core
        # Every engine posts its name here when a run ends, so the host sees
        # completions in the order they happen (hxrun's host observes each
        # task's completion event), not in the order it asks.
        self.completions = completions if completions is not None else queue.SimpleQueue()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._done = threading.Event()
        self.armed = threading.Event()
        self.result: dict[str, Any] = {}
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name=f"hx-{name}", daemon=True)
        self._thread.start()
        # the OS thread id, which ONNX Runtime's profile records as each node's tid
        self.native_id = self._thread.native_id

    def _loop(self) -> None:
        if self.core >= 0 and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {self.core})  # 0: this thread
        while True:
            job = self._jobs.get()
            if job is None:
                return
            sess, gate = job
            if gate is not None:
                # armed (B_ort): wait for the host's one start signal, so the
                # hand-over is one Event.set for every engine, as hxrun's
                # host wakes engines that already wait on their queues
                self.armed.set()
                gate.wait()
            try:
                cpu0 = _getcpu()
                t_cpu = time.thread_time_ns()
                launch = time.time_ns()
                idx = sess.run()
                t_end = time.time_ns()
                cpu_ns = time.thread_time_ns() - t_cpu
                self.result = {
                    "run": idx,
                    "launch": launch,
                    "returned": t_end,
                    "cpu_ns": cpu_ns,
                    "cpu_begin": cpu0,
                    "cpu_end": _getcpu(),
                }
            except BaseException as exc:  # reported to the host, which stops the run
                self.error = exc
            self._done.set()
            self.completions.put(self.name)

    def submit(self, sess: BoundSession) -> None:
        self._done.clear()
        self._jobs.put((sess, None))

    def arm(self, sess: BoundSession, gate: threading.Event) -> None:
        """Hand *sess* over to run when *gate* is set; :attr:`armed` is set
        once the thread waits on the gate."""
        self._done.clear()
        self.armed.clear()
        self._jobs.put((sess, gate))

    def wait(self) -> dict[str, Any]:
        self._done.wait()
        if self.error is not None:
            raise RuntimeError(f"engine {self.name}: session run failed: {self.error}") from self.error
        return self.result

    def stop(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=30)
