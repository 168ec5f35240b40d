"""Known answers for the GPU mechanism checks (tests/gpu/gpu_mechanism.py),
on hand-made records: each check passes on the timeline it claims and fails
on the one it must refuse."""

from __future__ import annotations

import json

import gpu_mechanism as gm


def trial(group, spans, submit_end=5, seen=None, rnd=0, makespan=None, waits=None):
    tasks = [{"task": k, "begin": b, "end": e, "host_seen": (seen or {}).get(k, e + 1)} for k, (b, e) in spans.items()]
    end = max(e for b, e in spans.values())
    return {
        "record": "trial",
        "group": group,
        "round": rnd,
        "warmup": False,
        "empty": False,
        "host": {"submit_end": submit_end},
        "tasks": tasks,
        "waits": waits or [],
        "makespan_ns": makespan if makespan is not None else end,
        "checksums_ok": True,
    }


META = {"record": "meta", "clock": {"resolution_ns": 0}}
END = {"record": "end", "status": "ok", "checksum_mismatches": 0}
SERIAL = {"M": (10, 400), "D": (400, 600), "V": (600, 900)}
TOGETHER = {"M": (10, 400), "D": (10, 210), "V": (12, 300)}


def recs(*trials):
    return [META, *trials, END]


def test_barrier_holds_on_serial_roles_and_fails_on_a_crossing():
    assert gm.barrier_holds(recs(trial("C", SERIAL)))[0]
    ok, detail = gm.barrier_holds(recs(trial("C", {**SERIAL, "D": (390, 600)})))
    assert not ok and "D began 10 ns before M ended" in detail
    # V must wait for D, not only for M
    assert not gm.barrier_holds(recs(trial("C", {**SERIAL, "V": (590, 900)})))[0]


def test_roles_overlap_needs_overlap_and_a_shorter_makespan():
    good = recs(trial("C", SERIAL), trial("D", TOGETHER))
    assert gm.roles_overlap(good)[0]
    assert not gm.roles_overlap(recs(trial("C", SERIAL), trial("D", SERIAL)))[0]
    # overlapping spans but no gain over C: refused too
    assert not gm.roles_overlap(recs(trial("C", SERIAL), trial("D", TOGETHER, makespan=880)))[0]


def test_launch_async():
    a_ok = trial("A", {"M": (10, 400)}, waits=[{"who": "host", "on": "M", "begin": 8, "end": 401}])
    a_bad = trial("A", {"M": (10, 400)}, waits=[{"who": "host", "on": "M", "begin": 400, "end": 401}])
    assert gm.launch_async(recs(a_ok, trial("B", TOGETHER, submit_end=9)))[0]
    assert not gm.launch_async(recs(a_bad))[0]
    assert not gm.launch_async(recs(trial("B", TOGETHER, submit_end=250)))[0]


def test_early_completion():
    seen_early = trial("D", TOGETHER, seen={"D": 215, "V": 305, "M": 401})
    seen_late = trial("D", TOGETHER, seen={"D": 402, "V": 402, "M": 402})
    assert gm.early_completion(recs(seen_early))[0]
    assert not gm.early_completion(recs(seen_late))[0]


def test_checksums_and_the_command_line(tmp_path, capsys):
    bad = trial("D", TOGETHER)
    bad["checksums_ok"] = False
    assert not gm.checksums(recs(bad))[0]
    f = tmp_path / "run.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in recs(trial("C", SERIAL), trial("D", TOGETHER))) + "\n")
    assert gm.main([str(f), "--calibrated"]) == 1  # no A or B trials: launch_async cannot pass
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {x["check"]: x["ok"] for x in lines}["barrier_holds"] is True
