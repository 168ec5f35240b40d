"""Let Snakemake's main process exit when its work is done.

The workflow's default profile limits job starts to ``1000/10s``
(``profiles/default/profile.yaml``: a re-evaluation every second took an
eighth of a core beside the runner).  Snakemake's scheduler arms, on every
pass of its loop, a ``threading.Timer`` of that timespan to wake itself
again (``snakemake/scheduling/job_scheduler.py``,
``JobScheduler._schedule_reevalutation``, Snakemake 9.x).  A Timer is a
non-daemon thread, and the interpreter joins those before it exits: every
invocation that ran a job sat idle for up to the timespan after its last
job -- measured 12.9 s against 3.6 s with ``100/1s`` for one small job, and
the same 10 s after a Ctrl-C.

The Snakefile's ``onsuccess``/``onerror`` hooks call
:func:`cancel_pending_timers` once the scheduler has returned, when no
re-evaluation can be wanted any more.  ``--no-hooks`` skips them (and so
waits again); the runs themselves are not affected either way.
"""

from __future__ import annotations

import threading


def cancel_pending_timers() -> int:
    """Cancel every ``threading.Timer`` still waiting in this process; the
    number cancelled.  A cancelled Timer's thread ends at once without
    calling its function."""
    n = 0
    for t in threading.enumerate():
        if isinstance(t, threading.Timer) and t.is_alive() and not t.finished.is_set():
            t.cancel()
            n += 1
    return n
