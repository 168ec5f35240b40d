"""The one home of the machine's state around a run (docs/metrics.md, "Environment").

The runner (and the ONNX Runtime harness, which writes the same fields)
samples the machine in its ``meta`` and ``end`` records: online cores, the
cores other processes kept busy in 200 ms before and after
(``other_busy_cores_*``), and the 1-minute load average before and after
(``load_average_*``).  Every analysis reads those fields here and judges
them by one rule: :func:`environment` is the machine and toolchain of one
runner output, :func:`environment_findings` says why the machine may have
disturbed it, and :func:`load_fields` / :func:`busy_loaded` are the raw
readings and the busy-sample rule for the graph and service studies, whose
tables keep the runner's values as they are.

Standard library only (and hxfuse.config.targets, itself standard library only):
the sweep, graph, service, search and ONNX Runtime analyses all import this
module, and a rule's job depends on every module its script imports.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Protocol

from hxfuse.config.targets import emulated_flag

# The machine a point ran on (:func:`environment`), copied by
# hxfuse.analysis.aggregate onto every trial row and onto every summary row
# of the point, with ``env_warning``.
ENV_COLUMNS = (
    "emulated",
    "cpu_model",
    "cpu_governor",
    "compiler",
    "sdk_version",
    "device_engines_used",
    "load_average_before",
    "load_average_after",
    "other_busy_cores_before",
    "other_busy_cores_after",
    "steal_share",
    "runner_wall_s",
    "clock_resolution_ns",
    "clock_read_overhead_ns",
    "clock_drift",
    "clock_drift_tolerance",
    "runner_warnings",
    "runner_warning_codes",
    "device_fallbacks",
    "device_serial",
)
# Summary columns of the environment, in order (online_cores and
# engines_exceed_cores come from META_COLUMNS).
ENV_SUMMARY_COLUMNS = (
    "emulated",
    "cpu_model",
    "cpu_governor",
    "online_cores",
    "hw_threads",
    "device_engines_used",
    "engines_exceed_cores",
    "load_average_before",
    "load_average_after",
    "other_busy_cores_before",
    "other_busy_cores_after",
    "steal_share",
    "runner_wall_s",
    "compiler",
    "sdk_version",
    "clock_resolution_ns",
    "clock_read_overhead_ns",
    "clock_drift",
    "clock_drift_tolerance",
    "runner_warnings",
    "runner_warning_codes",
    "device_fallbacks",
    "device_serial",
    "env_warning",
)
# A machine counts as loaded when its 1-minute load average exceeds this many
# runnable processes per online core (docs/metrics.md, "Environment").
LOADED_PER_CORE = 0.5
# With the runner's own sample of other work (meta.other_busy_cores_before,
# end.other_busy_cores_after: cores kept busy by other processes in 200 ms
# while the engines idle), a machine counts as loaded above this many busy
# cores per online core.  Preferred over the load average, which still
# remembers the previous sweep point's run.
BUSY_PER_CORE = 0.25
# Steal: time the hypervisor ran someone else on the cores while the run
# wanted them (end.steal_share, the share of all cores' time between the meta
# and end records, from /proc/stat).  A thread's CPU clock and cpuacct stop
# while the core is stolen, so neither the tasks' CPU times nor the busy
# samples above show it: on a 2-vCPU guest the hypervisor gave both vCPUs
# one physical CPU for about a minute, and concurrent work ran serially with
# every other premise holding.  A run cannot cause steal, so a run above this
# share is disturbed by the machine, never by what it measures.
MAX_STEAL_SHARE = 0.05
# Time constant of the kernel's 1-minute load average, in seconds.
LOAD_WINDOW_S = 60.0


class RunLike(Protocol):
    """What :func:`environment` reads of a run (hxfuse.runner.records.Run),
    named here so that this module need not import the records reader."""

    meta: Mapping[str, Any]
    end: Mapping[str, Any] | None


def to_float(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def environment(run: RunLike) -> dict[str, Any]:
    """The machine and toolchain of one runner output (columns ``ENV_COLUMNS``).

    From ``meta`` (docs/runner.md) and the ``end`` record.  Fields an older
    runner or another target does not write (``cpu_governor``,
    ``sdk_version``, ``emulated``, ``device_engines_used``) get a neutral
    value: unknown text is None, a missing ``emulated`` is False, and the
    engines used default to the device engines the runner lists.  A load
    average the runner could not read (-1) becomes NaN.
    """
    meta, end = run.meta, run.end or {}
    clock = meta.get("clock") if isinstance(meta.get("clock"), Mapping) else {}
    engines = [e for e in (meta.get("engines") or []) if e != "host"]
    used = meta.get("device_engines_used")
    if used is None:
        used = len(engines) or math.nan

    def load(v: Any) -> float:
        f = to_float(v)
        return f if math.isfinite(f) and f >= 0 else math.nan

    sdk = meta.get("sdk_version")
    if sdk is None and isinstance(meta.get("sdk"), Mapping):
        sdk = meta["sdk"].get("version")
    wall = to_float(end.get("wall_ns"))
    # end.resources (device targets): what the platform really used; a
    # fallback (e.g. DDR instead of VTCM, a CPU copy instead of user DMA,
    # allowed only by an explicit build option) is counted there.  Null on
    # the host, where nothing can fall back.
    res = end.get("resources") if isinstance(end.get("resources"), Mapping) else {}
    fallbacks = to_float(res.get("fallbacks")) if res.get("fallbacks") is not None else math.nan
    warns = meta.get("warnings") or []
    if isinstance(warns, str):
        warns = [warns]
    # meta.warning_codes[i] is the stable code of meta.warnings[i]
    # (docs/runner.md); a file without a matching list has uncoded warnings.
    codes = meta.get("warning_codes")
    codes = [str(c) for c in codes] if isinstance(codes, list) and len(codes) == len(warns) else []
    labels = meta.get("labels")
    # end.clock_drift (cDSP): the core clock calibrated at start and end;
    # null where the platform calibrates nothing (POSIX)
    drift = end.get("clock_drift") if isinstance(end.get("clock_drift"), Mapping) else {}
    return {
        "emulated": emulated_flag(meta.get("emulated", False)),
        "cpu_model": meta.get("cpu_model"),
        "cpu_governor": meta.get("cpu_governor"),
        "compiler": meta.get("compiler"),
        "sdk_version": sdk,
        "device_engines_used": to_float(used),
        "load_average_before": load(meta.get("load_average_before")),
        "load_average_after": load(end.get("load_average_after")),
        "other_busy_cores_before": load(meta.get("other_busy_cores_before")),
        "other_busy_cores_after": load(end.get("other_busy_cores_after")),
        # null on a platform without a steal reading (the cDSP, older runners)
        "steal_share": load(end.get("steal_share")),
        "runner_wall_s": wall / 1e9 if math.isfinite(wall) else math.nan,
        "clock_resolution_ns": to_float(clock.get("resolution_ns")),
        "clock_read_overhead_ns": to_float(clock.get("read_overhead_ns")),
        "clock_drift": to_float(drift.get("drift")),
        "clock_drift_tolerance": to_float(drift.get("tolerance")),
        "runner_warnings": "; ".join(str(w) for w in warns),
        "runner_warning_codes": "; ".join(codes),
        "device_fallbacks": fallbacks,
        # the phone of a device farm the run leased (kernels/hexagon/device.sh
        # labels every run); None elsewhere
        "device_serial": labels.get("device_serial") if isinstance(labels, Mapping) else None,
    }


# Codes of environment findings that mean other work may have disturbed the
# timings: a point with one of these gets no verdict.  The others describe
# the set-up (emulation, more engines than cores: the resource-aware bound
# already accounts for that) or what is unknown, and are reported only.
DISTURBANCE_CODES = frozenset(
    {"loaded_before", "loaded_after", "few_free_cores", "device_fallback", "clock_drift", "stolen"}
)


def environment_warnings(env: Mapping[str, Any], loaded_per_core: float = LOADED_PER_CORE) -> list[str]:
    """Texts of :func:`environment_findings`."""
    return [text for _, text in environment_findings(env, loaded_per_core)]


def disturbance_warnings(env: Mapping[str, Any], loaded_per_core: float = LOADED_PER_CORE) -> list[str]:
    """The findings that withhold a verdict (codes in ``DISTURBANCE_CODES``)."""
    return [text for code, text in environment_findings(env, loaded_per_core) if code in DISTURBANCE_CODES]


def environment_findings(env: Mapping[str, Any], loaded_per_core: float = LOADED_PER_CORE) -> list[tuple[str, str]]:
    """Why the machine may have disturbed a point, as (code, text) pairs (empty list: nothing seen).

    ``env`` holds the ``ENV_COLUMNS`` plus ``online_cores`` and
    ``engines_exceed_cores``.  The rule (docs/metrics.md, "Environment"):

    * where the runner sampled other work (``other_busy_cores_before`` /
      ``_after``: cores busy with other processes in 200 ms while its engines
      idle), loaded before / after: that sample > ``BUSY_PER_CORE`` x online
      cores, and fewer free cores than engines: cores - busy sample < E - 0.5;
      the load-average rules below are then not used;
    * loaded before: 1-minute load average before the point > ``loaded_per_core``
      x online cores;
    * loaded after: the load average after the point, minus the runner's own
      expected share (its E device engines busy for the run's wall time w
      raise the 1-minute average by about E x (1 - exp(-w / 60 s))), is above
      the same limit;
    * fewer free cores than engines: the runner's own ``engines_exceed_cores``,
      or online cores - round(load before) < E (the engines the point keeps
      busy at once);
    * stolen: the hypervisor took more than ``MAX_STEAL_SHARE`` of the
      cores between the meta and end records (``steal_share``);
    * the load average could not be read; the target is emulated; the
      runner's own ``meta.warnings`` (prefixed ``runner:``); the runner's
      ``engines_exceed_cores`` warning (found by its code in
      ``runner_warning_codes``) replaces ours rather than repeating it.
    """
    out: list[tuple[str, str]] = []
    if emulated_flag(env.get("emulated")):
        out.append(("emulated", "emulated (timings are not performance)"))
    fb = to_float(env.get("device_fallbacks"))
    if math.isfinite(fb) and fb > 0:
        # the point measured something other than the engines it names
        out.append(
            (
                "device_fallback",
                f"device fallbacks: {fb:g} (an engine or memory was replaced; end.resources of the runner says which)",
            )
        )
    out += _clock_drift_findings(env)
    out += _steal_findings(env)
    cores = to_float(env.get("online_cores"))
    have_cores = math.isfinite(cores) and cores >= 1
    rw = env.get("runner_warnings")
    runner = [w for w in rw.split("; ") if w] if isinstance(rw, str) else []
    if have_cores and math.isfinite(to_float(env.get("other_busy_cores_before"))):
        out += _busy_sample_findings(env, cores)
    else:
        out += _load_average_findings(env, cores, have_cores, loaded_per_core)
    out += [("runner", f"runner: {w}") for w in runner]
    return out


def _clock_drift_findings(env: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The core clock changed between the run's start and end by more than
    the runner's tolerance (end.clock_drift): throttling moved the clock the
    run's timings and CPU times rest on."""
    drift, tol = to_float(env.get("clock_drift")), to_float(env.get("clock_drift_tolerance"))
    if not (math.isfinite(drift) and math.isfinite(tol)) or abs(drift) <= tol:
        return []
    return [
        (
            "clock_drift",
            f"core clock drifted {drift:+.1%} between the run's start and end (tolerance {tol:.0%}): "
            "throttling during the run",
        )
    ]


def steal_text(share: float) -> str:
    """The finding's text for a run whose cores the hypervisor took *share* of."""
    return (
        f"the hypervisor took {share:.1%} of the cores during the run (steal > {MAX_STEAL_SHARE:.0%}): "
        "they were not free cores"
    )


def _steal_findings(env: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The hypervisor took more than ``MAX_STEAL_SHARE`` of the cores (end.steal_share)."""
    share = to_float(env.get("steal_share"))
    return [("stolen", steal_text(share))] if math.isfinite(share) and share > MAX_STEAL_SHARE else []


def _runner_says_exceed(env: Mapping[str, Any]) -> bool:
    """The runner's own ``engines_exceed_cores`` warning is in ``runner_warning_codes``."""
    # keyed on the runner's stable codes, never on its wording
    rc = env.get("runner_warning_codes")
    return isinstance(rc, str) and "engines_exceed_cores" in rc.split("; ")


def _exceed_finding(used: float, cores: float) -> tuple[str, str]:
    n = f"{used:g} device engines" if math.isfinite(used) else "device engines"
    return ("engines_exceed_cores", f"engines exceed cores ({n} on {cores:g} online cores share them)")


def _busy_sample_findings(env: Mapping[str, Any], cores: float) -> list[tuple[str, str]]:
    """Findings from the runner's own sample of other work (``other_busy_cores_*``)."""
    out: list[tuple[str, str]] = []
    used = to_float(env.get("device_engines_used"))
    busy_b = to_float(env.get("other_busy_cores_before"))
    busy_a = to_float(env.get("other_busy_cores_after"))
    busy_limit = BUSY_PER_CORE * cores
    if busy_b > busy_limit:
        out.append(
            (
                "loaded_before",
                f"loaded before (other processes kept {busy_b:.2f} cores busy > "
                f"{busy_limit:.2f} = {BUSY_PER_CORE:g} x {cores:g} cores)",
            )
        )
    if math.isfinite(busy_a) and busy_a > busy_limit:
        out.append(("loaded_after", f"loaded after (other processes kept {busy_a:.2f} cores busy > {busy_limit:.2f})"))
    if bool(env.get("engines_exceed_cores")):
        if not _runner_says_exceed(env):
            out.append(_exceed_finding(used, cores))
    elif math.isfinite(used) and cores - busy_b < used - 0.5:
        out.append(
            (
                "few_free_cores",
                f"fewer free cores than engines ({cores:g} cores - {busy_b:.2f} busy "
                f"with other work leaves ~{cores - busy_b:.1f} for {used:g} device engines)",
            )
        )
    return out


def _load_average_findings(
    env: Mapping[str, Any], cores: float, have_cores: bool, loaded_per_core: float
) -> list[tuple[str, str]]:
    """Findings from the 1-minute load average (no sample of other work)."""
    out: list[tuple[str, str]] = []
    used = to_float(env.get("device_engines_used"))
    before = to_float(env.get("load_average_before"))
    after = to_float(env.get("load_average_after"))
    wall = to_float(env.get("runner_wall_s"))
    limit = loaded_per_core * cores if have_cores else math.nan
    if not math.isfinite(before):
        out.append(("load_unknown", "load unknown (load average unreadable)"))
    elif have_cores and before > limit:
        out.append(
            (
                "loaded_before",
                f"loaded before (1-min load {before:.2f} > {limit:.2f} = {loaded_per_core:g} x {cores:g} cores)",
            )
        )
    if math.isfinite(after) and have_cores:
        own = (used if math.isfinite(used) else 0.0) * (
            1.0 - math.exp(-wall / LOAD_WINDOW_S) if math.isfinite(wall) else 1.0
        )
        if after - own > limit:
            out.append(
                ("loaded_after", f"loaded after (1-min load {after:.2f} - runner's own ~{own:.2f} > {limit:.2f})")
            )
    if bool(env.get("engines_exceed_cores")):
        if _runner_says_exceed(env):
            pass  # the runner says so itself (listed below)
        else:
            out.append(_exceed_finding(used, cores))
    elif have_cores and math.isfinite(used) and math.isfinite(before):
        free = max(0.0, cores - math.floor(before + 0.5))
        if free < used:
            out.append(
                (
                    "few_free_cores",
                    f"fewer free cores than engines ({cores:g} cores - load {before:.2f} "
                    f"leaves ~{free:g} for {used:g} device engines)",
                )
            )
    return out


def parallel_units(meta: Mapping[str, Any]) -> tuple[float, str]:
    """The parallel execution units a runner counted, and what they are:
    online cores (``meta.online_cores``, POSIX targets) or, on the cDSP,
    hardware threads (``meta.hw_threads``; ``online_cores`` is null there),
    which share a core and must never be called cores.  (NaN, "online
    cores") where the runner wrote neither."""
    cores, hw = to_float(meta.get("online_cores")), to_float(meta.get("hw_threads"))
    if not math.isfinite(cores) and math.isfinite(hw):
        return hw, "hardware threads"
    return cores, "online cores"


def run_environment(run: RunLike) -> dict[str, Any]:
    """:func:`environment` of one run with the two meta fields the findings
    also read (``online_cores``, ``engines_exceed_cores``), for a caller
    that judges one runner output without the trial table."""
    env = environment(run)
    env["online_cores"] = run.meta.get("online_cores")
    env["hw_threads"] = run.meta.get("hw_threads")
    env["engines_exceed_cores"] = bool(run.meta.get("engines_exceed_cores", False))
    return env


# The runner's raw readings of the machine, in the order the graph and
# service tables list them.
LOAD_FIELDS = (
    "online_cores",
    "other_busy_cores_before",
    "other_busy_cores_after",
    "load_average_before",
    "load_average_after",
)


def load_fields(meta: Mapping[str, Any], end: Mapping[str, Any], missing: Any = None) -> dict[str, Any]:
    """The runner's readings of the machine (``LOAD_FIELDS``) as it wrote
    them, -1 (unreadable) included: the before-run readings from *meta*,
    the after-run ones from *end*, *missing* where a field is absent."""
    return {k: (end if k.endswith("_after") else meta).get(k, missing) for k in LOAD_FIELDS}


def readable(values: Iterable[Any]) -> list[float]:
    """The readings a runner could take: numbers >= 0 (it writes -1 where
    it could not read one)."""
    return [v for v in values if isinstance(v, (int, float)) and v >= 0]


def other_busy_max(fields: Mapping[str, Any]) -> float:
    """The larger readable sample of other work before and after a run
    (:func:`load_fields`); NaN when neither could be read."""
    busy = readable((fields.get("other_busy_cores_before"), fields.get("other_busy_cores_after")))
    return max(busy) if busy else math.nan


def replicate_load(meta: Mapping[str, Any], end: Mapping[str, Any]) -> dict[str, Any]:
    """One replicate's load as the graph summary keeps it: the larger
    readable sample of other work (:func:`other_busy_max`), the 1-minute
    load average before and the online cores as the runner wrote them (NaN
    where absent)."""
    fields = load_fields(meta, end, missing=math.nan)
    return {
        "other_busy_cores": other_busy_max(fields),
        "load_average_before": fields["load_average_before"],
        "online_cores": fields["online_cores"],
    }


def busy_loaded(busy: Any, cores: Any) -> bool:
    """The busy-sample rule of :func:`environment_findings`: other work kept
    more than ``BUSY_PER_CORE`` x online cores busy (False where the cores
    or the sample are unknown)."""
    c, b = to_float(cores), to_float(busy)
    return c >= 1 and b > BUSY_PER_CORE * c
