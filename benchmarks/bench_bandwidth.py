#!/usr/bin/env python3
"""Bandwidth benchmark of the host runner against same-work references; prints a table.

Not a test: numbers depend on the machine.  Every repetition measures the
references (benchmarks/bwref.c) and the runner's alone-V / alone-D trials
back to back, without and then with bandwidth antagonists, so each ratio
compares measurements taken minutes apart at most.  The machine may be shared:
each cell is the median over repetitions with the [min, max] of the
per-repetition medians.

  python benchmarks/bench_bandwidth.py [--repeats 3] [--rounds 5] [--antagonist 1]

Rows:
  read       single-thread streaming read of 256 MiB (bwref): what one thread
             pulls from DDR here
  V ddr      alone-V of --v-variant ddr (SiLU: exp and a division per element):
             bytes read + written per second; the share compares only the bytes
             V reads (its input array) with `read`, the conservative count, as
             V also writes an output array of the same size meanwhile
  V stream   the same for --v-variant stream (hard-swish: two multiplies),
             once per host kernel variant this CPU executes (HXFUSE_HOST_ISA;
             the first is what auto picks); target: V's read rate >= 60% of
             `read`
  D copy     alone-D streaming --d-repeat windows of a 2-D strided tile out of a
             cold 128 MiB source, bytes moved per second, against bwref's
             memcpy of the same rows, strides and windows; target >= 90%
  each again under --antagonist N (N threads stream-reading 64 MiB buffers)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HXRUN = REPO / "kernels" / "build" / "host" / "hxrun"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from isa import machine_isa, runnable_variants  # noqa: E402

# D's pattern: 1024 rows of 2 KiB with a 4 KiB source stride (a tile out of a
# wider array), 32 windows: 128 MiB of source, far beyond the last-level cache.
D_ROWS, D_ROW_BYTES, D_STRIDE, D_REPEAT = 1024, 2048, 4096, 32


def bwref(binary: Path, antagonists: int, reps: int) -> dict:
    out = subprocess.run(
        [
            str(binary),
            "--read-mib",
            "256",
            "--rows",
            str(D_ROWS),
            "--row-bytes",
            str(D_ROW_BYTES),
            "--stride",
            str(D_STRIDE),
            "--repeat",
            str(D_REPEAT),
            "--reps",
            str(reps),
            "--antagonist",
            str(antagonists),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def hxrun_alone(variant: str, rounds: int, antagonists: int, isa: str = "auto") -> dict:
    """Median bytes/s of alone-V (read + written) and alone-D (moved) in one run."""
    env = {**os.environ, "HXFUSE_HOST_ISA": isa}
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "b.jsonl"
        subprocess.run(
            [
                str(HXRUN),
                "--out",
                str(out),
                "--workloads",
                "mvd",
                "--groups",
                "A",
                "--m-shape",
                "32,32,32",
                "--v-variant",
                variant,
                "--d-shape",
                f"{D_ROWS},{D_ROW_BYTES}",
                "--d-src-stride",
                str(D_STRIDE),
                "--d-repeat",
                str(D_REPEAT),
                "--rounds",
                str(rounds),
                "--warmup",
                "1",
                "--antagonist",
                str(antagonists),
            ],
            check=True,
            env=env,
        )
        recs = [json.loads(line) for line in out.read_text().splitlines()]
    meta = recs[0]

    def med(task):
        return statistics.median(
            t["tasks"][0]["end"] - t["tasks"][0]["begin"]
            for t in recs
            if t["record"] == "trial" and t["group"] == "alone" and t["workload"] == task and not t["warmup"]
        )

    v, tv = meta["tasks"]["V"], med("V")
    return {
        "V": (v["bytes_in"] + v["bytes_out"]) / tv * 1e9,
        "V_read": v["bytes_in"] / tv * 1e9,
        "D": meta["tasks"]["D"]["bytes"] / med("D") * 1e9,
        "meta": meta,
        "end": recs[-1],
    }


def cell(values, scale=1e-9, fmt="{:.1f}"):
    m = statistics.median(values)
    return f"{fmt.format(m * scale)} [{fmt.format(min(values) * scale)}, {fmt.format(max(values) * scale)}]"


def measure(a, ref_bin: Path, levels: tuple, extra: list[str]) -> tuple[dict, dict]:
    """Every repetition: the references, then alone V (ddr, stream with the
    auto variant, then stream with each other variant) and alone D, at each
    antagonist level."""
    keys = ["read", "copy", "Vddr", "Vstream", "D", "Vddr_share", "Vstream_share", "D_share", "bw"]
    keys += [f"Vstream_{v}" for v in extra] + [f"Vstream_{v}_share" for v in extra]
    res = {n: {k: [] for k in keys} for n in levels}
    meta = None
    for _ in range(a.repeats):
        for n in levels:
            r = bwref(ref_bin, n, a.reps)
            ddr, stream = hxrun_alone("ddr", a.rounds, n), hxrun_alone("stream", a.rounds, n)
            meta = meta or ddr["meta"]
            x = res[n]
            x["read"].append(r["read_bytes_per_s"])
            x["copy"].append(r["copy2d_bytes_per_s"])
            x["Vddr"].append(ddr["V"]), x["Vstream"].append(stream["V"])
            x["D"].append(stream["D"])
            x["Vddr_share"].append(ddr["V_read"] / r["read_bytes_per_s"])
            x["Vstream_share"].append(stream["V_read"] / r["read_bytes_per_s"])
            x["D_share"].append(stream["D"] / r["copy2d_bytes_per_s"])
            for v in extra:
                other = hxrun_alone("stream", a.rounds, n, v)
                x[f"Vstream_{v}"].append(other["V"])
                x[f"Vstream_{v}_share"].append(other["V_read"] / r["read_bytes_per_s"])
            if n:
                x["bw"].append(stream["end"]["antagonist_bytes_per_s"])
    return res, meta


def level_rows(x: dict, n: int, kernels: str, extra: list[str]) -> list[tuple]:
    tag = f" + {n} antagonist" if n else ""
    rows = [(f"read, 1 thread{tag}", cell(x["read"]) + " GB/s", "-", "-", "-")]
    rows.append(
        (
            f"V ddr (SiLU) [{kernels}]{tag}",
            cell(x["Vddr"]) + " GB/s",
            "V's reads / read",
            cell(x["Vddr_share"], 100, "{:.0f}") + "%",
            "-",
        )
    )
    for v, key in [(kernels, "Vstream"), *((f"host-{v}", f"Vstream_{v}") for v in extra)]:
        rows.append(
            (
                f"V stream (hard-swish) [{v}]{tag}",
                cell(x[key]) + " GB/s",
                "V's reads / read",
                cell(x[f"{key}_share"], 100, "{:.0f}") + "%",
                ">= 60%",
            )
        )
    rows.append(
        (
            f"D copy 2-D strided, cold{tag}",
            cell(x["D"]) + " GB/s",
            f"memcpy same pattern {cell(x['copy'])} GB/s",
            cell(x["D_share"], 100, "{:.0f}") + "%",
            ">= 90%",
        )
    )
    if n:
        rows.append(("antagonist rate during the V stream run", cell(x["bw"]) + " GB/s", "-", "-", "-"))
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rounds", type=int, default=5, help="measured rounds per runner invocation")
    p.add_argument("--reps", type=int, default=5, help="reference measurements per repetition")
    p.add_argument("--antagonist", type=int, default=1, help="antagonist threads for the contended rows (0: none)")
    a = p.parse_args()
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels")], check=True)
    ref_bin = Path(tempfile.mkdtemp()) / "bwref"
    subprocess.run(
        ["cc", "-O3", "-march=native", "-pthread", str(REPO / "benchmarks" / "bwref.c"), "-o", str(ref_bin)], check=True
    )
    levels = (0, a.antagonist) if a.antagonist else (0,)
    # the variants besides auto's choice (the widest), generic excluded: it
    # is what a CPU without AVX2 runs, not a candidate here
    extra = [v for v in runnable_variants() if v != "generic"][1:]
    res, meta = measure(a, ref_bin, levels, extra)
    rows = [r for n in levels for r in level_rows(res[n], n, meta["kernels"], extra)]
    for key, label in (("read", "read"), ("Vstream", "V stream"), ("D", "D copy")) if a.antagonist else ():
        base, cont = statistics.median(res[0][key]), statistics.median(res[a.antagonist][key])
        rows.append((f"antagonist effect on {label}", f"{cont / base * 100:.0f}% of uncontended", "-", "-", "-"))

    print(
        f"# hxrun bandwidth benchmark on {meta['cpu_model']} (ISA {machine_isa()}; auto picks {meta['kernels']}), "
        f"{meta['online_cores']} cores, {meta['compiler']}; {a.repeats} repetitions, median [min, max] of "
        "per-repetition medians"
    )
    if a.antagonist and meta["online_cores"] < 2 + a.antagonist:
        print(
            f"# note: {meta['online_cores']} cores: the antagonist time-shares a core with the runner's threads, "
            "so its effect mixes bandwidth contention with lost CPU time"
        )
    hdr = ("measure", "hxrun / reference", "against", "share", "target")
    w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(5)]
    for r in [hdr, tuple("-" * x for x in w)] + rows:
        print(" | ".join(str(c).ljust(w[i]) for i, c in enumerate(r)))
    print(
        "# V's GB/s count bytes read + written (in + out arrays), its share only the bytes read; D and memcpy "
        "count bytes moved (each read once, written once); read counts bytes read"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
