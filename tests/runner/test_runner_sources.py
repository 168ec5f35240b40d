"""kernels/Makefile's lists of each runner's files (print-SOURCES-<runner>),
which the workflow's build rules take as inputs: one runner's own files are
never another's, so editing hxgraph or hxserve does not rebuild hxrun (and
rerun every measurement)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hxfuse.runner.sources import runner_sources

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"


def listed(runner: str, target: str = "host") -> set[str]:
    return {str(Path(p).relative_to(KERNELS)) for p in runner_sources(runner, target)}


def test_each_runner_lists_its_own_files_and_the_common_core_only():
    own = {r: listed(r) for r in ("hxrun", "hxgraph", "hxserve")}
    for runner, files in own.items():
        dirs = {f.split("/")[0] for f in files}
        assert dirs == {"common", runner}, (runner, dirs)
        assert all((KERNELS / f).is_file() for f in files)
    # every file of the runner's own directory, headers included
    for runner, files in own.items():
        assert {str(p.relative_to(KERNELS)) for p in (KERNELS / runner).glob("*.[ch]")} <= files


def test_hxrun_gets_the_headers_of_the_core_and_no_other_runners_file():
    files = listed("hxrun")
    assert {"common/platform.h", "common/kernels.h", "hxrun/exec.h", "hxrun/main.c"} <= files
    assert not any(f.startswith(("hxgraph/", "hxserve/")) for f in files)


def test_a_hexagon_target_adds_its_backend_and_still_no_graph_file():
    pytest.importorskip("ziglang")
    files = listed("hxrun", "hexagon-qemu")
    assert "hexagon/kernels_hvx.c" in files and "hexagon/kernels_hexagon.h" in files
    assert "common/kernels_host.c" not in files
    assert not any(f.startswith("hxgraph/") for f in files)


def test_an_unknown_runner_is_refused():
    with pytest.raises(ValueError, match="no runner"):
        runner_sources("hxfoo", "host")
