"""hxfuse.runner.cli's table against the built runner (a known answer).

The table is the Python side's one copy of hxrun's command line
(kernels/hxrun/args.c).  The runner is asked what it accepts: its ``--help``
must list exactly the table's options and named values, and a run given no
options must record exactly the table's defaults in ``meta.args`` (which
writes every option as parsed, defaults filled in).  The bounds are asked
option by option in tests/config/test_config_limits.py (each bound accepted,
each bound + 1 refused).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from runner_util import build_runner, run_runner

from hxfuse.config.params import POINT_KEYS
from hxfuse.model import V_VARIANT_DEFAULTS
from hxfuse.runner import cli, cli_c

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hxrun():
    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("needs make and a C compiler: apt-get install build-essential")
    return build_runner("host")


@pytest.fixture(scope="module")
def usage(hxrun) -> dict[str, str]:
    """--help as option -> the value it shows ('' for a switch)."""
    r = subprocess.run([str(hxrun), "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return dict(re.findall(r"(--[a-z][a-z-]*)(?: ([^\s-]\S*))?", r.stdout))


@pytest.fixture(scope="module")
def default_args(hxrun, tmp_path_factory) -> dict:
    """meta.args of a run given only --out (the runner's defaults: about a
    second of work at the default sizes)."""
    out = tmp_path_factory.mktemp("defaults") / "d.jsonl"
    proc, records = run_runner(hxrun, out, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return records[0]["args"]


def test_help_lists_exactly_the_tables_options(usage):
    assert set(usage) == set(cli.BY_FLAG)


def _shown_values(o: cli.Option, shown: str) -> set[str] | None:
    """The named values --help shows for *o*: of a|b|c, those that are not
    placeholders (N, KC) or a map's example (host=1,...); of a list option,
    its items.  None when it shows none."""
    if o.kind == "list":
        return set(shown.split(","))
    if "|" not in shown:
        return None
    return {a for a in shown.split("|") if not a.isupper() and "=" not in a}


@pytest.mark.parametrize("flag", [o.flag for o in cli.OPTIONS])
def test_help_shows_the_tables_named_values(usage, flag):
    o = cli.BY_FLAG[flag]
    shown = _shown_values(o, usage[flag])
    if shown and all(v.isdigit() for v in shown):
        # an integer option with few values (--d-buffers 1|2): its bounds
        assert {int(v) for v in shown} == set(range(o.lo, o.hi + 1)), (flag, usage[flag])
    else:
        assert shown == (set(o.choices) or None), (flag, usage[flag])


def _expected(o: cli.Option, args: dict) -> dict:
    """meta.args the table says a run without options records for *o*."""
    if o.default is None:
        # derived by the runner: per V variant, twice D's row bytes, the
        # backend's own GEMM blocking (any depth)
        rows, cols, passes = V_VARIANT_DEFAULTS[cli.BY_KEY["v_variant"].default]
        derived = {
            "v_shape": {"v_rows": rows, "v_cols": cols},
            "v_passes": {"v_passes": passes},
            "d_src_stride": {"d_src_stride": 2 * cli.BY_KEY["d_shape"].default[1]},
        }
        return derived.get(o.key, {m: args[m] for m in o.meta})
    if o.kind == "ints":
        return dict(zip(o.meta, o.default, strict=True))
    if o.kind == "list":
        return {o.meta[0]: list(o.default)}
    return {o.meta[0]: o.default}


def test_a_run_without_options_records_the_tables_defaults(default_args):
    described = {m for o in cli.OPTIONS for m in o.meta}
    assert set(default_args) == described
    for o in cli.OPTIONS:
        if o.meta:
            want = _expected(o, default_args)
            assert {m: default_args[m] for m in o.meta} == want, o.flag


def test_the_pipelines_command_line_is_the_tables():
    """argv: every always-option in the table's order, each default written
    as the runner's text; unless_default options only where they differ (the
    antagonists' buffer only with antagonists); when_set ones only when set."""
    base = {o.key: o.default for o in cli.OPTIONS if o.passed == "always"}
    want = [x for o in cli.OPTIONS if o.passed == "always" for x in (o.flag, o.default_arg)]
    assert cli.argv(base) == want
    assert want[:4] == ["--workloads", "mvd", "--precision", "fp32"]
    assert cli.argv({**base, "antagonist_bytes": 1 << 27}) == want
    assert cli.argv({**base, "antagonist": 2, "antagonist_bytes": 1 << 27})[-4:] == [
        "--antagonist",
        "2",
        "--antagonist-bytes",
        str(1 << 27),
    ]
    assert cli.argv({**base, "calibrate": {}, "v_shape": None}) == want
    assert cli.argv({**base, "calibrate": {"V": 80.0, "M": 12.5}})[-2:] == ["--calibrate", "M=12.5,V=80"]
    assert cli.affinity_arg({"mx": 0, "host": 1, "bw0": 1}) == "host=1,mx=0,bw0=1"


def test_every_option_from_a_point_is_a_point_parameter():
    """The config's point parameters are the table's options less the run
    settings (POINT_KEYS keeps its own order: a search space's canonical
    order, and so which candidates a seed draws, follows it)."""
    run_keys = {"workloads", "warmup", "rounds", "seed", "groups"}
    assert set(POINT_KEYS) == set(cli.BY_KEY) - run_keys
    assert len(POINT_KEYS) == len(set(POINT_KEYS))


def test_the_c_options_header_is_generated_from_the_table():
    """kernels/hxrun/options.h is what hxfuse.runner.cli_c writes from the
    table: a bound, default or named value changed in cli.py without
    regenerating (make -C kernels does it) fails here."""
    committed = (REPO / cli_c.HEADER).read_text()
    assert committed == cli_c.header(), (
        f"{cli_c.HEADER} is stale: regenerate it with `python3 -m hxfuse.runner.cli_c > {cli_c.HEADER}` "
        "(make -C kernels does it)"
    )


def test_the_header_follows_a_changed_table(monkeypatch):
    """A known answer: one edited bound reaches the C header's bound and the
    range its error message prints."""

    def defined(text: str, name: str) -> str:
        return re.search(rf"^#define {name}\s+(.*)$", text, re.M).group(1)

    text = cli_c.header()
    assert defined(text, "HX_OPT_V_WORKERS_RANGE") == '"[1, 8]"'
    assert defined(text, "HX_OPT_PRECISION_CHOICES") == '{"fp32", "u8i8"}'
    assert defined(text, "HX_OPT_V_VARIANT_DEFAULT_INDEX") == "1"
    assert defined(text, "HX_OPT_SEED_HI") == "18446744073709551615ULL"
    assert defined(text, "HX_OPT_M_SHAPE_DEFAULT_2") == "256"
    changed = tuple(dataclasses.replace(o, hi=6) if o.flag == "--v-workers" else o for o in cli.OPTIONS)
    monkeypatch.setattr(cli_c, "OPTIONS", changed)
    text = cli_c.header()
    assert defined(text, "HX_OPT_V_WORKERS_HI") == "6"
    assert defined(text, "HX_OPT_V_WORKERS_RANGE") == '"[1, 6]"'
