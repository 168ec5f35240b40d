"""The GPU runner's mechanism checks, from its records alone (docs/gpu.md):

- ``launch_async``: a launch returns before its work ends.  A: the host
  begins waiting for each task before that task's blocks end; B: the host
  has issued every task before the first one ends.
- ``barrier_holds``: in C, each role begins (device clock) no earlier than
  the previous role ended, in the fused entry's order M, D, V.
- ``roles_overlap``: in D (barrier off), the roles' spans overlap in at least
  ``min_share`` of the measured trials, and D's median makespan is below
  C's by more than ``min_gain``.
- ``early_completion``: in D, the host sees the shortest task's completion
  before the longest task ends, in at least ``min_share`` of the trials.
- ``checksums``: every trial reproduced the verified outputs.

Each check returns (ok, detail).  Run on a calibrated run (``--calibrate
M=400,V=300,D=200``: busy-waits on the device clock, so the durations are
known) for the timing claims, and on a real-work run for the checksums.

    python3 tests/gpu/gpu_mechanism.py RUN.jsonl [--calibrated]

prints one JSON line per check and exits 1 if any fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ORDER = ("M", "D", "V")


def _read(path: str | Path) -> list[dict[str, Any]]:
    recs = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    if not recs or recs[0].get("record") != "meta" or recs[-1].get("record") != "end":
        raise ValueError(f"{path}: not a complete runner output (meta first, end last)")
    return recs


def _trials(recs, group: str) -> list[dict[str, Any]]:
    return [
        r for r in recs if r.get("record") == "trial" and r["group"] == group and not r["warmup"] and not r["empty"]
    ]


def _tasks(trial) -> dict[str, dict[str, Any]]:
    return {t["task"]: t for t in trial["tasks"]}


def launch_async(recs) -> tuple[bool, str]:
    bad, n = [], 0
    for t in _trials(recs, "A"):
        tasks = _tasks(t)
        for w in t["waits"]:
            if w["who"] == "host" and w["on"] in tasks:
                n += 1
                if not w["begin"] < tasks[w["on"]]["end"]:
                    bad.append(f"A round {t['round']}: host waited for {w['on']} only after it ended")
    for t in _trials(recs, "B"):
        n += 1
        first_end = min(x["end"] for x in t["tasks"])
        if not t["host"]["submit_end"] < first_end:
            bad.append(f"B round {t['round']}: the host issued its last task after the first ended")
    return (n > 0 and not bad), f"{n} launches, {len(bad)} not asynchronous" + (f": {bad[:3]}" if bad else "")


def barrier_holds(recs, resolution_ns: int | None = None) -> tuple[bool, str]:
    res = resolution_ns if resolution_ns is not None else int(recs[0].get("clock", {}).get("resolution_ns") or 0)
    bad, n = [], 0
    for t in _trials(recs, "C"):
        tasks = _tasks(t)
        present = [x for x in ORDER if x in tasks]
        for prev, nxt in zip(present, present[1:]):
            n += 1
            if tasks[nxt]["begin"] + res < tasks[prev]["end"]:
                gap = tasks[prev]["end"] - tasks[nxt]["begin"]
                bad.append(f"C round {t['round']}: {nxt} began {gap} ns before {prev} ended")
    return (n > 0 and not bad), f"{n} role boundaries, {len(bad)} crossed" + (f": {bad[:3]}" if bad else "")


def roles_overlap(recs, min_share: float = 0.9, min_gain: float = 0.1) -> tuple[bool, str]:
    d, c = _trials(recs, "D"), _trials(recs, "C")
    if not d or not c:
        return False, "no measured C or D trials"
    overl = sum(1 for t in d if max(x["begin"] for x in t["tasks"]) < min(x["end"] for x in t["tasks"]))
    share = overl / len(d)
    md = statistics.median(t["makespan_ns"] for t in d)
    mc = statistics.median(t["makespan_ns"] for t in c)
    ok = share >= min_share and md < (1 - min_gain) * mc
    return ok, f"roles overlap in {overl}/{len(d)} D trials; median makespan D {md / 1e3:.1f} us, C {mc / 1e3:.1f} us"


def early_completion(recs, min_share: float = 0.9) -> tuple[bool, str]:
    d = _trials(recs, "D")
    if not d:
        return False, "no measured D trials"
    good = 0
    for t in d:
        tasks = t["tasks"]
        if len(tasks) < 2:
            continue
        short = min(tasks, key=lambda x: x["end"] - x["begin"])
        long_ = max(tasks, key=lambda x: x["end"] - x["begin"])
        good += short["host_seen"] < long_["end"]
    return good >= min_share * len(d), f"the host saw the shortest task end before the longest ended in {good}/{len(d)}"


def checksums(recs) -> tuple[bool, str]:
    trials = [r for r in recs if r.get("record") == "trial"]
    bad = sum(1 for t in trials if not t.get("checksums_ok"))
    end = recs[-1]
    ok = bad == 0 and end.get("status") == "ok" and end.get("checksum_mismatches") == 0
    return ok, f"{len(trials)} trials, {bad} with a checksum mismatch, end status {end.get('status')}"


def run_checks(path: str | Path, calibrated: bool) -> dict[str, tuple[bool, str]]:
    recs = _read(path)
    out = {"launch_async": launch_async(recs), "checksums": checksums(recs)}
    if calibrated:
        out["barrier_holds"] = barrier_holds(recs)
        out["roles_overlap"] = roles_overlap(recs)
        out["early_completion"] = early_completion(recs)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run")
    ap.add_argument(
        "--calibrated", action="store_true", help="also the timing claims (barrier, overlap, early completion)"
    )
    a = ap.parse_args(argv)
    results = run_checks(a.run, a.calibrated)
    for name, (ok, detail) in results.items():
        print(json.dumps({"check": name, "ok": ok, "detail": detail}))
    return 0 if all(ok for ok, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
