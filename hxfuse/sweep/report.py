"""Tables of the Snakemake report (``snakemake --report report.html``).

Built from the pipeline's ``summary.csv`` and ``summary.json`` (hxfuse.analysis.aggregate;
columns in docs/columns.md):

- :func:`verdict_rows` / :func:`write_verdicts`: one row per point x workload
  with the measured intervals, per-task slowdown, host/device split, overlap
  evidence, the section 6 verdict with its conclusion and next step, and the
  noise and environment warnings; written as CSV and as a standalone HTML page;
- :func:`environment_rows` / :func:`write_environment`: the machine, toolchain
  and provenance of every point, with the environment warnings.

Only presentation lives here; every number comes from the summary.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from hxfuse.analysis.metrics import TASKS
from hxfuse.config.targets import emulated_flag

US = 1000.0


def _f(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _us(v: Any) -> str:
    f = _f(v)
    return "" if not math.isfinite(f) else f"{f / US:,.1f}"


def _interval(v: Any, lo: Any, hi: Any, unit: float = 1.0, fmt: str = "{:.3f}") -> str:
    v, lo, hi = _f(v) / unit, _f(lo) / unit, _f(hi) / unit
    if not math.isfinite(v):
        return ""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return fmt.format(v)
    return f"{fmt.format(v)} [{fmt.format(lo)}, {fmt.format(hi)}]"


def _num(v: Any, fmt: str = "{:.2f}") -> str:
    f = _f(v)
    return fmt.format(f) if math.isfinite(f) else ""


def _text(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)


def _range(lo: Any, hi: Any) -> str:
    lo, hi = _f(lo), _f(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    return f"{lo:.3f}" if lo == hi else f"{lo:.3f} .. {hi:.3f}"


def verdict_rows(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per point x workload (the D row of the summary and its A row)."""
    if summary.empty or "group" not in summary:
        return pd.DataFrame()
    key = [c for c in ("target", "point_id", "workload") if c in summary]
    rows = []
    for _, d in summary[summary["group"] == "D"].iterrows():
        sel = pd.Series(True, index=summary.index)
        for c in key:
            sel &= summary[c] == d[c]
        a = summary[sel & (summary["group"] == "A")]
        a = a.iloc[0] if len(a) else pd.Series(dtype=object)
        tasks = [t for t in TASKS if math.isfinite(_f(d.get(f"{t}_slowdown")))]
        r = {
            "target": _text(d.get("target")),
            "point": _text(d.get("point_id", d.get("point"))),
            "x": _num(d.get("x"), "{:g}"),
            "workload": _text(d.get("workload")),
            "n": _num(d.get("n"), "{:.0f}"),
            "T_A us [95% CI]": _interval(
                a.get("makespan_ns"), a.get("makespan_lo_ns"), a.get("makespan_hi_ns"), US, "{:,.1f}"
            ),
            "T_D us [95% CI]": _interval(
                d.get("makespan_ns"), d.get("makespan_lo_ns"), d.get("makespan_hi_ns"), US, "{:,.1f}"
            ),
        }
        for y in ("A", "B", "C"):
            r[f"D/{y}"] = _interval(
                d.get(f"speedup_over_{y}"), d.get(f"speedup_over_{y}_lo"), d.get(f"speedup_over_{y}_hi")
            )
        b = summary[sel & (summary["group"] == "B")]
        d = d.copy()
        d["late_handover_share_B"] = b.iloc[0].get("late_handover_share") if len(b) else math.nan
        c = summary[sel & (summary["group"] == "C")]
        r["C/A"] = (
            _interval(
                c.iloc[0].get("speedup_over_A"), c.iloc[0].get("speedup_over_A_lo"), c.iloc[0].get("speedup_over_A_hi")
            )
            if len(c)
            else ""
        )
        r |= {
            "parallelism D [95% CI]": _interval(
                d.get("parallelism"), d.get("parallelism_lo"), d.get("parallelism_hi"), 1.0, "{:.2f}"
            ),
            "run share D": " ".join(
                f"{t} {_f(d.get(f'{t}_run_share')):.2f}" for t in tasks if math.isfinite(_f(d.get(f"{t}_run_share")))
            ),
            "queue us D": " ".join(
                f"{t} {_f(d.get(f'{t}_queue_ns')) / US:.1f}" for t in tasks if math.isfinite(_f(d.get(f"{t}_queue_ns")))
            ),
            "eta vs ideal": _num(d.get("eta_vs_alone")),
            "eta vs bound": _num(d.get("eta_vs_bound")),
            "eta vs A": _num(d.get("eta_vs_A")),
            "T_serial / T_ideal / bound us": " / ".join(
                _us(d.get(k)) for k in ("t_serial_ns", "t_ideal_ns", "t_bound_ns")
            ),
            "D slowdown": " ".join(f"{t} {_f(d.get(f'{t}_slowdown')):.2f}" for t in tasks),
            "STP / ANTT / fairness": " / ".join(_num(d.get(k)) for k in ("stp", "antt", "fairness")),
            "D host submit / wait / device us": " / ".join(
                _us(d.get(k)) for k in ("host_submit_ns", "host_wait_ns", "device_ns")
            ),
            "D control overhead us": _us(d.get("control_overhead_ns")),
            "wall overlap max (D)": _num(d.get("overlap_max")),
            "concurrent us (D)": _us(d.get("concurrent_ns")),
            "replicates": _num(d.get("n_replicates"), "{:.0f}"),
            # measure, don't veto: replicates still disturbed after the
            # run job's reruns, and how many reruns it took
            "disturbed / reruns": " / ".join(_num(d.get(k), "{:.0f}") for k in ("replicates_disturbed", "reruns")),
            "with disturbed replicates": _text(d.get("sensitivity")),
            "D/A per replicate": _range(d.get("speedup_over_A_rep_min"), d.get("speedup_over_A_rep_max")),
            "B late handovers": _num(d.get("late_handover_share_B"), "{:.0%}"),
            "relations": _text(d.get("relations")),
            "verdict": _text(d.get("verdict")),
            "also holds": _text(d.get("verdict_matches")),
            "inconclusive because": _text(d.get("inconclusive_reason")),
            "conclusion": _text(d.get("conclusion")),
            "next step": _text(d.get("next_step")),
            "noise warning": _text(d.get("noise_warning")),
            "environment warning": _text(d.get("env_warning")),
            "excluded": _text(d.get("excluded_reason")),
        }
        if emulated_flag(d.get("emulated")):
            # An emulator's timings are not performance: show none of them.
            keep = {"target", "point", "x", "workload", "n", "verdict", "environment warning", "excluded"}
            r = {k: (v if k in keep else "") for k, v in r.items()}
            r["T_A us [95% CI]"] = "emulated: timings are not performance"
        rows.append(r)
    return pd.DataFrame(rows)


ENV_FIELDS = (
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
    "runner_wall_s",
    "compiler",
    "sdk_version",
    "clock_resolution_ns",
    "clock_read_overhead_ns",
    "emulated",
    "env_warning",
)


def environment_rows(summary: pd.DataFrame, doc: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per point: its environment (summary) and provenance (summary.json)."""
    if summary.empty:
        return pd.DataFrame()
    prov = (doc or {}).get("provenance", {}) if doc else {}
    points = prov.get("points", {}) if isinstance(prov, Mapping) else {}
    key = "point_id" if "point_id" in summary else "point"
    rows = []
    for pid, g in summary.groupby(key, sort=False):
        first = g.iloc[0]
        side = points.get(pid, {}) if isinstance(points, Mapping) else {}
        r = {"target": _text(first.get("target")), "point": _text(pid)}
        for c in ENV_FIELDS:
            v = first.get(c)
            r[c] = _num(v, "{:g}") if isinstance(v, float) else _text(v)
        r |= {
            "git_commit": _text(side.get("git_commit", prov.get("git_commit")))[:12],
            "git_dirty": _text(side.get("git_dirty", prov.get("git_dirty"))),
            "config_hash": _text(side.get("config_hash", prov.get("config_hash"))),
            "point_hash": _text(side.get("point_hash")),
            "runner_sha256": _text(side.get("runner_sha256"))[:12],
            "build_cc": _text(side.get("build_cc", prov.get("build_cc"))),
            "python": _text(side.get("python", prov.get("python"))),
            "hostname": _text(side.get("hostname", prov.get("hostname"))),
        }
        rows.append(r)
    return pd.DataFrame(rows)


_CSS = """
body { font-family: sans-serif; font-size: 13px; margin: 1em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bbb; padding: 3px 6px; vertical-align: top; }
th { background: #eee; position: sticky; top: 0; }
td.warn { color: #a40; }
td.verdict { font-weight: bold; }
p.note { max-width: 60em; }
"""


def html_page(title: str, df: pd.DataFrame, notes: Sequence[str] = (), classes: Mapping[str, str] | None = None) -> str:
    """A standalone HTML page with one table (all text escaped)."""
    classes = dict(classes or {})
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for _, r in df.iterrows():
        cells = []
        for c in df.columns:
            cls = classes.get(c, "")
            cls = f' class="{cls}"' if cls and _text(r[c]) else ""
            cells.append(f"<td{cls}>{html.escape(_text(r[c]))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    notes_html = "".join(f'<p class="note">{html.escape(n)}</p>' for n in notes)
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>{notes_html}"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        "</body></html>\n"
    )


VERDICT_NOTES = (
    "One row per point and workload. Times are medians over measured rounds (warm-up and empty "
    "trials excluded) with bootstrap 95% intervals; speedups X/Y = T_Y / T_X are paired within a "
    "round and shown with the one interval each relation is decided on: on log(ratio), the two-level "
    "bootstrap (replicates, then rounds) joined with a t interval on the replicates' medians and widened "
    "by the interference bound. With the margin m (analysis.min_effect): X<Y when the interval lies above "
    "1 + m, X>Y below 1/(1 + m), X~Y inside both (two one-sided tests), X?Y otherwise, with its reason "
    "(too few replicates, machine busy, interval spans the margin). Progress overlap comes from the tasks' "
    "checkpoints; parallelism = task CPU time / makespan is occupancy, shown beside it. A disturbed "
    "replicate is rerun by the run job, else left out (its verdict shown as a sensitivity check); with no "
    "clean replicate the point is 'machine too busy'; two replicates' own intervals on opposite sides of "
    "the margin make it inconclusive. The verdict applies the reading table; 'also holds' lists every "
    "matching row, most specific first. Definitions: docs/metrics.md and docs/columns.md.",
)


def _read_doc(path: str | Path | None) -> dict:
    if not path:
        return {}
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}


def write_verdicts(
    summary_csv: str | Path,
    out_html: str | Path,
    out_csv: str | Path | None = None,
    summary_json: str | Path | None = None,
    title: str = "Verdicts",
) -> pd.DataFrame:
    summary = pd.read_csv(summary_csv) if Path(summary_csv).stat().st_size else pd.DataFrame()
    rows = verdict_rows(summary)
    doc = _read_doc(summary_json)
    notes = list(VERDICT_NOTES)
    failed = doc.get("failed_points") or []
    if failed:
        notes.append(
            "Failed points (no speedup, no verdict): "
            + "; ".join(f"{f.get('point_id')}: {f.get('reason')}" for f in failed)
        )
    # a B the transport serialised (hxfuse.analysis.transport) is a finding
    b_conc = doc.get("group_b_concurrency") or {}
    if b_conc.get("serialised") or b_conc.get("partly_serialised"):
        notes.append(f"{b_conc['text'][0].upper()}{b_conc['text'][1:]}.")
    warned = rows[rows["environment warning"] != ""] if len(rows) else rows
    if len(warned):
        notes.append(
            f"{len(warned)} of {len(rows)} rows carry an environment warning "
            "(machine loaded or fewer free cores than engines): read their intervals "
            "with care (rule: docs/metrics.md, Environment)."
        )
    Path(out_html).write_text(
        html_page(
            title,
            rows,
            notes,
            {"verdict": "verdict", "noise warning": "warn", "environment warning": "warn", "excluded": "warn"},
        )
    )
    if out_csv:
        rows.to_csv(out_csv, index=False)
    return rows


def write_environment(
    summary_csv: str | Path,
    summary_json: str | Path | None,
    out_html: str | Path,
    title: str = "Environment and provenance",
) -> pd.DataFrame:
    summary = pd.read_csv(summary_csv) if Path(summary_csv).stat().st_size else pd.DataFrame()
    doc = _read_doc(summary_json)
    rows = environment_rows(summary, doc)
    prov = doc.get("provenance", {}) if doc else {}
    notes = [
        "Per point: the runner's record of the machine (meta and end records) and the provenance "
        "sidecar. Load averages are the kernel's 1-minute average read by the runner just before "
        "and after the point.",
        "Aggregated on: "
        + ", ".join(
            f"{k} {prov.get(k)}" for k in ("git_commit", "git_dirty", "config_hash", "python", "platform") if k in prov
        ),
    ]
    Path(out_html).write_text(html_page(title, rows, notes, {"env_warning": "warn"}))
    return rows
