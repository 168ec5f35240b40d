"""The steal premise of the two-core timing tests (runner_util.steal_during):
read off /proc/stat's eighth number, per core, and shared out over the
cores' wall time.  Known answers on planted /proc/stat files."""

from __future__ import annotations

import os
import threading

import pytest

from runner_util import MAX_STEAL_SHARE, steal_during, steal_s

HZ = os.sysconf("SC_CLK_TCK")


def _stat(path, steal: dict[int, int]) -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice; the
    # other fields are large so that a reader of the wrong column is wrong
    total = sum(steal.values())
    lines = [f"cpu  9000 11 7000 800000 13 0 17 {total} 0 0"]
    lines += [f"cpu{c} 4500 5 3500 400000 6 0 8 {s} 0 0" for c, s in sorted(steal.items())]
    path.write_text("\n".join(lines + ["intr 12345", "ctxt 999"]) + "\n")


def test_steal_s_reads_the_steal_field_of_the_named_cores(tmp_path):
    stat = tmp_path / "stat"
    _stat(stat, {0: 3 * HZ, 1: HZ // 2})
    assert steal_s((0,), str(stat)) == pytest.approx(3.0)
    assert steal_s((0, 1), str(stat)) == pytest.approx(3.5)
    with pytest.raises(AssertionError, match="cpu2"):
        steal_s((0, 2), str(stat))


def test_steal_during_is_the_share_of_the_cores_wall_time(tmp_path):
    stat = tmp_path / "stat"
    _stat(stat, {0: 0, 1: 0})
    with steal_during((0, 1), str(stat)) as quiet:
        pass
    assert quiet["share"] == 0
    # a quarter second stolen on core 1 during a block of just over half a
    # second: half of one of two cores, a quarter of the pair
    timer = threading.Timer(0.25, _stat, (stat, {0: 0, 1: HZ // 4}))
    with steal_during((0, 1), str(stat)) as busy:
        timer.start()
        threading.Event().wait(0.5)
    timer.join()
    assert 0.2 < busy["share"] <= 0.25, busy
    assert busy["share"] > MAX_STEAL_SHARE and "hypervisor took" in busy["why"] and "[0, 1]" in busy["why"]


def test_the_real_stat_has_the_field_on_this_machine():
    if not os.path.exists("/proc/stat"):
        pytest.skip("no /proc/stat (not Linux)")
    cores = sorted(os.sched_getaffinity(0))
    assert steal_s(cores) >= 0
