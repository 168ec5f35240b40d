"""The Hexagon target under emulation.

1. kernels/hexagon/test_hvx.c: every HVX kernel against the scalar reference,
   bit for bit, cross-compiled with zig and run under qemu-hexagon (v73 with
   qemu-user 10.x, v67 with Debian 12's 7.2); kernels/hexagon/test_dma_plan.c:
   the user-DMA descriptors the device builds, executed by a software model.
2. The full runner built with ``make -C kernels TARGET=hexagon-qemu`` runs
   groups A-D for the three workloads with --precision u8i8; its .npy outputs
   must equal numpy references exactly and every trial must report the
   verified checksums.

QEMU is functional only: nothing here looks at timings.

These tests skip only when the tools are truly absent; install them with
``pip install ziglang==0.17.1`` and ``apt-get install qemu-user`` (v73:
``apt-get install -t bookworm-backports qemu-user``; QEMU_HEXAGON may name
another qemu-hexagon).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

# cross-compiles and emulates (or compiles against the SDK declarations): slow
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "kernels"
ZIG_PIN = "0.17.1"
INSTALL = (
    f"install with `pip install ziglang=={ZIG_PIN}` (zig) and "
    "`apt-get install qemu-user` (qemu-hexagon; v73 needs qemu-user 10.x from bookworm-backports)"
)


def _zig() -> list[str] | None:
    cmd = [sys.executable, "-m", "ziglang"]
    try:
        r = subprocess.run(cmd + ["version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        r = None
    if r is not None and r.returncode == 0 and r.stdout.strip():
        return cmd
    if shutil.which("zig"):
        return ["zig"]
    return None


ZIG = _zig()
# QEMU_HEXAGON names another emulator build (as for make and the pipeline).
QEMU = shutil.which(os.environ.get("QEMU_HEXAGON") or "qemu-hexagon")


def _cpu() -> str:
    """The -mcpu the target builds for with this emulator (v73 when it can)."""
    r = subprocess.run(
        ["make", "-s", "-C", str(KERNELS), "TARGET=hexagon-qemu", f"QEMU_HEXAGON={QEMU}", "print-HEXAGON_QEMU_CPU"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


needs_tools = pytest.mark.skipif(
    ZIG is None or QEMU is None,
    reason=(
        "missing " + " and ".join(n for n, ok in (("zig", ZIG), ("qemu-hexagon", QEMU)) if not ok) + "; " + INSTALL
    ),
)


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, (
        f"command failed ({r.returncode}): {' '.join(map(str, cmd))}\n"
        f"stdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-4000:]}"
    )
    return r


# --------------------------------------------------------------------------
# 1. kernel-level harness


@needs_tools
def test_hvx_kernels_match_reference_under_qemu(tmp_path):
    exe = tmp_path / "test_hvx"
    _run(
        ZIG
        + [
            "cc",
            "-target",
            "hexagon-linux-musl",
            f"-mcpu={_cpu()}",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            str(KERNELS / "hexagon/test_hvx.c"),
            str(KERNELS / "hexagon/kernels_hvx.c"),
            str(KERNELS / "common/kernels_ref.c"),
            "-lm",
            "-o",
            str(exe),
        ],
        timeout=900,
    )
    r = _run([QEMU, str(exe)], timeout=600)
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "backend: hvx"
    assert not [ln for ln in lines if ln.startswith("FAIL")]
    passed, failed = (int(w) for w in lines[-1].replace(",", "").split()[0:4:2])
    assert failed == 0 and passed >= 90, lines[-1]


@needs_tools
def test_user_dma_descriptors_copy_exactly_and_order_overlaps_under_qemu(tmp_path):
    """dma_plan.c (the device's descriptor builder) under emulation: the
    descriptors, run through a software model of the type-1 transfer, copy
    exactly what the reference copy does; overlapping destinations in a
    batch are ORDERed; bypass only for VTCM; DDR ranges cleaned; 16-bit field
    limits refused; D's trials (one chain, or one chain per window with
    --d-buffers 2) make no cache-clean call on the DDR source once set-up has
    cleaned it; each descriptor is released before the engine model may read
    it, two chains back to back through one pool stay exact, and the engine
    reset is checked for IDLE (kernels/hexagon/test_dma_plan.c)."""
    exe = tmp_path / "test_dma_plan"
    _run(
        ZIG
        + [
            "cc",
            "-target",
            "hexagon-linux-musl",
            f"-mcpu={_cpu()}",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            str(KERNELS / "hexagon/test_dma_plan.c"),
            str(KERNELS / "hexagon/dma_plan.c"),
            str(KERNELS / "common/kernels_ref.c"),
            "-lm",
            "-o",
            str(exe),
        ],
        timeout=900,
    )
    r = _run([QEMU, str(exe)], timeout=600)
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "backend: dma_plan"
    assert not [ln for ln in lines if ln.startswith("FAIL")]
    passed, failed = (int(w) for w in lines[-1].replace(",", "").split()[0:4:2])
    assert failed == 0 and passed >= 30, lines[-1]
    assert len([ln for ln in lines if ln.startswith("PASS D trials")]) == 5, lines
    # one release per descriptor (dmstart, then dmlink), seen by an engine model
    # that reads a descriptor only as of its last release; the reset rules; the
    # bypass policy for D's DDR source
    for name in ("two chains back to back through one pool", "an engine not IDLE after dmpause refuses the copy"):
        assert f"PASS {name}" in lines, lines
    assert any(ln.startswith("PASS D trials") and "source cache bypass" in ln for ln in lines), lines


# --------------------------------------------------------------------------
# 2. the runner


@pytest.fixture(scope="module")
def hxrun():
    if ZIG is None or QEMU is None:
        pytest.skip("missing zig or qemu-hexagon; " + INSTALL)
    env = dict(os.environ)
    if ZIG[0] == "zig":
        env["ZIG"] = "zig"
    _run(
        ["make", "-C", str(KERNELS), "TARGET=hexagon-qemu", f"QEMU_HEXAGON={QEMU}", f"-j{os.cpu_count() or 2}"],
        timeout=1200,
        env=env,
    )
    exe = KERNELS / "build/hexagon-qemu/hxrun"
    assert exe.is_file()
    return exe


def _hswish(x: np.ndarray, passes: int) -> np.ndarray:
    y = x.astype(np.int64)
    for _ in range(passes):
        y = (y * np.clip(y + 4096, 0, 8192)) >> 13
    return y.astype(np.int16)


def _check_outputs(npy: Path, files: dict, tasks: dict, wl: str) -> None:
    a = {k: np.load(npy / v, allow_pickle=False) for k, v in files.items()}
    if "m" in wl:
        A, B, C = a["M_A"], a["M_B"], a["M_C"]
        assert A.dtype == np.uint8 and B.dtype == np.int8 and C.dtype == np.int32
        ref = A.astype(np.int64) @ B.astype(np.int64)
        assert np.array_equal(C.astype(np.int64), ref), f"{wl}: M differs from numpy"
    if "v" in wl:
        X, Y = a["V_X"], a["V_Y"]
        assert X.dtype == np.int16 and Y.dtype == np.int16
        ref = _hswish(X, int(tasks["V"]["passes"]))
        assert np.array_equal(Y, ref), f"{wl}: V.y differs from numpy"
        rs = ref.astype(np.int64).sum(axis=1)
        rs = ((rs + 2**31) % 2**32 - 2**31).astype(np.int32)
        assert np.array_equal(a["V_rowsum"].reshape(-1), rs), f"{wl}: V.rowsum differs"
        assert np.array_equal(a["V_rowmax"].reshape(-1), ref.max(axis=1)), f"{wl}: V.rowmax differs"
    if "d" in wl:
        src, dst = a["D_src"], a["D_dst"]
        rb = int(tasks["D"]["row_bytes"])
        assert src.shape[0] == dst.shape[0] == int(tasks["D"]["rows"])
        assert np.array_equal(dst[:, :rb], src[:, :rb]), f"{wl}: D differs from its source"


# Small shapes chosen around the HVX kernels' edges: GEMM tails in m (not a
# multiple of 4), n (not a multiple of 32/64) and k (not a multiple of 4);
# V rows not a multiple of 64 halfwords; D rows not a multiple of 128 bytes.
COMMON = [
    "--precision",
    "u8i8",
    "--m-shape",
    "37,70,45",
    "--v-variant",
    "compute",
    "--v-shape",
    "9,150",
    "--v-passes",
    "3",
    "--d-shape",
    "40,300",
    "--d-desc-rows",
    "16",
    "--warmup",
    "1",
    "--rounds",
    "2",
    "--groups",
    "A,B,C,D",
]


@needs_tools
@pytest.mark.parametrize("workload", ["mv", "md", "mvd"])
def test_runner_groups_exact_under_qemu(hxrun, tmp_path, workload):
    out, npy = tmp_path / "r.jsonl", tmp_path / "npy"
    _run(
        [
            QEMU,
            str(hxrun),
            "--out",
            str(out),
            "--npy-dir",
            str(npy),
            "--workloads",
            workload,
            "--label",
            "emulated=true",
        ]
        + COMMON,
        timeout=600,
    )
    recs = [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()]
    meta, end = recs[0], recs[-1]
    assert meta["record"] == "meta" and end["record"] == "end"
    assert meta["target"] == "hexagon-qemu" and meta["kernels"] == "hvx"
    assert _cpu() in meta["cpu_model"] and "emulated" in meta["cpu_model"]
    assert end["status"] == "ok" and end["checksum_mismatches"] == 0
    # What the run held: Linux user mode under QEMU has no power votes, VTCM,
    # HMX, user DMA or reserved HVX contexts, and took no fallback.
    res = end["resources"]
    assert res["platform"] == "posix"
    assert all(res[k] is None for k in ("power_votes", "vtcm", "hmx", "udma", "hvx")), res
    assert res["fallbacks_allowed"] is False and res["fallbacks"] == 0
    trials = [r for r in recs if r["record"] == "trial"]
    groups = {t["group"] for t in trials if t["workload"] == workload and not t["warmup"]}
    assert {"A", "B", "C", "D"} <= groups
    assert all(t["checksums_ok"] for t in trials)
    verify = [r for r in recs if r["record"] == "verify" and r["workload"] == workload]
    assert len(verify) == 1 and verify[0].get("files"), "the verify record names no .npy files"
    _check_outputs(npy, verify[0]["files"], meta["tasks"], workload)
    # every measured trial reports the verified checksum for every task
    want = {k: v.lower() for k, v in verify[0]["checksums"].items()}
    for t in trials:
        if t["workload"] == workload and not t["empty"]:
            for task in t["tasks"]:
                assert task["checksum"].lower() == want[task["task"]], (t["group"], task)


@needs_tools
def test_runner_matches_host_checksums(hxrun, tmp_path):
    """The same point on the host build and under QEMU gives identical output
    checksums (integer kernels are exact on every backend)."""
    r = subprocess.run(["make", "-C", str(KERNELS), "TARGET=host", "-j2"], capture_output=True, text=True)
    host = KERNELS / "build/host/hxrun"
    if r.returncode != 0 or not host.is_file():
        pytest.fail(f"host build failed:\n{r.stderr[-3000:]}")
    sums = {}
    for name, cmd in (("host", [str(host)]), ("qemu", [QEMU, str(hxrun)])):
        out = tmp_path / f"{name}.jsonl"
        _run(cmd + ["--out", str(out), "--workloads", "mvd"] + COMMON, timeout=600)
        recs = [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()]
        sums[name] = [r["checksums"] for r in recs if r["record"] == "verify"]
    assert sums["host"] == sums["qemu"]


# --------------------------------------------------------------------------
# 3. which architecture is emulated


def _fake_qemu(d: Path, cpus: list[str]) -> Path:
    """A qemu-hexagon whose `-cpu help` lists `cpus` (7.2 prints nothing)."""
    d.mkdir()
    q = d / "qemu-hexagon"
    lines = "".join(f"echo '  {c}'\n" for c in cpus)
    q.write_text(f'#!/bin/sh\nif [ "$1" = -cpu ]; then\n{lines}fi\nexit 0\n')
    q.chmod(0o755)
    return q


def _print_cpu(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-s", "-C", str(KERNELS), "TARGET=hexagon-qemu", *args, "print-HEXAGON_QEMU_CPU"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(ZIG is None, reason="missing zig; " + INSTALL)
def test_v73_when_the_emulator_has_it_else_v67_and_v73_on_demand_fails_clearly(tmp_path):
    new = _fake_qemu(tmp_path / "new", ["v66", "v67", "v68", "v69", "v71", "v73"])
    old = _fake_qemu(tmp_path / "old", [])
    r = _print_cpu(f"QEMU_HEXAGON={new}")
    assert r.returncode == 0 and r.stdout.strip() == "hexagonv73+hvxv73+hvx_length128b", r.stderr
    r = _print_cpu(f"QEMU_HEXAGON={old}")
    assert r.returncode == 0 and r.stdout.strip() == "hexagonv67+hvxv67+hvx_length128b", r.stderr
    r = _print_cpu(f"QEMU_HEXAGON={old}", "HEXAGON_QEMU_ARCH=v73")
    assert r.returncode != 0 and "qemu-user 10.x" in r.stderr and "bookworm-backports" in r.stderr
    r = _print_cpu(f"QEMU_HEXAGON={new}", "HEXAGON_QEMU_ARCH=v68")
    assert r.returncode != 0 and "must be auto, v73 or v67" in r.stderr


# --------------------------------------------------------------------------
# 4. the first-day self-test


@needs_tools
def test_selftest_ladder_under_qemu_runs_what_it_can_and_names_a_planted_hang(hxrun, tmp_path):
    """hxrun --selftest under qemu-hexagon: arch, the POSIX platform steps,
    HVX (vrmpy GEMM against the reference), the DMA descriptor model and file
    I/O pass; every QuRT-only step (VTCM, power, HVX locks, DMA engine, HMX)
    is "not available on this target", never passed; a planted hang is named
    by the watchdog within its timeout."""
    out = tmp_path / "st.jsonl"
    r = subprocess.run([QEMU, str(hxrun), "--selftest", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    summary = [json.loads(ln) for ln in out.read_text().splitlines()][-1]
    assert summary["status"] == "ok" and summary["target"] == "hexagon-qemu"
    assert {"arch", "hvx_vrmpy", "dma_model", "file_io", "clock", "threads"} <= set(summary["passed"])
    qurt_only = {"vtcm_query", "power_votes", "vtcm_full", "hvx_locks", "dma_4k", "dma_order", "dma_back_to_back"}
    qurt_only |= {"hmx_tile"}
    assert qurt_only <= set(summary["not_available"]) and not qurt_only & set(summary["passed"])
    hang = tmp_path / "hang.jsonl"
    t0 = time.monotonic()
    r = subprocess.run(
        [QEMU, str(hxrun), "--selftest", "--out", str(hang), "--selftest-hang", "dma_model"]
        + ["--selftest-step-timeout", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 5 and time.monotonic() - t0 < 60, r.stderr
    summary = [json.loads(ln) for ln in hang.read_text().splitlines()][-1]
    assert summary["hung"] == "dma_model" and "hvx_vrmpy" in summary["passed"]
