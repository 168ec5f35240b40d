#!/usr/bin/env python3
"""Benchmark of the host runner against familiar references; prints a table.

Not a test: numbers depend on the machine, and a shared machine is noisy.
M is measured in --repeats repetitions, each timing numpy and every host
kernel variant this CPU executes back to back (interleaved), and each cell
is the median over repetitions with the [min, max] of the per-repetition
values; a ratio is taken within one repetition.

  python benchmarks/bench_runner.py [--shapes 256,640] [--repeats 5] [--rounds 20]

Rows:
  M fp32 GEMM      hxrun's alone-M median for each kernel variant
                   (HXFUSE_HOST_ISA=avx512, avx2: the widest is what auto
                   picks) vs numpy.matmul on OpenBLAS pinned to one thread
                   (OPENBLAS_NUM_THREADS=1, checked in the child through
                   threadpoolctl or OpenBLAS itself; OPENBLAS_CORETYPE unset,
                   so OpenBLAS uses its kernel for this CPU).  The default
                   shapes are 256^3 and the pipeline's default m_shape.
                   On an AVX-512 machine the AVX2 variant is also compared with
                   OpenBLAS forced to its Haswell (AVX2) kernel: a proxy for
                   an AVX2 machine, labelled as such.
  empty A-D        median round trip of the zero-work groups, spin and spin-block
                   waits, vs a Python ThreadPoolExecutor submit-and-wait of three
                   no-op tasks
Targets: M >= 80% of OpenBLAS on every variant; empty D <= 5 us with spin waits.
hxrun's GEMM times exclude packing (the prepared layout is made before
timing, as on the device), numpy's include it.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from isa import machine_isa, runnable_variants  # noqa: E402


def run(args: list[str], isa: str = "auto") -> list[dict]:
    env = {**os.environ, "HXFUSE_HOST_ISA": isa}
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "b.jsonl"
        subprocess.run([str(HXRUN), "--out", str(out), *args], check=True, env=env)
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


NUMPY_CHILD = """
import json, sys, time
import numpy as np
s, rounds = int(sys.argv[1]), int(sys.argv[2])
try:
    from threadpoolctl import threadpool_info
    blas = [i for i in threadpool_info() if i["internal_api"] == "openblas"]
    threads, core, how = blas[0]["num_threads"], blas[0].get("architecture"), "threadpoolctl"
except ImportError:
    import ctypes
    lib = sorted({l.split()[-1] for l in open("/proc/self/maps") if "openblas" in l.lower()})[0]
    dll = ctypes.CDLL(lib)
    def fn(stem):
        for name in ("scipy_openblas_" + stem + "64_", "scipy_openblas_" + stem, "openblas_" + stem):
            if hasattr(dll, name):
                return getattr(dll, name)
    fn("get_corename").restype = ctypes.c_char_p
    threads, core, how = fn("get_num_threads")(), fn("get_corename")().decode(), "openblas_get_num_threads"
a = np.random.rand(s, s).astype(np.float32)
b = np.random.rand(s, s).astype(np.float32)
for _ in range(5):
    a @ b
t = []
for _ in range(rounds):
    t0 = time.perf_counter_ns()
    a @ b
    t.append(time.perf_counter_ns() - t0)
t.sort()
print(json.dumps({"ns": t[len(t) // 2], "threads": threads, "core": core, "checked_by": how}))
"""


def numpy_single_thread(shape: int, rounds: int, coretype: str | None = None) -> dict:
    """Median numpy matmul time in a child whose OpenBLAS is pinned to one
    thread (and the pin checked there).  OPENBLAS_CORETYPE/L2_SIZE are unset
    (a stale setting slows a current OpenBLAS) unless coretype forces a
    kernel; the core type used is returned."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    cmd = [sys.executable, "-c", NUMPY_CHILD, str(shape), str(rounds)]
    out = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
    if out["threads"] != 1:
        sys.exit(f"bench_runner: OpenBLAS runs {out['threads']} threads despite OPENBLAS_NUM_THREADS=1")
    return out


def m_args(s: int, rounds: int) -> list[str]:
    return ["--workloads", "mvd", "--m-shape", f"{s},{s},{s}", "--v-shape", "8,64", "--d-shape", "8,64"] + [
        "--rounds",
        str(rounds),
        "--groups",
        "A",
    ]


def default_m_shape() -> int:
    """The pipeline's default m_shape (config.yaml defaults), if square."""
    import yaml

    m = yaml.safe_load((REPO / "config.yaml").read_text())["defaults"]["m_shape"]
    return m[0] if len(set(m)) == 1 else 640


def m_rows(shapes: list[int], repeats: int, rounds: int) -> tuple[list[tuple], dict, dict]:
    """Interleaved repetitions: per shape, numpy then every variant."""
    variants = [v for v in runnable_variants() if v != "generic"] or ["generic"]
    proxy = "avx2" in variants and "avx512" in variants  # AVX2 kernel vs OpenBLAS's AVX2 kernel
    got = {(s, key): [] for s in shapes for key in ["np", "np_haswell", *variants, *(v + "_prep" for v in variants)]}
    meta = {}
    for _ in range(repeats):
        for s in shapes:
            ref = numpy_single_thread(s, rounds)
            got[(s, "np")].append(ref["ns"])
            meta["core"] = ref["core"], ref["checked_by"]
            if proxy:
                got[(s, "np_haswell")].append(numpy_single_thread(s, rounds, "Haswell")["ns"])
            for v in variants:
                recs = run(m_args(s, rounds), v)
                meta[v] = recs[0]
                got[(s, v)].append(alone_ns(recs, "M"))
                got[(s, v + "_prep")].append(recs[0]["tasks"]["M"]["prep_ns"])
    rows = []
    for s in shapes:
        flops = 2 * s**3
        for v in variants:
            # the targets: the variant auto runs here against OpenBLAS's own
            # choice, and the AVX2 variant against OpenBLAS's AVX2 kernel
            pairs = [("np", "OpenBLAS %s" % meta["core"][0], ">= 80%" if v == variants[0] else "- (not auto here)")]
            if proxy and v == "avx2":
                pairs.append(("np_haswell", "OpenBLAS Haswell (AVX2-machine proxy)", ">= 80%"))
            for key, label, target in pairs:
                ratios = [r / m for r, m in zip(got[(s, key)], got[(s, v)])]
                rows.append(
                    (
                        f"M fp32 GEMM {s}^3 [{meta[v]['kernels']}]",
                        cell([flops / t for t in got[(s, v)]]) + " GFLOP/s",
                        f"{label} " + cell([flops / t for t in got[(s, key)]]) + " GFLOP/s",
                        cell(ratios, 100, "{:.0f}") + "%",
                        target,
                    )
                )
        v = variants[0]
        rows.append(
            (
                f"M packing {s}^3 [{meta[v]['kernels']}] (once, before timing)",
                cell([t / 1e3 for t in got[(s, v + "_prep")]]) + " us",
                f"its GEMM {cell([t / 1e3 for t in got[(s, v)]])} us",
                "-",
                "-",
            )
        )
    return rows, meta, got


def cell(values, scale=1.0, fmt="{:.1f}"):
    m = statistics.median(values)
    return f"{fmt.format(m * scale)} [{fmt.format(min(values) * scale)}, {fmt.format(max(values) * scale)}]"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default=None, help="square GEMM sizes, comma-separated (default 256 and m_shape)")
    p.add_argument("--repeats", type=int, default=5, help="interleaved repetitions of the M measurements")
    p.add_argument("--rounds", type=int, default=20, help="timed GEMMs per measurement")
    a = p.parse_args()
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels")], check=True)
    shapes = [int(x) for x in a.shapes.split(",")] if a.shapes else [256, default_m_shape()]
    rows, meta, _ = m_rows(shapes, a.repeats, a.rounds)

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
                "200",
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

    first = next(iter(v for k, v in meta.items() if k != "core"))
    print(
        f"# hxrun benchmark on {first['cpu_model']} (ISA {machine_isa()}; auto picks {e[0]['kernels']}), "
        f"{first['online_cores']} cores, {first['compiler']}; M: {a.repeats} interleaved repetitions, "
        "median [min, max]"
    )
    print(f"# OpenBLAS core type {meta['core'][0]}, one thread (checked by {meta['core'][1]})")
    if first["engines_exceed_cores"]:
        print("# note: engines outnumber cores here; waits and overlap time-share cores")
    hdr = ("measure", "hxrun", "reference", "hxrun/reference", "target")
    w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(5)]
    for r in [hdr, tuple("-" * x for x in w)] + rows:
        print(" | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))
    print(
        "# reference: numpy matmul (OpenBLAS, 1 thread, packing included; hxrun's packing is untimed) for M; "
        "ThreadPoolExecutor(3) no-op submit+wait for round trips; bandwidth: benchmarks/bench_bandwidth.py"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
