"""The machine's vector ISA and the host kernel variants it executes, for the
benchmarks' headers and per-variant rows (the runner chooses the same way:
kernels/common/kernels_host_x86.c)."""

from __future__ import annotations

import platform
from pathlib import Path

# variant -> CPU flags it needs (as /proc/cpuinfo names them)
VARIANTS = {
    "avx512": {"avx512f", "avx512vl", "avx512bw", "avx512dq", "fma"},
    "avx2": {"avx2", "fma"},
}


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def machine_isa() -> str:
    """A short name of the widest x86 vector ISA here, or the architecture."""
    f = cpu_flags()
    if platform.machine() not in ("x86_64", "AMD64"):
        return platform.machine()
    for name in ("avx512", "avx2"):
        if VARIANTS[name] <= f:
            return name
    return "x86-64 without AVX2"


def runnable_variants() -> list[str]:
    """The host kernel variants this CPU executes, widest first ('generic' last)."""
    f = cpu_flags()
    x86 = platform.machine() in ("x86_64", "AMD64")
    return [v for v, need in VARIANTS.items() if x86 and need <= f] + ["generic"]
