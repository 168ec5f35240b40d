"""Run a search's confirmation: the best found and the fixed default, interleaved.

:func:`run_confirmation` is the whole of the ``search_confirm`` job
(workflow/scripts/search_confirm.py).  It runs, for the candidate the search
chose (its ``search.json``), ``pairs`` pairs of runner invocations,
each with groups A, C and D: in pair k the fixed default and the best found
run back to back, the fixed one first in even pairs and second in odd ones
(ABBA), so that a drift of the machine during the job falls on both sides
alike and cancels in the paired ratio (hxfuse.search.compare.confirmation).  Both
sides of a pair run with the same seed (the same inputs).

Every invocation goes through :func:`hxfuse.runner.runpoint.run_point` (its own
process group, the timeout, signals, the end record's integrity, the
provenance sidecar); a failed invocation fails the job and nothing of it is
kept.  Outputs, under the job's output directory ``confirm/``:
``<side>/rep<k>.jsonl`` and ``.provenance.json`` (side ``fixed`` or
``best``), ``npy/<side>/rep<k>/``, ``logs/<side>-rep<k>.log`` and
``runs.json`` (the order, each invocation's wall seconds, the best
candidate's id and values).

Standard library only (with hxfuse.runner.runpoint, provenance and integrity): a
change to analysis code never reruns a measurement.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from hxfuse.runner.runpoint import run_point

SIDES = ("fixed", "best")


def order(pairs: int) -> list[tuple[int, str]]:
    """(pair, side) in the order they run: fixed first in even pairs, best
    first in odd ones."""
    out = []
    for k in range(pairs):
        out += [(k, s) for s in (SIDES if k % 2 == 0 else SIDES[::-1])]
    return out


def run_confirmation(
    runner: str,
    prefix: str,
    env: dict,
    timeout_s: float,
    fixed_args: list[list[str]],
    best: dict | None,
    point: dict,
    out_dir: str,
    log: str,
) -> int:
    """Run the interleaved pairs into *out_dir*; 0 on success, the failed
    invocation's code otherwise (the directory is then removed).  *best*:
    the chosen candidate's id, values, params and confirmation arguments per
    pair (None: no candidate passed its check).  *point*: target, sweep,
    workload and the fixed default's params (sidecars)."""
    out = Path(out_dir)
    with open(log, "w") as lf:
        if not best:
            msg = (
                f"hxfuse: search {point['sweep']}: no candidate passed its check, so there is "
                "nothing to confirm (see its search.json)"
            )
            lf.write(msg + "\n")
            print(msg)
            return 1
        best_args = best["confirm_args"]
        pairs = len(fixed_args)
        if len(best_args) != pairs:
            raise ValueError("the fixed default and the best candidate have different pair counts")
        shutil.rmtree(out, ignore_errors=True)
        for side in SIDES:
            (out / side).mkdir(parents=True)
            (out / "npy" / side).mkdir(parents=True)
        (out / "logs").mkdir()
        runs = []
        t_job = time.monotonic()
        for i, (k, side) in enumerate(order(pairs)):
            args = (fixed_args if side == "fixed" else best_args)[k]
            info = {
                **point,
                "point": side,
                "replicate": k,
                "params": point["fixed_params"] if side == "fixed" else best["params"],
                "candidate": "fixed" if side == "fixed" else best["id"],
            }
            info.pop("fixed_params", None)
            t0 = time.monotonic()
            rc = run_point(
                runner=runner,
                args=args,
                prefix=prefix,
                timeout_s=timeout_s,
                env=env,
                point=info,
                out_jsonl=str(out / side / f"rep{k}.jsonl"),
                out_provenance=str(out / side / f"rep{k}.provenance.json"),
                out_npy=str(out / "npy" / side / f"rep{k}"),
                log=str(out / "logs" / f"{side}-rep{k}.log"),
            )
            lf.write(f"{i}: pair {k} {side} ({info['candidate']}): exit {rc} after {time.monotonic() - t0:.1f} s\n")
            lf.flush()
            if rc != 0:
                keep = Path(log).with_suffix(f".{side}-rep{k}.log")
                shutil.copy(out / "logs" / f"{side}-rep{k}.log", keep)
                shutil.rmtree(out, ignore_errors=True)
                return rc
            runs.append(
                {
                    "seq": i,
                    "pair": k,
                    "side": side,
                    "candidate": info["candidate"],
                    "wall_s": round(time.monotonic() - t0, 3),
                }
            )
        (out / "runs.json").write_text(
            json.dumps(
                {
                    "best": best["id"],
                    "best_values": best.get("values"),
                    "pairs": pairs,
                    "order": runs,
                    "job_wall_s": round(time.monotonic() - t_job, 3),
                },
                indent=1,
            )
            + "\n"
        )
    return 0


FAILED_RECORD = "failed"


def mark_failed(point: dict, args: list[str], out_jsonl: str, out_provenance: str, out_npy: str, log: str) -> int:
    """Keep a search candidate whose run failed as a failed candidate: a
    one-record file ``{"record": "failed", "reason": ...}`` (no meta, no end:
    no reader takes it for a result, and its check fails), a sidecar with the
    reason and an empty .npy directory.  The reason is the run's own FAILED
    line from its log.  Returns 0."""
    reason = "the runner failed"
    try:
        for line in Path(log).read_text().splitlines():
            if " FAILED: " in line:
                reason = line.split(" FAILED: ", 1)[1]
    except OSError:
        pass
    Path(out_npy).mkdir(parents=True, exist_ok=True)
    Path(out_provenance).write_text(
        json.dumps(
            {
                **{k: point.get(k) for k in ("target", "sweep", "workload", "point", "point_hash")},
                "runner_args": list(args),
                "failed": reason,
                "runner_wall_s": None,
            },
            indent=1,
        )
        + "\n"
    )
    Path(out_jsonl).write_text(json.dumps({"record": FAILED_RECORD, "reason": reason}) + "\n")
    with open(log, "a") as lf:
        lf.write(f"hxfuse: search candidate kept as failed: {reason}\n")
    return 0
