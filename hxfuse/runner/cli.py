"""hxrun's command line: the one Python table of its options, defaults and limits.

:data:`OPTIONS` lists every option ``hxrun`` accepts (kernels/hxrun/args.c),
with the config key it comes from, the kind of its value, its inclusive
integer bounds or named values, and the runner's own default.  What the
pipeline needs is derived from it: :data:`RUNNER_LIMITS`,
:data:`RUNNER_CHOICES` and :data:`RUNNER_DEFAULTS` (the schema's bounds must
equal them, ``hxfuse.config.schema.schema_limit_problems``) and
:func:`argv`, the command line of one run.  The runner's C side is derived
from it too: :mod:`hxfuse.runner.cli_c` writes the bounds, defaults and
named values as kernels/hxrun/options.h, which args.c parses with (make
regenerates it when this file changes), so a changed bound, default or
named value is one edit here.  tests/runner/test_runner_cli.py holds the
table to the built runner as well: its ``--help`` lists exactly these
options and named values, and a run given no options records exactly these
defaults in ``meta.args`` (a new option still needs its entry in args.c's table).

Standard library only, and no other hxfuse import: the config, the search
and the ONNX Runtime harness all read this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Threads a placement map may name (docs/runner.md): the host thread, the
# vector engine's control thread and its extra workers, the matrix and copy
# engines, and the bandwidth antagonists bw0..bw7 (threads like the engines:
# they take a core's time as well as memory bandwidth).  The --affinity
# argument names them in this order.
AFFINITY_ENGINES = (
    ("host", "vec", "mx", "dma") + tuple(f"vec{i}" for i in range(1, 8)) + tuple(f"bw{i}" for i in range(8))
)


@dataclass(frozen=True)
class Option:
    """One hxrun option.

    ``key``: the config key (point parameter or ``run`` setting) it is
    passed from, None for options the pipeline never derives from the
    config.  ``kind``: how its value is written (int, ints: comma list of
    ``count`` integers, choice, onoff, list: comma list, affinity, named:
    ``K=V`` pairs, text, switch: no value).  ``lo``/``hi``: inclusive bounds
    of each integer; ``choices``: named values (beside the integers for
    ``window``).  ``default``: the runner's own default in config terms,
    None where the runner derives it (per variant, from other options, or
    the backend's own blocking).  ``passed``: always, unless_default (only
    where a point differs from the default, so points that never use it
    keep their arguments, hashes and cached results), when_set (only when
    not null or empty), never (not from the config).  ``meta``: the names
    of its values in the runner's ``meta.args``."""

    flag: str
    key: str | None
    kind: str
    passed: str
    default: Any = None
    lo: int | None = None
    hi: int | None = None
    choices: tuple[str, ...] = ()
    count: int = 1
    multiple: int = 1
    requires: str | None = None
    meta: tuple[str, ...] = ()

    @property
    def default_arg(self) -> str | None:
        """The default as the runner's command-line text (None: derived by the runner)."""
        return None if self.default is None else format_value(self, self.default)


def _o(flag: str, key: str | None, kind: str, passed: str, **kw) -> Option:
    # meta.args names a value by its config key unless told otherwise
    meta = kw.pop("meta", (key,) if key else ())
    return Option(flag, key, kind, passed, meta=tuple(meta), **kw)


# In the order of the command line the pipeline passes (runner_args): the
# point hash is a hash of that list, so the order is part of every cached
# result.  Options the pipeline never passes follow.
OPTIONS: tuple[Option, ...] = (
    _o("--workloads", "workloads", "list", "always", default=("mvd",), choices=("mv", "md", "mvd")),
    _o("--precision", "precision", "choice", "always", default="fp32", choices=("fp32", "u8i8")),
    _o("--m-shape", "m_shape", "ints", "always", default=(256, 256, 256), lo=1, hi=8192, count=3, meta=("m", "n", "k")),
    _o(
        "--v-variant",
        "v_variant",
        "choice",
        "always",
        default="onchip",
        choices=("compute", "onchip", "ddr", "stream"),
    ),
    _o("--v-workers", "v_workers", "int", "always", default=1, lo=1, hi=8),
    _o(
        "--d-shape",
        "d_shape",
        "ints",
        "always",
        default=(1024, 2048),
        lo=1,
        hi=1 << 24,
        count=2,
        meta=("d_rows", "d_row_bytes"),
    ),
    _o("--d-desc-rows", "d_desc_rows", "int", "always", default=64, lo=1, hi=1 << 24),
    _o("--d-repeat", "d_repeat", "int", "always", default=1, lo=1, hi=1 << 20),
    _o("--scratch-bytes", "scratch_bytes", "int", "always", default=8 << 20, lo=0, hi=1 << 34),
    _o("--warmup", "warmup", "int", "always", default=5, lo=0, hi=1_000_000),
    _o("--rounds", "rounds", "int", "always", default=30, lo=1, hi=10_000_000),
    _o("--seed", "seed", "int", "always", default=1, lo=0, hi=(1 << 64) - 1),
    _o("--affinity", "affinity", "affinity", "always", default="none", choices=("spread", "none")),
    _o("--wait", "wait", "choice", "always", default="spin-block", choices=("spin", "spin-block")),
    _o("--spin-ns", "spin_ns", "int", "always", default=20_000, lo=0, hi=1_000_000_000),
    _o("--early-completion", "early_completion", "onoff", "always", default=True, choices=("on", "off")),
    _o("--groups", "groups", "list", "always", default=("A", "B", "C", "D"), choices=("A", "B", "C", "D")),
    # the runner's own blocking when not given (meta.args reports its depth);
    # a backend with a fixed blocking refuses the option
    _o("--m-tile", "m_tile", "int", "unless_default", lo=8, hi=8192, multiple=8),
    _o("--d-buffers", "d_buffers", "int", "unless_default", default=1, lo=1, hi=2),
    _o(
        "--v-release",
        "v_release",
        "choice",
        "unless_default",
        default="at-completion",
        choices=("at-completion", "at-entry-end"),
    ),
    _o("--window", "window", "int", "unless_default", default="all", lo=1, hi=3, choices=("all",)),
    _o("--antagonist", "antagonist", "int", "unless_default", default=0, lo=0, hi=8),
    # the antagonists' buffer means nothing without antagonists
    _o(
        "--antagonist-bytes",
        "antagonist_bytes",
        "int",
        "unless_default",
        default=1 << 26,
        lo=1 << 20,
        hi=1 << 30,
        requires="antagonist",
    ),
    # per V variant when not given (hxfuse.model.V_VARIANT_DEFAULTS)
    _o("--v-shape", "v_shape", "ints", "when_set", lo=1, hi=65536, count=2, meta=("v_rows", "v_cols")),
    _o("--v-passes", "v_passes", "int", "when_set", lo=1, hi=4096),
    # twice the row bytes when not given
    _o("--d-src-stride", "d_src_stride", "int", "when_set", lo=1, hi=1 << 26),
    # recorded as meta.calibration, not among meta.args
    _o("--calibrate", "calibrate", "named", "when_set", meta=()),
    _o("--out", None, "text", "never", meta=("out",)),
    _o("--npy-dir", None, "text", "never", meta=("npy_dir",)),
    _o("--checkpoints", None, "int", "never", default=32, lo=0, hi=64, meta=("checkpoints",)),
    _o("--check-at-publish", None, "switch", "never", default=False, meta=("check_at_publish",)),
    _o("--label", None, "text", "never"),
    _o(
        "--inject-conflict",
        None,
        "choice",
        "never",
        choices=("V-out-aliases-M-out", "D-dst-aliases-V-scratch"),
    ),
    # test hook: a release request during trial N (docs/runner.md, "Preemption")
    _o("--preempt-at-trial", None, "int", "never", lo=0, hi=2_000_000_000, meta=()),
)
BY_FLAG = {o.flag: o for o in OPTIONS}
BY_KEY = {o.key: o for o in OPTIONS if o.key}

# What hxrun accepts, per config key: the option and the inclusive bounds of
# each integer (of each element for shapes); m_tile is also a multiple of
# M_TILE_MULTIPLE, and window takes "all" beside its integers.
RUNNER_LIMITS = {o.key: (o.flag, o.lo, o.hi) for o in OPTIONS if o.key and o.lo is not None}
M_TILE_MULTIPLE = BY_KEY["m_tile"].multiple
# Options with named values, per config key (early_completion is a boolean
# written on/off; workloads and groups are lists the schema checks itself).
RUNNER_CHOICES = {o.key: (o.flag, o.choices) for o in OPTIONS if o.key and o.kind in ("choice", "int") and o.choices}
# The runner's own default of each option passed only where a point differs
# from it (null for m_tile: the backend's own blocking).
RUNNER_DEFAULTS = {o.key: o.default for o in OPTIONS if o.passed == "unless_default"}


def _plain(v: float) -> str:
    """A number without exponent notation (the runner parses plain decimals)."""
    return str(int(v)) if float(v).is_integer() else f"{v:.6f}".rstrip("0")


def affinity_arg(value: Any) -> str:
    """--affinity value: spread, none, or engine=core pairs in a fixed order."""
    if isinstance(value, dict):
        return ",".join(f"{e}={value[e]}" for e in AFFINITY_ENGINES if e in value)
    return str(value)


def format_value(o: Option, v: Any) -> str:
    """The command-line text of value *v* of option *o*."""
    if o.kind == "ints":
        return ",".join(map(str, v))
    if o.kind == "list":
        return v if isinstance(v, str) else ",".join(v)
    if o.kind == "onoff":
        return "on" if v else "off"
    if o.kind == "affinity":
        return affinity_arg(v)
    if o.kind == "named":
        return ",".join(f"{k}={_plain(x)}" for k, x in sorted(v.items()))
    return str(v)


def argv(values: dict) -> list[str]:
    """The hxrun options of one run from its config values (config key ->
    value; a missing ``always`` key is a KeyError), in the table's order,
    without --out/--npy-dir."""
    out: list[str] = []
    for o in OPTIONS:
        if o.passed == "never":
            continue
        if o.passed == "always":
            v = values[o.key]
        else:
            v = values.get(o.key, o.default)
            if o.passed == "unless_default" and (v == o.default or (o.requires and not values.get(o.requires))):
                continue
            if o.passed == "when_set" and (v is None or v == {}):
                continue
        out += [o.flag, format_value(o, v)]
    return out
