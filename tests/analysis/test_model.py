"""hxfuse.model states the experiment's vocabulary once for Python; the C
runner states the same facts in kernels/hxrun.  These tests run the runner
and fail when the two disagree, so neither side can drift alone."""

import shutil

import pytest

from hxfuse import model
from runner_util import build_runner, run_runner, trials

pytestmark = pytest.mark.skipif(
    not shutil.which("make") or not shutil.which("cc"),
    reason="needs make and a C compiler: apt-get install build-essential",
)


@pytest.fixture(scope="module")
def runner():
    return build_runner()


@pytest.mark.parametrize("variant", sorted(model.V_VARIANT_DEFAULTS))
def test_v_defaults_are_the_runners(runner, tmp_path, variant):
    # one round of A on mv, and the shape the runner chose for V
    proc, recs = run_runner(
        runner,
        tmp_path / "o.jsonl",
        "--workloads",
        "mv",
        "--groups",
        "A",
        "--rounds",
        "1",
        "--warmup",
        "0",
        "--v-variant",
        variant,
        "--m-shape",
        "8,8,8",
    )
    assert proc.returncode == 0, proc.stderr
    args = recs[0]["args"]
    assert (args["v_rows"], args["v_cols"], args["v_passes"]) == model.V_VARIANT_DEFAULTS[variant]


def test_workloads_tasks_engines_and_groups_are_the_runners(runner, tmp_path):
    proc, recs = run_runner(
        runner,
        tmp_path / "o.jsonl",
        "--workloads",
        "mv,md,mvd",
        "--rounds",
        "1",
        "--warmup",
        "0",
        "--m-shape",
        "8,8,8",
        "--v-shape",
        "8,64",
        "--d-shape",
        "8,64",
    )
    assert proc.returncode == 0, proc.stderr
    meta = recs[0]
    assert tuple(meta["group_mapping"]) == model.GROUPS
    assert meta["workloads"] == list(model.WORKLOAD_TASKS)
    for workload, tasks in model.WORKLOAD_TASKS.items():
        trial = trials(recs, group="A", workload=workload)[0]
        # group A launches in the runner's fixed order M, D, V; the model
        # lists the tasks, so compare as sets, and each on its own engine
        assert {t["task"] for t in trial["tasks"]} == set(tasks)
        assert {t["task"]: t["engine"] for t in trial["tasks"]} == {t: model.ENGINE_OF[t] for t in tasks}
    alone = {r["workload"] for r in recs if r["record"] == "trial" and r["group"] == model.ALONE}
    assert alone == set(model.TASKS)
    assert {x for pair in model.SPEEDUP_PAIRS for x in pair} == set(model.GROUPS)
