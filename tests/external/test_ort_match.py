"""Duration matching (hxfuse/external/ort_match.py) on fake timings of known
scaling, the hand-over gaps (hxfuse/external/gaps.py) of a known trial, and
the harness's refusal of a runner file that is not the point's."""

from __future__ import annotations

import json
from pathlib import Path
from dataclasses import replace

import pytest

from hxfuse.external import ort, ort_match
from hxfuse.external.gaps import trial_gaps
from hxfuse.external.ort_point import OrtHarnessError
from hxfuse.runner.records import parse_records


def test_a_linear_timing_is_matched_within_ten_percent():
    # 0.5 ms of fixed cost plus 10 us per unit: 8 ms is size 750
    def t(size):
        return 0.5 + 0.01 * size

    m = ort_match.match_size(t, 8.0, 100)
    assert m.matched and m.reason == ""
    assert abs(t(m.size) / 8.0 - 1) <= 0.10 and abs(m.error) <= 0.10
    assert m.measured_ms == t(m.size) and 650 <= m.size <= 830
    # a kernel 3x faster than the target from the start (ORT's GEMM) grows 3x
    m = ort_match.match_size(lambda s: s / 300.0, 6.0, 600)
    assert m.matched and m.size == 1800 and m.tries == 2


def test_a_timing_that_cannot_reach_the_target_is_reported_not_matched():
    # overhead-dominated: every size takes 5 ms, the runner's task 1 ms
    m = ort_match.match_size(lambda s: 5.0, 1.0, 64)
    assert not m.matched and "cannot reach 1 ms within 10%" in m.reason
    assert m.error == pytest.approx(4.0)
    # slower than the target already at the least size
    m = ort_match.match_size(lambda s: 2.0 + 0.01 * s, 1.0, 10, lo=1)
    assert not m.matched and "at the least size 1" in m.reason
    # a target the bound cannot reach
    m = ort_match.match_size(lambda s: 0.001 * s, 100.0, 10, hi=1000)
    assert not m.matched and "at the largest size 1000" in m.reason
    with pytest.raises(OrtHarnessError, match="not a positive time"):
        ort_match.match_size(lambda s: 1.0, float("nan"), 10)


def _spec(*argv):
    return ort.spec_from_args(ort.parser().parse_args(["--out", "-", *argv]))


def test_calibrate_keeps_the_points_ratio_and_records_each_task():
    spec = _spec("--workloads", "mv", "--m-shape", "64,64,64", "--v-shape", "8,32", "--v-passes", "2")

    # fake backend: M 3x faster per row than the runner, V 4x faster per pass
    def measure(s, task):
        return {"M": s.m * s.n * s.k / 3e6, "V": s.v_passes * s.v_rows * s.v_cols / 4e3}[task]

    targets = {"M": 64**3 / 1e6, "V": 2 * 8 * 32 / 1e3}  # the runner's alone times, ms
    matched, rec = ort_match.calibrate(spec, targets, measure)
    assert (matched.m, matched.n, matched.k) == (192, 64, 64) and matched.v_passes == 8
    assert (matched.v_rows, matched.v_cols) == (8, 32)  # V's footprint is kept
    assert rec["M"]["scaled"] == "m" and rec["M"]["runner_size"] == 64 and rec["M"]["ort_size"] == 192
    assert rec["V"]["matched"] and abs(rec["V"]["error"]) <= 0.10
    ratio = measure(matched, "M") / measure(matched, "V")
    assert ratio == pytest.approx(targets["M"] / targets["V"], rel=0.2)


def _runner_file(tmp_path, alone=None, a_only=False, m=64):
    lines = [{"record": "meta", "backend": "hxrun host", "tasks": {"M": {"m": m, "n": 64, "k": 64}}}]
    for r in range(5):
        if a_only:
            tasks = [{"task": "M", "engine": "mx", "launch": 0, "begin": 0, "end": 2_000_000 + r, "host_seen": 0}]
            group, wl = "A", "mv"
        else:
            tasks = [{"task": "M", "engine": "mx", "launch": 0, "begin": 0, "end": alone + r, "host_seen": 0}]
            group, wl = "alone", "M"
        host = {"submit_begin": 0, "submit_end": 0, "wait_begin": 0, "wait_end": 3_000_000}
        lines.append(
            {"record": "trial", "round": r, "seq": 0, "warmup": False, "workload": wl, "group": group}
            | {
                "empty": False,
                "host": host,
                "tasks": tasks,
                "waits": [],
                "makespan_ns": 3_000_000,
                "checksums_ok": True,
            }
        )
    lines.append({"record": "end", "status": "ok"})
    path = tmp_path / "rep0.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_runner_alone_times_come_from_alone_trials_or_group_a(tmp_path):
    run = parse_records(_runner_file(tmp_path, 4_000_000).read_text().splitlines())
    assert ort_match.runner_alone_ms(run, ["M"]) == pytest.approx({"M": 4.000002})
    run = parse_records(_runner_file(tmp_path, a_only=True).read_text().splitlines())
    assert ort_match.runner_alone_ms(run, ["M"]) == pytest.approx({"M": 2.000002})
    with pytest.raises(OrtHarnessError, match="no alone or group A trial of task V"):
        ort_match.runner_alone_ms(run, ["M", "V"])


def test_a_runner_file_of_another_point_is_refused_before_any_work(tmp_path, capsys):
    path = _runner_file(tmp_path, 4_000_000, m=128)
    out = tmp_path / "o.jsonl"
    rc = ort.main(["--workloads", "md", "--m-shape", "64,64,64", "--match-runner", str(path), "--out", str(out)])
    assert rc == 2 and not out.exists()
    err = capsys.readouterr().err
    assert f"--match-runner {path}: not this point's runner file (task M: m 128 vs 64" in err
    rc = ort.main(["--workloads", "md", "--match-runner", str(tmp_path / "missing.jsonl"), "--out", str(out)])
    assert rc == 2 and "cannot read the runner's raw file" in capsys.readouterr().err


def test_gaps_of_a_known_trial():
    # submit at 0, kernels [10, 50] and [20, 60] overlapping, [80, 90], host sees the last at 100:
    # 10 before the first kernel, 20 between (60..80), 10 after: 40 not covered
    tasks = [("M", 10, 50), ("V", 20, 60), ("D", 80, 90)]
    host = {"submit_begin": 0, "submit_end": 1, "wait_begin": 1, "wait_end": 100}
    trial = {"record": "trial", "round": 0, "seq": 0, "warmup": False, "workload": "mvd", "group": "B_ort"}
    trial |= {"empty": False, "host": host, "waits": [], "makespan_ns": 100, "checksums_ok": True}
    trial["tasks"] = [
        {"task": t, "engine": "x", "launch": b, "begin": b, "end": e, "host_seen": e} for t, b, e in tasks
    ]
    lines = [json.dumps({"record": "meta"}), json.dumps(trial), json.dumps({"record": "end", "status": "ok"})]
    g = trial_gaps(parse_records(lines)).iloc[0]
    assert (g["gap_ns"], g["start_gap_ns"], g["between_gap_ns"], g["end_gap_ns"]) == (40, 10, 20, 10)


def test_scaled_fields_are_spec_fields():
    spec = _spec()
    for field, least in ort_match.SCALED.values():
        replace(spec, **{field: least})  # raises on a name Spec does not have


def test_a_coarse_step_is_named_and_v_is_fine_tuned_on_its_length():
    # V at 2 passes 0.06 ms, 3 passes 0.09 ms: 0.073 ms lies between two adjacent sizes
    m = ort_match.match_size(lambda p: 0.03 * p, 0.073, 2)
    assert not m.matched and m.coarse and "step is too coarse (2 -> 0.06 ms, 3 -> 0.09 ms)" in m.reason
    spec = _spec("--workloads", "mv", "--v-shape", "8,300", "--v-passes", "2")

    def measure(s, task):
        return 0.03 * s.v_passes * s.v_cols / 300 if task == "V" else 1.0

    matched, rec = ort_match.calibrate(spec, {"M": 1.0, "V": 0.073}, measure)
    assert rec["V"]["matched"] and rec["V"]["scaled"] == "v_passes" and rec["V"]["ort_size"] == 2
    assert rec["V"]["fine"] == {"scaled": "v_cols", "runner_size": 300, "ort_size": matched.v_cols}
    assert matched.v_passes == 2 and abs(measure(matched, "V") / 0.073 - 1) <= 0.10
    # M needed no fine-tuning and has none
    assert "fine" not in rec["M"] and rec["M"]["ort_size"] == spec.m


def test_runner_alone_times_are_the_analysis_task_spans_of_a_real_run():
    """Read from the raw task rows (the matching imports no analysis code),
    the alone times are the medians of the analysis's own task durations."""
    import gzip

    from hxfuse.analysis.metrics import trial_metrics

    data = Path(__file__).resolve().parents[1] / "data" / "fixed_point" / "rep0.jsonl.gz"
    run = parse_records(gzip.open(data, "rt").read().splitlines())
    tm = trial_metrics(run)
    tm = tm[~tm["warmup"].astype(bool) & ~tm["empty"].astype(bool)]
    alone = tm[tm["group"] == "alone"]
    ran = [t for t in ("M", "V", "D") if (alone["workload"] == t).any()]
    assert ran  # the file has alone trials: the matching's first choice
    want = {t: float(alone.loc[alone["workload"] == t, f"{t}_duration_ns"].median()) / 1e6 for t in ran}
    assert ort_match.runner_alone_ms(run, ran) == pytest.approx(want)
