"""The ONNX Runtime harness's parser against hxrun's defaults (hxfuse/external/ort.py).

A point option left out must give the point hxrun runs without it, so the
parser's defaults are hxrun's: those of the runner's option table (hxfuse.runner.cli)
(RUNNER_DEFAULTS, RUNNER_LIMITS' least values) must agree with them, and the
rest are a known answer copied from hxrun (kernels/hxrun/args.c).  An edit to
either side that breaks the agreement fails here."""

from __future__ import annotations

import pytest

from hxfuse.runner import cli as hxconfig
from hxfuse.external import ort as hxort

# hxrun's defaults as kernels/hxrun/args.c sets them (None: unset, hxrun derives
# the value: V's shape and passes from the variant, D's stride from its rows)
HXRUN = {
    "workloads": "mvd",
    "precision": "fp32",
    "m_shape": (256, 256, 256),
    "v_variant": "onchip",
    "v_shape": None,
    "v_passes": None,
    "v_workers": 1,
    "d_shape": (1024, 2048),
    "d_src_stride": None,
    "d_desc_rows": 64,
    "d_repeat": 1,
    "warmup": 5,
    "rounds": 30,
    "seed": 1,
    "m_tile": None,
    "d_buffers": 1,
    "antagonist": 0,
    "antagonist_bytes": 1 << 26,
}


def _text(v):
    return None if v is None else ",".join(map(str, v)) if isinstance(v, tuple) else str(v)


def test_the_parsers_defaults_are_hxruns():
    assert hxort.HXRUN_DEFAULTS == HXRUN
    p = hxort.parser()
    for key, (default, _, _) in hxort.NOT_EXPRESSIBLE.items():
        # accepted only at this value; the option itself stays unset (not recorded)
        assert default == HXRUN[key], key
        assert p.get_default(key) is None, key
    for key, value in HXRUN.items():
        if key not in hxort.NOT_EXPRESSIBLE:
            assert p.get_default(key) == _text(value), key


def test_the_parsers_defaults_agree_with_the_runner_table():
    p = hxort.parser()
    shared = set(hxconfig.RUNNER_DEFAULTS) & set(HXRUN)
    assert shared == {"m_tile", "d_buffers", "antagonist", "antagonist_bytes"}
    for key in shared:
        want = hxconfig.RUNNER_DEFAULTS[key]
        assert hxort.HXRUN_DEFAULTS[key] == want, key
        if key in hxort.NOT_EXPRESSIBLE:
            assert hxort.NOT_EXPRESSIBLE[key][0] == want, key
            if want is not None:  # the table's default is accepted, one more is refused
                opt = hxort.NOT_EXPRESSIBLE[key][1]
                assert hxort.args_problems([opt, str(want)]) == [], key
                assert hxort.args_problems([opt, str(want + 1)]), key
        else:
            assert p.get_default(key) == _text(want), key


@pytest.mark.parametrize("key", sorted(hxort.LEAST))
def test_the_least_value_of_each_option_is_the_runner_tables(key):
    opt, low, _ = hxconfig.RUNNER_LIMITS[key]
    assert hxort.LEAST[key] == low
    n = len(HXRUN[key]) if isinstance(HXRUN[key], tuple) else 2 if key == "v_shape" else 1
    base = ["--d-shape", "4,8"] if key == "d_src_stride" else []  # a stride of at least the row bytes
    ok = "8" if key == "d_src_stride" else ",".join([str(low)] * n)
    below = ",".join([str(low - 1)] + [str(low)] * (n - 1))

    def parse(value):
        return hxort.spec_from_args(hxort.parser().parse_args(["--out", "x", *base, opt, value]))

    parse(ok)
    with pytest.raises(hxort.OrtHarnessError, match="^" + opt):
        parse(below)


def test_no_options_give_hxruns_point():
    s = hxort.spec_from_args(hxort.parser().parse_args(["--out", "x"]))
    assert (s.workloads, s.precision, s.m, s.n, s.k) == (("mvd",), "fp32", 256, 256, 256)
    assert (s.v_variant, s.v_rows, s.v_cols, s.v_passes, s.v_workers) == ("onchip", 512, 1024, 1, 1)
    assert (s.d_rows, s.d_row_bytes, s.d_src_stride, s.d_repeat) == (1024, 2048, 4096, 1)
    assert (s.warmup, s.rounds, s.seed, s.order_seed, s.affinity, s.ignored) == (5, 30, 1, None, None, {})
