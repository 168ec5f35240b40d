#!/usr/bin/env python3
"""Benchmark of the host runner against familiar references; prints a table.

Not a test: numbers depend on the machine.  Each row is measured in this one
invocation, so ratios are comparable even on a noisy machine.

  python benchmarks/bench_runner.py [--shape 256] [--rounds 60]

Rows:
  M fp32 GEMM      hxrun's alone-M median vs numpy.matmul (OpenBLAS, 1 thread)
  empty A-D        median round trip of the zero-work groups, spin and spin-block
                   waits, vs a Python ThreadPoolExecutor submit-and-wait of three
                   no-op tasks
Targets of the runner's design: M >= 60% of OpenBLAS; empty D <= 5 us with spin waits.
Bandwidth (V ddr / stream, D's copy) is measured against same-work references
(single-thread streaming read, same-pattern cold memcpy) by bench_bandwidth.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HXRUN = REPO / "kernels" / "build" / "host" / "hxrun"


def run(args: list[str]) -> list[dict]:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "b.jsonl"
        subprocess.run([str(HXRUN), "--out", str(out), *args], check=True)
        return [json.loads(line) for line in out.read_text().splitlines()]


def alone_ns(recs, task):
    return statistics.median(
        t["tasks"][0]["end"] - t["tasks"][0]["begin"]
        for t in recs
        if t["record"] == "trial" and t["group"] == "alone" and t["workload"] == task and not t["warmup"]
    )


def empty_rt_us(recs, group, workload):
    return (
        statistics.median(
            t["makespan_ns"]
            for t in recs
            if t["record"] == "trial"
            and t["group"] == group
            and t["workload"] == workload
            and t["empty"]
            and not t["warmup"]
        )
        / 1e3
    )


def numpy_single_thread(code: str) -> float:
    """Runs a timing snippet in a child whose OpenBLAS is pinned to one thread.
    OPENBLAS_CORETYPE/L2_SIZE are unset there (they slow a current OpenBLAS);
    the kernel it picks is reported."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", type=int, default=256, help="square GEMM size")
    p.add_argument("--rounds", type=int, default=60)
    a = p.parse_args()
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels")], check=True)
    s, rows = a.shape, []

    recs = run(
        [
            "--workloads",
            "mvd",
            "--m-shape",
            f"{s},{s},{s}",
            "--v-shape",
            "8,64",
            "--d-shape",
            "8,64",
            "--rounds",
            str(a.rounds),
            "--groups",
            "A",
        ]
    )
    m_ns = alone_ns(recs, "M")
    np_ns = numpy_single_thread(
        "import numpy as np, time\n"
        f"a=np.random.rand({s},{s}).astype(np.float32); b=np.random.rand({s},{s}).astype(np.float32)\n"
        "for _ in range(5): a@b\n"
        "t=[]\n"
        f"for _ in range({a.rounds}):\n t0=time.perf_counter_ns(); a@b; t.append(time.perf_counter_ns()-t0)\n"
        "t.sort(); print(t[len(t)//2])"
    )
    flops = 2 * s**3
    rows.append(
        (
            "M fp32 GEMM %d^3" % s,
            f"{flops / m_ns:.1f} GFLOP/s",
            f"{flops / np_ns:.1f} GFLOP/s",
            f"{np_ns / m_ns * 100:.0f}%",
            ">= 60%",
        )
    )

    def pool_rt_us() -> float:
        noop = lambda: None
        with ThreadPoolExecutor(max_workers=3) as ex:
            for _ in range(50):
                [f.result() for f in [ex.submit(noop) for _ in range(3)]]
            t = []
            for _ in range(500):
                t0 = time.perf_counter_ns()
                for f in [ex.submit(noop) for _ in range(3)]:
                    f.result()
                t.append(time.perf_counter_ns() - t0)
        return statistics.median(t) / 1e3

    pool = pool_rt_us()
    for wait in ("spin", "spin-block"):
        e = run(
            [
                "--workloads",
                "mvd",
                "--m-shape",
                "16,16,16",
                "--v-shape",
                "8,64",
                "--d-shape",
                "8,64",
                "--rounds",
                str(max(a.rounds, 200)),
                "--wait",
                wait,
            ]
        )
        for g in "ABCD":
            us = empty_rt_us(e, g, "mvd")
            rows.append(
                (
                    f"empty {g} round trip ({wait})",
                    f"{us:.1f} us",
                    f"{pool:.1f} us",
                    f"{us / pool * 100:.0f}%",
                    "<= 5 us" if (g == "D" and wait == "spin") else "-",
                )
            )

    cores = recs[0]["online_cores"]
    print(f"# hxrun benchmark on {recs[0]['cpu_model']}, {cores} cores, {recs[0]['compiler']}")
    if recs[0]["engines_exceed_cores"]:
        print("# note: engines outnumber cores here; waits and overlap time-share cores")
    hdr = ("measure", "hxrun", "reference", "hxrun/reference", "target")
    w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(5)]
    for r in [hdr, tuple("-" * x for x in w)] + rows:
        print(" | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))
    print(
        "# reference: numpy matmul (OpenBLAS, 1 thread) for M; ThreadPoolExecutor(3) no-op submit+wait for "
        "round trips; bandwidth: benchmarks/bench_bandwidth.py"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
