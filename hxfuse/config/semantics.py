"""Semantic checks: what the schema cannot say.

Run after the schema (``hxfuse.config.validate``), each returns one line per
problem naming the key: unique point names and x values, D's strides and
source size, the scratch plan against scratch_bytes (and an SDK target's
VTCM), V workers against V's rows, placements naming threads and cores that
exist, calibration of tasks the workloads lack, what the Hexagon targets
refuse, the device farm's serials, and the runner's cross-field rules on
groups and seeds.  :func:`point_problems` is also how a search checks each
candidate (``hxfuse.search.space``).
"""

from __future__ import annotations

import os
import re
from typing import Any

from hxfuse.config import targets as _targets
from hxfuse.config.params import (
    AFFINITY_MAX_CORE,
    HMX_REGION_BYTES,
    VTCM_ALIGN,
    point_params,
    run_settings,
    target_settings,
    vtcm_bytes,
)
from hxfuse.config.preflight import scratch_limit, serial_problems
from hxfuse.config.targets import HEXAGON_TARGETS, SDK_TARGETS
from hxfuse.model import V_VARIANT_DEFAULTS, WORKLOAD_TASKS
from hxfuse.runner.cli import AFFINITY_ENGINES, RUNNER_LIMITS


def sweep_problems(config: dict) -> list[str]:
    """Every point's problems on every target (each line once; a line due
    to a target's forced params says so)."""
    problems: list[str] = []
    for target in config.get("targets", []) or ["host"]:
        forced = bool(target_settings(config, target).get("params"))
        tag = f" [target {target}, with target_settings.{target}.params]" if forced else ""
        for msg in point_problems(config, target):
            msg += tag
            if msg not in problems:
                problems.append(msg)
    return problems


def farm_problems(config: dict) -> list[str]:
    """The `hexagon` target's device serials: adb serials, each once, and
    not both one phone and a farm."""
    hx = target_settings(config, "hexagon")
    key = "config.target_settings.hexagon"
    problems = serial_problems(hx.get("device_serials") or [], f"{key}.device_serials")
    if hx.get("device_serials") and hx.get("device_serial"):
        problems.append(
            f"{key}: device_serial and device_serials are both set: give one (device_serials: [a] for a one-phone farm)"
        )
    return problems


def run_problems(config: dict) -> list[str]:
    """The runner's rules on the run settings: group A is the reference, and
    every replicate's seed (seed + r) is within --seed's range."""
    problems: list[str] = []
    groups = config["run"]["groups"]
    if "A" not in groups:
        problems.append("config.run.groups: must include A (every speedup is relative to A)")
    for target in config.get("targets", []) or ["host"]:
        run = run_settings(config, target)
        if run["seed"] + run["replicates"] - 1 > RUNNER_LIMITS["seed"][2]:
            problems.append(
                "config.run.seed: seed + replicates - 1 exceeds the runner's --seed "
                "range (replicate r runs with seed + r)"
            )
    return problems


def _affinity_problems(value: Any, key: str, target: str) -> list[str]:
    """A placement: spread, none, or {engine: core} (docs/runner.md)."""
    if value in ("spread", "none"):
        return []
    if not isinstance(value, dict) or not value:
        return [
            f"{key}: {value!r} must be spread, none or a map engine -> core, e.g. {{host: 1, vec: 1, mx: 0, dma: 0}}"
        ]
    problems = []
    cores = _host_cores() if _targets.get(target).native else None
    for eng, core in value.items():
        if eng not in AFFINITY_ENGINES:
            problems.append(f"{key}.{eng}: unknown engine (engines: {', '.join(AFFINITY_ENGINES)})")
        elif not isinstance(core, int) or isinstance(core, bool) or not 0 <= core <= AFFINITY_MAX_CORE:
            problems.append(f"{key}.{eng}: {core!r} must be an integer core id in [0, {AFFINITY_MAX_CORE}]")
        elif cores is not None and core >= cores:
            problems.append(f"{key}.{eng}: core {core} does not exist on this machine (online cores: 0..{cores - 1})")
    return problems


def _thread_problems(p: dict, pkey: str) -> list[str]:
    """Threads a placement map names must exist in the point: vecN needs
    v_workers > N and bwN needs antagonist > N (the runner refuses both).
    Antagonists are threads like the engines: placed, and counted."""
    value = p["affinity"]
    if not isinstance(value, dict):
        return []
    problems = []
    for eng in value:
        m = re.fullmatch(r"(vec|bw)([0-9])", str(eng))
        if not m:
            continue
        n = int(m.group(2))
        if m.group(1) == "vec" and n >= p["v_workers"]:
            problems.append(
                f"{pkey}.affinity.{eng}: no such vector worker: v_workers "
                f"{p['v_workers']} has workers vec1..vec{p['v_workers'] - 1}"
                if p["v_workers"] > 1
                else f"{pkey}.affinity.{eng}: no such vector worker: v_workers is 1"
            )
        if m.group(1) == "bw" and n >= p.get("antagonist", 0):
            k = p.get("antagonist", 0)
            problems.append(
                f"{pkey}.affinity.{eng}: no such antagonist: antagonist is {k}"
                + (f" (threads bw0..bw{k - 1})" if k else "")
            )
    return problems


def _host_cores() -> int:
    return os.cpu_count() or 1


def _scratch_need(p: dict) -> int:
    """Bytes of the runner's scratch plan (kernels/hxrun/tasks.c, arena.c): D's
    window and, for an onchip V, V's input and output, each slot rounded up to
    64 bytes.  The runner plans every slot whatever the workload."""

    def up(n: int) -> int:
        return (n + 63) & ~63

    rows, row_bytes = p["d_shape"]
    # D's window, and its second window when double-buffered
    need = up(rows * row_bytes) * (2 if p.get("d_buffers", 1) == 2 else 1)
    if p["v_variant"] == "onchip":
        vr, vc = _v_shape(p)
        need += up(2 * up(vr * vc * (4 if p["precision"] == "fp32" else 2)))
    return need


def _v_shape(p: dict) -> tuple[int, int]:
    vr, vc, _ = V_VARIANT_DEFAULTS[p["v_variant"]]
    return tuple(p["v_shape"]) if p["v_shape"] else (vr, vc)


def point_problems(config: dict, target: str) -> list[str]:
    """The problems of every point of every sweep on *target*, one line
    each naming the point's key (``config.sweeps.<sweep>.points[i].<key>``)."""
    problems: list[str] = []
    for name, sweep in config["sweeps"].items():
        skey = f"config.sweeps.{name}"
        seen: dict[str, int] = {}
        xs: dict[float, str] = {}
        for i, pt in enumerate(sweep["points"]):
            pkey = f"{skey}.points[{i}]"
            if pt["name"] in seen:
                problems.append(f"{pkey}.name: duplicate point name {pt['name']!r} (also points[{seen[pt['name']]}])")
            seen[pt["name"]] = i
            if pt["x"] in xs:
                problems.append(f"{pkey}.x: duplicate value {pt['x']} (also point {xs[pt['x']]!r})")
            xs[pt["x"]] = pt["name"]
            if sweep.get("log_x") and pt["x"] <= 0:
                problems.append(f"{pkey}.x: {pt['x']} must be > 0 because {skey}.log_x is true")
            p = point_params(config, name, pt, target)
            rows, row_bytes = p["d_shape"]
            uses = set().union(*(WORKLOAD_TASKS[w] for w in sweep["workloads"]))
            if p["d_src_stride"] is not None and p["d_src_stride"] < row_bytes:
                problems.append(
                    f"{pkey}.d_src_stride: {p['d_src_stride']} is smaller than "
                    f"the row bytes {row_bytes} of d_shape (rows would overlap)"
                )
            stride = p["d_src_stride"] if p["d_src_stride"] is not None else 2 * row_bytes
            if "D" in uses and rows * stride * p["d_repeat"] > 8 << 30:
                problems.append(
                    f"{pkey}.d_repeat: the DDR source of D would take "
                    f"{rows * stride * p['d_repeat'] / 2**30:.1f} GiB (rows x stride x repeat); "
                    "keep it under 8 GiB"
                )
            if p["d_desc_rows"] > rows:
                problems.append(f"{pkey}.d_desc_rows: {p['d_desc_rows']} exceeds the {rows} rows of d_shape")
            # the runner plans D's window (and an onchip V's arrays) whatever
            # the workload, so an mv-only sweep needs room for D's window too
            need = _scratch_need(p)
            if need > p["scratch_bytes"]:
                vr, vc = _v_shape(p)
                v_part = f"onchip V ({vr}x{vc}, in+out) and " if p["v_variant"] == "onchip" else ""
                d_part = "D's two windows (d_buffers 2" if p.get("d_buffers", 1) == 2 else "D's window ("
                problems.append(
                    f"{pkey}.scratch_bytes: {p['scratch_bytes']} is less than the "
                    f"{need} bytes the runner plans for {v_part}{d_part}"
                    f"d_shape {rows}x{row_bytes}), whatever the workload"
                )
            vr, vc = _v_shape(p)
            if p["v_workers"] > vr:
                problems.append(
                    f"{pkey}.v_workers: {p['v_workers']} vector workers for {vr} rows "
                    "(the runner splits rows between workers: at most one per row)"
                )
            problems += _affinity_problems(p["affinity"], f"{pkey}.affinity", target)
            problems += _thread_problems(p, pkey)
            if target in SDK_TARGETS:
                limit, hexkl = scratch_limit(config, target)
                arena = -(-p["scratch_bytes"] // VTCM_ALIGN) * VTCM_ALIGN
                if arena > limit:
                    why = f"minus HexKL's {HMX_REGION_BYTES}-byte HMX tile region " if hexkl else ""
                    problems.append(
                        f"{pkey}.scratch_bytes: {p['scratch_bytes']} bytes of scratch "
                        f"(the arena is VTCM, in {VTCM_ALIGN}-byte pages) do not fit target "
                        f"{target}'s VTCM: {vtcm_bytes(config, target)} bytes "
                        f"(target_settings.{target}.vtcm_bytes) {why}leave {limit}; use "
                        f"scratch_bytes <= {limit}, e.g. "
                        f"target_settings.{target}.params.scratch_bytes: {limit}"
                    )
            if p.get("m_tile") is not None and target in HEXAGON_TARGETS:
                problems.append(
                    f"{pkey}.m_tile: target {target}'s GEMM (HVX, HMX or the reference) "
                    "has a fixed blocking and refuses --m-tile; leave m_tile null there "
                    f"(e.g. target_settings.{target}.params.m_tile: null)"
                )
            if p["calibrate"]:
                for task in p["calibrate"]:
                    if task not in uses:
                        problems.append(
                            f"{pkey}.calibrate.{task}: task {task} is in none of "
                            f"the workloads {sweep['workloads']} of {skey}"
                        )
            problems += _targets.point_limit_problems(target, p, pkey)
            if target in HEXAGON_TARGETS and p["precision"] != "u8i8":
                why = _targets.get(target).integer_only
                problems.append(
                    f"{pkey}.precision: target {target} runs integer kernels only "
                    f"({why}); use precision u8i8, e.g. "
                    f"target_settings.{target}.params.precision: u8i8"
                )
    return problems
