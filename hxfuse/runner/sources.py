"""Which files each C runner is built from, as kernels/Makefile says.

The Makefile is the one place that knows which sources and headers make
hxrun, hxgraph and hxserve for a target; the workflow's build rules take
their inputs from here (``make print-SOURCES-<runner>``) instead of guessing
by file name, so a file that only one runner uses never makes another
rebuild (and hxrun rebuilding would rerun every measurement).
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# hxrun-ap and skel: the two halves of the Hexagon target's mode ap
# (print-SOURCES-* exist for them only with HX_HEXAGON_MODE=ap)
RUNNERS = ("hxrun", "hxgraph", "hxserve", "hxrun-ap", "skel")


@functools.lru_cache(maxsize=None)
def _listed(kernels: str, runner: str, target: str, make_vars: tuple[str, ...]) -> tuple[str, ...]:
    cmd = ["make", "-s", "--no-print-directory", "-C", kernels, f"TARGET={target}", *make_vars]
    proc = subprocess.run([*cmd, f"print-SOURCES-{runner}"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"cannot list the sources of {runner} for {target}: {proc.stderr.strip()}")
    return tuple(str(Path(kernels) / line) for line in proc.stdout.split())


def runner_sources(runner: str, target: str, make_vars=(), repo: Path | str = REPO) -> list[str]:
    """Absolute paths of the .c and .h files *runner* is built from for
    *target* (make_vars: the build's VAR=value arguments, which can choose
    sources, e.g. HEXKL_ROOT)."""
    if runner not in RUNNERS:
        raise ValueError(f"no runner {runner!r}: one of {', '.join(RUNNERS)}")
    return list(_listed(str(Path(repo) / "kernels"), runner, target, tuple(make_vars)))
