"""hxfuse.scheduler_exit: the pending Timers that held Snakemake's exit are
cancelled (the end-to-end check, with Snakemake's own Timer, is in
tests/pipeline/test_pipeline_signals.py)."""

import threading

from hxfuse.scheduler_exit import cancel_pending_timers


def test_a_pending_timer_is_cancelled_and_never_fires():
    fired = threading.Event()
    t = threading.Timer(120, fired.set)
    t.start()
    try:
        assert cancel_pending_timers() >= 1
        t.join(timeout=5)
        assert not t.is_alive(), "the Timer still waits: the process would not exit"
        assert not fired.is_set()
    finally:
        t.cancel()


def test_other_threads_are_left_alone():
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, args=(120,))
    worker.start()
    try:
        cancel_pending_timers()
        worker.join(timeout=0.2)
        assert worker.is_alive()
    finally:
        stop.set()
        worker.join()
