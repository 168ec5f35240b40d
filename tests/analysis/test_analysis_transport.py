"""Group B's concurrency check (hxfuse.analysis.transport): synthetic runs
whose B tasks ran at once, one after another, or both, through the same
metrics the pipeline computes, give the known status per point."""

from __future__ import annotations

import copy

import pandas as pd

from hxfuse.analysis import aggregate as agg
from hxfuse.analysis import transport
from hxfuse.runner.records import read_run


def serialise_b(recs, every: int = 1):
    """B's tasks moved one after another (each begins where the previous
    ended), in every `every`-th measured B trial."""
    out, k = [], 0
    for r in copy.deepcopy(recs):
        if r.get("record") == "trial" and r["group"] == "B" and not r["warmup"] and not r["empty"]:
            if k % every == 0:
                t = r["tasks"][0]["begin"]
                for x in r["tasks"]:
                    d = x["end"] - x["begin"]
                    x["launch"], x["begin"], x["end"] = t, t, t + d
                    x["host_seen"] = t + d
                    t += d
                r["host"]["wait_end"] = max(r["host"]["wait_end"], t + 1000)
                r["makespan_ns"] = r["host"]["wait_end"] - r["host"]["submit_begin"]
            k += 1
        out.append(r)
    return out


def table(synth, tmp_path, recs, name):
    run = read_run(synth.write_jsonl(tmp_path / f"{name}.jsonl", recs))
    return agg.trial_table(run, {"point_id": f"s/mvd/{name}", "point": name})


def test_serialised_overlapping_and_partly_b_are_told_apart(synth, tmp_path):
    base = synth.synthetic_run(rounds=6, warmup=1)
    trials = pd.concat(
        [
            table(synth, tmp_path, base, "together"),
            table(synth, tmp_path, serialise_b(base), "serial"),
            table(synth, tmp_path, serialise_b(base, every=2), "half"),
        ],
        ignore_index=True,
    )
    rows = {r["point_id"]: r for r in transport.group_b_concurrency(trials)}
    assert set(rows) == {"s/mvd/together", "s/mvd/serial", "s/mvd/half"}
    ser, tog, half = rows["s/mvd/serial"], rows["s/mvd/together"], rows["s/mvd/half"]
    # the warm-up and the empty variants are not counted: 6 measured trials
    assert (ser["n"], ser["n_overlapping"], ser["status"]) == (6, 0, "serialised"), ser
    assert "never ran at once" in ser["text"] and "not concurrency" in ser["text"]
    assert (tog["n"], tog["n_overlapping"], tog["status"]) == (6, 6, "overlapping"), tog
    assert tog["median_concurrent_ns"] > 0
    assert (half["n_overlapping"], half["status"]) == (3, "partly serialised"), half

    doc = transport.summary_entry(list(rows.values()))
    assert doc["serialised"] == ["s/mvd/serial (mvd)"] and doc["partly_serialised"] == ["s/mvd/half (mvd)"]
    assert doc["text"].startswith("group B was serialised (never at once) at 1 of 3 point(s)")

    verdicts = pd.DataFrame({"point_id": ["s/mvd/serial", "s/mvd/together", "x/y/z"], "workload": ["mvd"] * 3})
    v = transport.annotate_verdicts(verdicts, list(rows.values()))
    assert list(v["group_b_concurrency"]) == ["serialised", "overlapping", ""]
    assert "never ran at once" in v["group_b_text"][0] and v["group_b_text"][2] == ""


def test_touching_intervals_are_serialised_and_one_task_is_not_checked(synth, tmp_path):
    # back to back with no gap: touching is not overlapping
    recs = serialise_b(synth.synthetic_run(rounds=3, warmup=0, workloads=("mvd", "m")))
    rows = transport.group_b_concurrency(table(synth, tmp_path, recs, "p"))
    assert [(r["workload"], r["status"]) for r in rows] == [("mvd", "serialised")]  # "m": one task, no B premise


def test_nothing_to_check_says_so():
    assert transport.group_b_concurrency(pd.DataFrame()) == []
    assert "not checked" in transport.summary_entry([])["text"]
    everywhere = transport.summary_entry([{"point_id": "a", "workload": "mv", "status": "overlapping"}])
    assert everywhere["text"] == "group B's tasks ran at once in every measured trial of every point"


def test_summary_json_names_a_serialised_b(tmp_path):
    import json

    from conftest import synthetic_run
    from hxfuse.config import validate as hxvalidate
    from pipeline_util import TINY, aggregate_synthetic

    cfg = hxvalidate.validate(copy.deepcopy(TINY))

    def records(p, rep, i):
        wl = p["id"].split("/")[1]
        d = {k: v for k, v in {"M": 100_000, "V": 80_000, "D": 60_000}.items() if k in wl.upper()}
        recs = synthetic_run(d, workloads=(wl,), rounds=4, seed=i)
        return serialise_b(recs) if p["id"] == "tiny/mv/big" else recs

    doc = aggregate_synthetic(tmp_path, cfg, "host", records)
    b = json.loads((tmp_path / "summary.json").read_text())["group_b_concurrency"]
    assert b["serialised"] == ["tiny/mv/big (mv)"], b
    assert "group B was serialised" in b["text"] and "tiny/mv/big" in b["text"]
    verdicts = {(v["point_id"], v["workload"]): v for v in doc["verdicts"]}
    assert verdicts[("tiny/mv/big", "mv")]["group_b_concurrency"] == "serialised"
    assert "never ran at once" in verdicts[("tiny/mv/big", "mv")]["group_b_text"]
    assert all(v["group_b_concurrency"] == "overlapping" for k, v in verdicts.items() if k[0] != "tiny/mv/big")
    # and the paper's B answer says so
    from hxfuse.paper import answers

    tex = answers.answers_tex(json.loads((tmp_path / "summary.json").read_text()))
    b_answer = tex.split("hxAnswerB}")[1].split("newcommand")[0]
    assert "Group B was serialised (never at once)" in b_answer and "transport finding" in b_answer, b_answer
    # and the verdicts page
    from hxfuse.sweep import report

    report.write_verdicts(tmp_path / "summary.csv", tmp_path / "v.html", None, tmp_path / "summary.json")
    assert "Group B was serialised (never at once) at 1 of" in (tmp_path / "v.html").read_text()
