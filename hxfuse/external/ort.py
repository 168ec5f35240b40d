"""The same M, V and D tasks run by ONNX Runtime: a real backend's own concurrency as group B.

On the host the runner's group B is the project's own executor, so it differs
from D only in who pushes the jobs.  The ONNX Runtime harness runs the *same*
tasks (same shapes, same fp32 precision, bit-identical inputs) as ONNX graphs
under ONNX Runtime's CPU execution provider and records them in the runner's
raw schema (docs/runner.md), so that :func:`hxfuse.runner.records.read_run`
and the metrics read them like any runner output.  Groups (see docs/ort.md):
``A_ort`` (one session per task, back to back), ``B_ort`` (the same sessions
run from three threads at once), ``B_ort_graph`` (one multi-branch graph
under ``ORT_PARALLEL``, a negative control) and ``alone``.

Timing: ``launch`` is when ``run`` was called, ``begin``/``end`` of each task
come from ONNX Runtime's per-node profile (the first node's start, the last
node's end within that run), aligned on the harness clock with
``get_profiling_start_time_ns``.

Usage::

    python -m hxfuse.external.ort --out FILE.jsonl [--npy-dir DIR] [hxrun options]

This module is the command line: the parser, with hxrun's defaults in one
table (:data:`HXRUN_DEFAULTS`), the point's validation and :func:`main`.  The
point options are hxrun's (``hxfuse.config.points.runner_args``).  Each is either
honoured (the tasks' sizes, the V variant, fp32, V's workers, the placement,
rounds and seeds), recorded because it only shapes how hxrun schedules its
own groups (:data:`SCHEDULING_ONLY`), or, where it changes the tasks' work
in a way no ONNX graph or session option can express, refused before any
work unless it has hxrun's default (:data:`NOT_EXPRESSIBLE`).
:func:`point_problems` says which of a point's options are refused.

The harness's other jobs, one module each (``hxfuse.external.ort_*``):
``point`` (:class:`~hxfuse.external.ort_point.Spec`, shared by all),
``inputs`` (hxrun's generator, the rounds' order), ``graphs`` (the ONNX
graphs of M, V, D), ``checks`` (numpy's answer, the runner's check),
``sessions`` (session options, bound inputs and outputs), ``engines`` (the
engine threads), ``profile`` (profile -> intervals and lanes), ``records``
(meta, trial and end records, the file), ``harness`` (the run modes and the
run) and ``qnn`` (the QNN HTP emulation check).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from hxfuse.runner.cli import BY_KEY, RUNNER_LIMITS
from hxfuse.external.ort_harness import Harness
from hxfuse.external.ort_match import calibrate, check_same_point, measure_alone, runner_alone_ms
from hxfuse.external.ort_point import OrtHarnessError, Spec, engine_cores
from hxfuse.external.ort_qnn import qnn_check
from hxfuse.model import ENGINE_OF, V_VARIANT_DEFAULTS, WORKLOAD_TASKS

# hxrun's defaults, taken from the one table of its options
# (hxfuse.runner.cli, which tests/runner/test_runner_cli.py holds to the
# runner itself): an option left out must give the point hxrun runs without
# it.  The honoured options take them as their parser defaults; a
# NOT_EXPRESSIBLE option is accepted only at its value here.  None: unset
# (V's shape and passes then follow the variant,
# hxfuse.model.V_VARIANT_DEFAULTS; D's source stride is twice its row bytes;
# M's tile is the backend's own blocking).
HXRUN_DEFAULTS: dict[str, Any] = {
    "workloads": ",".join(BY_KEY["workloads"].default),
    **{
        k: BY_KEY[k].default
        for k in ("precision", "m_shape", "v_variant", "v_shape", "v_passes", "v_workers", "d_shape")
        + ("d_src_stride", "d_desc_rows", "d_repeat", "warmup", "rounds", "seed")
        + ("m_tile", "d_buffers", "antagonist", "antagonist_bytes")
    },
}
# hxrun's least value of each number option the harness honours
# (hxfuse.runner.cli.RUNNER_LIMITS).  Only the least: the harness has never
# checked hxrun's upper bounds, and the config's validation holds the
# pipeline's points to them.
LEAST = {
    k: RUNNER_LIMITS[k][1]
    for k in ("m_shape", "v_shape", "v_passes", "v_workers", "d_shape", "d_src_stride", "d_repeat")
    + ("warmup", "rounds", "seed")
}
# hxrun options that only shape how hxrun schedules its own groups (its
# engines' waits, group D's fused entry and concurrency window) or bound its
# scratch arena: ONNX Runtime's groups schedule themselves and the tasks' work
# is the same, so these are recorded, not refused.
SCHEDULING_ONLY = {
    "scratch_bytes": "the capacity of hxrun's scratch arena (a bound it checks; the tasks' work is the same)",
    "wait": "how hxrun's host and engines wait",
    "spin_ns": "how long hxrun's waits spin",
    "early_completion": "when group D's fused entry publishes a task",
    "groups": "which of hxrun's groups A-D run",
    "window": "group D's concurrency window inside the fused entry",
    "v_release": "when group D's fused entry frees V's scratch",
}
# hxrun options that change the tasks' own work in a way the harness cannot
# express: accepted at hxrun's default (HXRUN_DEFAULTS), refused otherwise
# (before any work) rather than silently measuring a different point.
NOT_EXPRESSIBLE = {
    "m_tile": (
        HXRUN_DEFAULTS["m_tile"],
        "--m-tile",
        "M's k-block is hxrun's GEMM blocking; ONNX Runtime's MatMul (MLAS) "
        "chooses its own and has no option to set it",
    ),
    "d_desc_rows": (
        HXRUN_DEFAULTS["d_desc_rows"],
        "--d-desc-rows",
        "D's descriptor chain is hxrun's copy engine; the ONNX graph's "
        "Slice copies a window in one kernel, with no descriptors",
    ),
    "d_buffers": (
        HXRUN_DEFAULTS["d_buffers"],
        "--d-buffers",
        "D's scratch windows are hxrun's buffer plan; ONNX Runtime's memory planner owns the graph's buffers",
    ),
    "antagonist": (
        HXRUN_DEFAULTS["antagonist"],
        "--antagonist",
        "the harness starts no bandwidth antagonists, so ONNX Runtime would run on an uncontended machine",
    ),
    "antagonist_bytes": (
        HXRUN_DEFAULTS["antagonist_bytes"],
        "--antagonist-bytes",
        "the harness starts no bandwidth antagonists",
    ),
}


def _default_text(key: str) -> str | None:
    """An honoured option's default as the option's text (None: unset)."""
    v = HXRUN_DEFAULTS[key]
    return None if v is None else ",".join(map(str, v)) if isinstance(v, tuple) else str(v)


def _ints(text: str, n: int, opt: str, lo: int) -> list[int]:
    try:
        vals = [int(x, 0) for x in text.split(",")]
    except ValueError:
        vals = []
    if len(vals) != n or any(v < lo for v in vals):
        raise OrtHarnessError(f"{opt}: expected {n} comma-separated integers >= {lo} (got {text!r})")
    return vals


def _int(text: str, opt: str, lo: int) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise OrtHarnessError(f"{opt}: expected an integer (got {text!r})") from None
    if v < lo:
        raise OrtHarnessError(f"{opt}: must be >= {lo} (got {v})")
    return v


def parser() -> argparse.ArgumentParser:
    d = _default_text
    p = argparse.ArgumentParser(
        prog="python -m hxfuse.external.ort",
        description="Run one point's M/V/D tasks under ONNX Runtime (groups A_ort, B_ort, "
        "B_ort_graph, alone) and write the runner's JSON Lines schema.",
    )
    p.add_argument("--out", required=True, help="JSON Lines output (written to FILE.tmp, renamed on success)")
    p.add_argument("--npy-dir", help="write the verification run's inputs and outputs as .npy")
    p.add_argument("--workloads", default=d("workloads"))
    p.add_argument("--precision", default=d("precision"))
    p.add_argument("--m-shape", default=d("m_shape"))
    p.add_argument("--v-variant", default=d("v_variant"))
    p.add_argument("--v-shape", default=d("v_shape"))
    p.add_argument("--v-passes", default=d("v_passes"))
    p.add_argument("--v-workers", default=d("v_workers"))
    p.add_argument("--d-shape", default=d("d_shape"))
    p.add_argument("--d-src-stride", default=d("d_src_stride"))
    p.add_argument("--d-repeat", default=d("d_repeat"))
    p.add_argument("--warmup", default=d("warmup"))
    p.add_argument("--rounds", default=d("rounds"))
    p.add_argument("--seed", default=d("seed"), help="input data (hxrun's generator) and, by default, the round order")
    p.add_argument("--order-seed", help="seed of the round order only (replicates: same inputs, new order)")
    p.add_argument("--affinity", help="spread, or engine=core pairs (mx, vec, dma, host)")
    p.add_argument("--calibrate", help="not supported: ONNX Runtime runs the real kernels")
    p.add_argument(
        "--match-runner",
        help="the point's runner raw file: scale ORT's M n, V cols and D rows until each task alone "
        "takes the runner's alone time within 10%% (docs/ort.md, duration matching)",
    )
    p.add_argument("--label", action="append", default=[], help="KEY=VALUE, copied into meta.labels")
    p.add_argument(
        "--qnn-check",
        action="store_true",
        help="instead of timing: run the graphs on the QNN HTP x86 emulation (fp16) and write "
        "a JSON correctness result to --out (needs onnxruntime-qnn)",
    )
    p.add_argument("--qnn-soc-model", default="43", help="QNN soc_model of the emulated HTP (43: SM8550)")
    p.add_argument("--qnn-htp-arch", default="73", help="QNN htp_arch of the emulated HTP")
    for key in SCHEDULING_ONLY:
        p.add_argument("--" + key.replace("_", "-"), help=f"hxrun option ({SCHEDULING_ONLY[key]}), recorded only")
    for default, opt, why in NOT_EXPRESSIBLE.values():
        p.add_argument(opt, help=f"hxrun option; only its default ({default}) is accepted: {why}")
    return p


def _same_value(text: str, default: Any) -> bool:
    """Whether an option's text is hxrun's default (numbers in any base)."""
    if default is None:
        return False
    try:
        return int(text, 0) == default
    except ValueError:
        return False


def point_problems(ns: argparse.Namespace) -> list[str]:
    """The point options the harness cannot express, each naming the option
    (empty: the point can run).  Checked by :func:`spec_from_args` before any
    work; the pipeline uses it to choose the points ONNX Runtime runs."""
    out = []
    if ns.precision != "fp32":
        out.append(
            f"--precision: {ns.precision!r} is not supported by the ONNX Runtime harness "
            "(fp32 only: the u8 x i8 -> i32 GEMM and the int16 activation have no matching "
            "ONNX graph with the runner's exact integer semantics)"
        )
    if ns.calibrate:
        out.append("--calibrate: calibration busy-waits exist only in hxrun; ONNX Runtime runs the real kernels")
    if ns.v_variant not in V_VARIANT_DEFAULTS:
        out.append(f"--v-variant: {ns.v_variant!r} is not one of {', '.join(V_VARIANT_DEFAULTS)}")
    for key, (default, opt, why) in NOT_EXPRESSIBLE.items():
        v = getattr(ns, key)
        if v is not None and not _same_value(v, default):
            out.append(
                f"{opt} {v}: cannot be expressed under ONNX Runtime ({why}); "
                f"only hxrun's default ({default if default is not None else 'unset'}) is accepted"
            )
    aff = ns.affinity
    if aff and aff not in ("spread", "none"):
        extra = [
            p.partition("=")[0]
            for p in aff.split(",")
            if p.partition("=")[0] not in ENGINE_OF.values()
            and p.partition("=")[0] != "host"
            and p.partition("=")[0].rstrip("0123456789") in ("vec", "bw")
        ]
        if extra:
            out.append(
                f"--affinity {aff}: {', '.join(extra)} cannot be pinned under ONNX Runtime (V's extra "
                "workers are its session's intra-op pool threads; there are no antagonists)"
            )
    return out


def args_problems(args: Sequence[str]) -> list[str]:
    """:func:`point_problems` of hxrun's options for a point (the list of
    ``hxfuse.config.points.runner_args``); an option the harness does not know at
    all is a problem too."""
    ns, unknown = parser().parse_known_args(["--out", "-", *map(str, args)])
    return ([f"{' '.join(unknown)}: not an option the ONNX Runtime harness knows"] if unknown else []) + point_problems(
        ns
    )


def spec_from_args(ns: argparse.Namespace) -> Spec:
    """Validate parsed options; every problem is an OrtHarnessError naming the option."""
    problems = point_problems(ns)
    if problems:
        raise OrtHarnessError("; ".join(problems))
    workloads = tuple(ns.workloads.split(","))
    bad = [w for w in workloads if w not in WORKLOAD_TASKS]
    if not workloads or bad or len(set(workloads)) != len(workloads):
        raise OrtHarnessError(f"--workloads: expected a comma list of distinct mv, md, mvd (got {ns.workloads!r})")
    m, n, k = _ints(ns.m_shape, 3, "--m-shape", LEAST["m_shape"])
    rows, cols, passes = V_VARIANT_DEFAULTS[ns.v_variant]
    if ns.v_shape:
        rows, cols = _ints(ns.v_shape, 2, "--v-shape", LEAST["v_shape"])
    if ns.v_passes:
        passes = _int(ns.v_passes, "--v-passes", LEAST["v_passes"])
    workers = _int(ns.v_workers, "--v-workers", LEAST["v_workers"])
    if workers > rows:
        raise OrtHarnessError(f"--v-workers: {workers} workers for {rows} rows")
    d_rows, d_row_bytes = _ints(ns.d_shape, 2, "--d-shape", LEAST["d_shape"])
    # hxrun's default stride (unset): twice the row bytes
    stride = _int(ns.d_src_stride, "--d-src-stride", LEAST["d_src_stride"]) if ns.d_src_stride else 2 * d_row_bytes
    if stride < d_row_bytes:
        raise OrtHarnessError(f"--d-src-stride: {stride} is smaller than the row bytes {d_row_bytes}")
    repeat = _int(ns.d_repeat, "--d-repeat", LEAST["d_repeat"])
    if d_rows * stride * repeat > 8 << 30:
        raise OrtHarnessError("--d-repeat: the DDR source of D would exceed 8 GiB")
    affinity = None if ns.affinity == "none" else ns.affinity
    if affinity:
        engine_cores(affinity, workloads, os.cpu_count() or 1)  # validates
    for lab in ns.label:
        if "=" not in lab or lab.startswith("="):
            raise OrtHarnessError(f"--label: expected KEY=VALUE (got {lab!r})")
    ignored = {o: getattr(ns, o) for o in [*SCHEDULING_ONLY, *NOT_EXPRESSIBLE] if getattr(ns, o) is not None}
    return Spec(
        workloads=workloads,
        precision="fp32",
        m=m,
        n=n,
        k=k,
        v_variant=ns.v_variant,
        v_rows=rows,
        v_cols=cols,
        v_passes=passes,
        v_workers=workers,
        d_rows=d_rows,
        d_row_bytes=d_row_bytes,
        d_src_stride=stride,
        d_repeat=repeat,
        warmup=_int(ns.warmup, "--warmup", LEAST["warmup"]),
        rounds=_int(ns.rounds, "--rounds", LEAST["rounds"]),
        seed=_int(ns.seed, "--seed", LEAST["seed"]),
        order_seed=_int(ns.order_seed, "--order-seed", LEAST["seed"]) if ns.order_seed is not None else None,
        affinity=affinity,
        ignored=ignored,
    )


def matched_spec(spec: Spec, runner_file: str) -> tuple[Spec, dict[str, dict]]:
    """*spec* with each task's size matched to its alone time in *runner_file*
    (the point's runner raw file; :mod:`hxfuse.external.ort_match`), and the
    matching records.  The file is read and checked before any timing."""
    from hxfuse.runner.records import IncompleteRunError, read_run

    try:
        run = read_run(runner_file)
    except (OSError, IncompleteRunError) as exc:
        raise OrtHarnessError(f"--match-runner {runner_file}: cannot read the runner's raw file: {exc}") from None
    if run.end.get("status") != "ok":
        raise OrtHarnessError(f"--match-runner {runner_file}: status {run.end.get('status')!r}, not a completed run")
    check_same_point(run, spec)
    targets = runner_alone_ms(run, spec.tasks)
    matched, records = calibrate(spec, targets, measure_alone)
    for t, rec in records.items():
        print(
            f"hxfuse.external.ort: matching {t}: {rec['scaled']} {rec['runner_size']} -> {rec['ort_size']}: "
            f"{rec['ort_calibrated_ms']:.3f} ms vs the runner's {rec['runner_alone_ms']:.3f} ms "
            f"({rec['error']:+.1%}){'' if rec['matched'] else ': NOT MATCHED, ' + rec['reason']}",
            file=sys.stderr,
        )
    return matched, records


def main(argv: Sequence[str] | None = None) -> int:
    ns = parser().parse_args(argv)
    try:
        spec = spec_from_args(ns)
        try:
            import onnx  # noqa: F401
            import onnxruntime  # noqa: F401
        except ImportError as exc:
            raise OrtHarnessError(f"{exc.name} is not installed: pip install -e . (pyproject.toml pins it)") from None
    except OrtHarnessError as exc:
        print(f"hxfuse.external.ort: error: {exc}", file=sys.stderr)
        return 2
    labels = dict(lab.split("=", 1) for lab in ns.label)
    if ns.qnn_check:
        try:
            res = qnn_check(spec, ns.qnn_soc_model, ns.qnn_htp_arch)
        except OrtHarnessError as exc:
            print(f"hxfuse.external.ort: error: {exc}", file=sys.stderr)
            return 2
        res["labels"] = labels
        with open(ns.out + ".tmp", "w") as fh:
            json.dump(res, fh, indent=1)
        os.replace(ns.out + ".tmp", ns.out)
        for r in res["reasons"]:
            print(f"hxfuse.external.ort: QNN check failed: {r}", file=sys.stderr)
        return 0 if res["status"] == "ok" else 4
    try:
        point, matching = spec, None
        if ns.match_runner:
            spec, matching = matched_spec(spec, ns.match_runner)
    except OrtHarnessError as exc:
        print(f"hxfuse.external.ort: error: {exc}", file=sys.stderr)
        return 2
    h = Harness(spec, point=point, matching=matching)
    try:
        return h.run(ns.out, ns.npy_dir, labels)
    finally:
        h.close()


if __name__ == "__main__":
    sys.exit(main())
