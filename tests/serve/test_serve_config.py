"""The service mode's configuration (hxfuse.serve.config): defaults, the serve
study, and bad values refused with the key at fault, before any job (the
workflow stops when it is read)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hxfuse.serve import config as sc

REPO = Path(__file__).resolve().parents[2]


def test_defaults_and_the_repository_config_are_valid():
    s = sc.resolve({})
    assert s["points"] == sc.DEFAULTS["points"] and s["replicates"] == sc.DEFAULTS["replicates"]
    import yaml

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    pts = sc.points(sc.resolve(cfg))
    assert len(pts) == 1  # one small default point in `all`


def test_serve_study_replaces_the_points_and_overrides_keys():
    s = sc.resolve({"serve": {"requests": 10}, "serve_study": "serve"})
    pts = sc.points(s)
    assert len(pts) > 4
    assert len({p.rate for p in pts}) > 2 and len({p.window_us for p in pts}) > 2  # both swept
    assert s["requests"] == 300  # the study's own value wins over config.serve


def test_runner_args_and_trace_params_follow_the_replicate():
    s = sc.resolve({})
    p = sc.points(s)[0]
    a0, a1 = sc.runner_args(s, p, 0), sc.runner_args(s, p, 1)
    assert a0[a0.index("--seed") + 1] == str(s["seed"]) and a1[a1.index("--seed") + 1] == str(s["seed"] + 1)
    assert a0[a0.index("--window-us") + 1] == str(p.window_us)
    assert sc.trace_params(s, p, 1)["seed"] == s["seed"] + 1


@pytest.mark.parametrize(
    "block, message",
    [
        ({"colour": "red"}, "config.serve: unknown key(s) 'colour'"),
        ({"requests": 0}, "config.serve.requests: 0 is not an integer in [1, 100000]"),
        ({"reps": 2.0}, "config.serve.reps: 2.0 is not an integer in [1, 100]"),
        ({"compute_share": 1.5}, "config.serve.compute_share: 1.5 is not a number in [0, 1]"),
        ({"compute_sizes": [64, 64]}, "config.serve.compute_sizes: [64, 64]: sizes must differ"),
        ({"bandwidth_sizes": []}, "config.serve.bandwidth_sizes: []: a list of 1 to 16 integers"),
        ({"deadline_ms": {"compute": 1}}, "config.serve.deadline_ms: {'compute': 1} must be"),
        ({"gemm_nk": [256]}, "config.serve.gemm_nk: [256] is not [N, K]"),
        (
            {"copy_row_bytes": 2048, "copy_src_stride": 1024},
            "config.serve.copy_src_stride: 1024 is below copy_row_bytes",
        ),
        ({"points": []}, "config.serve.points: a non-empty list"),
        ({"points": [{"name": "a", "rate": 0, "window_us": 1}]}, "config.serve.points[0].rate: 0 is not a number"),
        ({"points": [{"name": "a", "rate": 1, "window_us": -1}]}, "config.serve.points[0].window_us: -1 is not"),
        ({"points": [{"name": "a", "rate": 1}]}, "config.serve.points[0]: missing window_us"),
        ({"points": [{"name": "a", "rate": 1, "window_us": 0, "w": 1}]}, "config.serve.points[0]: unknown key(s) 'w'"),
        ({"points": [{"name": "a", "rate": 1, "window_us": 0}] * 2}, "config.serve.points[1].name: 'a' given twice"),
        ({"points": [{"name": "1a", "rate": 1, "window_us": 0}]}, "config.serve.points[0].name: '1a' must be"),
    ],
)
def test_bad_serve_config_names_the_key(block, message):
    with pytest.raises(sc.ServeConfigError) as exc:
        sc.resolve({"serve": block})
    assert message in str(exc.value), str(exc.value)


def test_every_problem_is_listed_at_once():
    with pytest.raises(sc.ServeConfigError) as exc:
        sc.resolve({"serve": {"requests": 0, "pool": 99}})
    assert "config.serve.requests" in str(exc.value) and "config.serve.pool" in str(exc.value)


def test_bad_serve_study(tmp_path):
    with pytest.raises(sc.ServeConfigError, match="no study file .*nosuch.yaml"):
        sc.resolve({"serve_study": "nosuch"})
    f = tmp_path / "s.yaml"
    f.write_text("serve_points: [{name: a, rate: 5, window_us: 0}]\nsweeps: {}\n")
    with pytest.raises(sc.ServeConfigError, match=r"s.yaml: unknown key\(s\) 'sweeps'"):
        sc.resolve({"serve_study": str(f)})
    f.write_text("serve_points: [{name: a, rate: -5, window_us: 0}]\n")
    with pytest.raises(sc.ServeConfigError, match=r"s.yaml: serve_points\[0\].rate: -5"):
        sc.resolve({"serve_study": str(f)})


def test_workflow_stops_on_a_bad_serve_config_before_any_job(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("serve:\n  requests: 0\n  points: [{name: a, rate: 5, window_us: 0}]\n")
    r = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(cfg)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode != 0
    assert "hxfuse: invalid configuration:\n  config.serve.requests: 0 is not an integer" in r.stdout + r.stderr
