"""The paper's section on the request stream (workload 5,
:mod:`hxfuse.serve.stats`), its answer and abstract sentences.

From ``results/host/serve*/summary.csv`` (per point, policy and metric a
median with interval; the paired ratios D/A and D/B; ``loaded``); how a
reading is worded: hxfuse.paper.prose.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from hxfuse.analysis.verdicts import DEFAULT_MIN_EFFECT
from hxfuse.paper.prose import HEADER, as_float, interval_text, is_finite, span_pct, tex_path, tex_tt, truthy


def _serve_get(s: pd.DataFrame, point: str, policy: str, metric: str) -> dict | None:
    r = s[(s["point"] == point) & (s["policy"] == policy) & (s["metric"] == metric)]
    return None if r.empty else r.iloc[0].to_dict()


def ratio_reading(r: Mapping | None, min_effect: float = DEFAULT_MIN_EFFECT) -> str:
    """A paired ratio X/Y of the service mode read against 1 with the
    project's minimum effect m: lower or higher only when its interval lies
    beyond 1 -/+ m, no different when it lies inside that band (a 0.1%
    throughput difference with a tight interval is not a finding)."""
    if r is None or not is_finite(r.get("median")):
        return "not measured"
    if is_finite(r.get("n")) and as_float(r.get("n")) < 2:
        return "undetermined (one replay: no interval)"
    lo, hi = as_float(r.get("lo")), as_float(r.get("hi"))
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "undetermined (no interval)"
    if hi < 1 - min_effect:
        return "lower"
    if lo > 1 + min_effect:
        return "higher"
    if lo >= 1 - min_effect and hi <= 1 + min_effect:
        return f"no different (within 1 ± {min_effect:g})"
    return f"undetermined (its interval crosses an edge of 1 ± {min_effect:g})"


def _single(r: Mapping | None) -> bool:
    return r is not None and is_finite(r.get("n")) and as_float(r.get("n")) < 2


def _ratio(r: Mapping | None, what: str) -> str:
    if r is None:
        return f"{what} not measured"
    if _single(r):  # said once per point: one replay, no interval
        return f"{what} {as_float(r['median']):.2f}"
    return f"{what} {interval_text(r['median'], r['lo'], r['hi'])}, {ratio_reading(r)}"


def serve_point_sentence(s: pd.DataFrame, point: str) -> str:
    """D against A and B at one service point, with intervals, miss rates,
    throughput and the pairing D did."""
    rows = s[s["point"] == point]
    rate, w = as_float(rows["rate"].iloc[0]), as_float(rows["window_us"].iloc[0])
    get = lambda pol, m: _serve_get(s, point, pol, m)  # noqa: E731
    miss = ", ".join(
        f"{pol} {100 * as_float(get(pol, 'miss_rate')['median']):.1f}\\%"
        for pol in ("A", "B", "D")
        if get(pol, "miss_rate") is not None
    )
    tput = ", ".join(
        f"{pol} {as_float(get(pol, 'throughput_rps')['median']):.0f}/s"
        for pol in ("A", "B", "D")
        if get(pol, "throughput_rps") is not None
    )
    paired, wait = get("D", "paired_share"), get("D", "pairing_wait_mean_ms")
    single = _single(get("D/B", "p99_ms"))
    tags = (["loaded: not counted in the answers"] if _serve_loaded(s, point) else []) + (
        ["one replay per policy: every ratio undetermined, no interval"] if single else []
    )
    sent = (
        f"Point {tex_tt(point)} ({rate:g} requests/s, $w$ = {w:g}\\,$\\mu$s"
        + "".join(f"; {x}" for x in tags)
        + "): p99 latency "
        f"{_ratio(get('D/A', 'p99_ms'), 'D/A')} and {_ratio(get('D/B', 'p99_ms'), 'D/B')}; the bandwidth "
        f"requests' p99 {_ratio(get('D/B', 'short_p99_ms'), 'D/B')}; throughput "
        f"{_ratio(get('D/B', 'throughput_rps'), 'D/B')} (medians {tput}); "
        f"deadline misses {miss or 'not measured'}."
    )
    if paired is not None and wait is not None:
        sent += (
            f" D paired {100 * as_float(paired['median']):.0f}\\% of the requests, with a mean pairing wait of "
            f"{as_float(wait['median']):.3f}\\,ms."
        )
    return sent


def _serve_loaded(s: pd.DataFrame, point: str) -> bool:
    return "loaded" in s and bool(s[s["point"] == point]["loaded"].map(truthy).any())


def _points_order(s: pd.DataFrame) -> list[str]:
    pts = s[["point", "rate", "window_us"]].drop_duplicates()
    return list(pts.sort_values(["rate", "window_us", "point"])["point"])


def serve_abstract(s: pd.DataFrame | None) -> str:
    """One sentence for the abstract: D's p99 against B over the points off a
    loaded machine."""
    if s is None or s.empty:
        return "The request stream did not run in this build."
    pts = _points_order(s)
    clean = [p for p in pts if not _serve_loaded(s, p)]
    c: dict[str, int] = {}
    for p in clean:
        k = ratio_reading(_serve_get(s, p, "D/B", "p99_ms")).split(" (")[0]
        c[k] = c.get(k, 0) + 1
    return (
        "In a request stream served with fused pairing (D) against the engines' own queues (B), D's p99 "
        "latency is "
        + (
            ", ".join(f"{k} at {v}" for k, v in c.items()) + f" of {len(clean)} point(s) off a loaded machine"
            if clean
            else "not read at any point (no point off a loaded machine)"
        )
        + (f"; {len(pts) - len(clean)} point(s) ran on a loaded machine." if len(clean) < len(pts) else ".")
    )


def _reading_counts(s: pd.DataFrame, pts: Sequence[str], policy: str, metric: str) -> str:
    c: dict[str, int] = {}
    for p in pts:
        k = ratio_reading(_serve_get(s, p, policy, metric)).split(" (")[0]
        c[k] = c.get(k, 0) + 1
    return ", ".join(f"{k} at {v}" for k, v in c.items())


def requests_answer(s: pd.DataFrame | None, ref: bool = True) -> str:
    """Can complementary tasks from different requests be fused with gain?
    The readings of D's p99 against A and B and of D/B's throughput over the
    service points off a loaded machine (loaded points named, not counted).
    ``ref``: name the section (not within it)."""
    if s is None or s.empty:
        return "The service mode did not run in this build, so requests from a stream are not measured."
    pts = _points_order(s)
    loaded = [p for p in pts if _serve_loaded(s, p)]
    clean = [p for p in pts if p not in loaded]
    paired = [_serve_get(s, p, "D", "paired_share") for p in pts]
    paired = [as_float(x["median"]) for x in paired if x is not None and is_finite(x["median"])]
    head = (
        "Fused pairing across requests"
        + (" (Section~\\ref{sec:serve})" if ref else "")
        + " pairs a compute request with a bandwidth request from a different request"
        + (f" ({span_pct(paired)} of requests paired)" if paired else "")
        + ". "
    )
    if clean:
        body = (
            f"Over the {len(clean)} point(s) off a loaded machine, D's p99 latency against A is "
            f"{_reading_counts(s, clean, 'D/A', 'p99_ms')}; against B it is "
            f"{_reading_counts(s, clean, 'D/B', 'p99_ms')}; D's throughput against B is "
            f"{_reading_counts(s, clean, 'D/B', 'throughput_rps')} (a ratio is read as lower or higher only "
            f"when its interval lies beyond 1 ± {DEFAULT_MIN_EFFECT:g}, as no different inside that band)."
        )
    else:
        body = "No point ran off a loaded machine, so no ratio is read as an answer."
    return (
        head
        + body
        + (
            f" {len(loaded)} of {len(pts)} point(s) ran on a loaded machine ({', '.join(tex_tt(p) for p in loaded)}): "
            f"their ratios are in the table but not counted here."
            if loaded
            else ""
        )
    )


def serve_tex(s: pd.DataFrame | None, figures: Mapping[str, str], table: str | None) -> str:
    """The body of the section on the request stream (workload 5)."""
    out = [HEADER.rstrip()]
    if s is None:
        out.append(
            r"The service mode did not run in this build (it needs the \texttt{host} target; "
            r"\texttt{snakemake -{}-cores 4 serve\_all})."
        )
        return "\n".join(out) + "\n"
    pts = _points_order(s)
    rates = s["rate"].nunique()
    windows = s["window_us"].nunique()
    out.append(
        f"The stream ran at {len(pts)} point(s) ({', '.join(tex_tt(p) for p in pts)}). "
        + ("Figure~\\ref{fig:serve} shows the latency distributions; " if figures.get("latency_cdf") else "")
        + (
            "Figure~\\ref{fig:serve-sweep} the p99 and miss rate along the swept rate and window; "
            if (rates > 1 and figures.get("vs_rate")) or (windows > 1 and figures.get("vs_window"))
            else ""
        )
        + "Table~\\ref{tab:serve} gives every policy's percentiles, misses, throughput and pairing wait with "
        "their intervals. " + requests_answer(s, ref=False)
    )
    out.append(r"\begin{itemize}")
    out += [rf"\item {serve_point_sentence(s, p)}" for p in pts]
    out.append(r"\end{itemize}")
    if table:
        out.append(rf"\input{{{tex_path(table)}}}")
    # the CDF figure has one panel per point: its own figure, taller with more points
    if figures.get("latency_cdf"):
        h = "0.3" if len(pts) <= 2 else "0.7"
        out += [
            r"\begin{figure}[tbp]",
            r"\centering",
            rf"\includegraphics[width=\linewidth,height={h}\textheight,keepaspectratio]"
            rf"{{{tex_path(figures['latency_cdf'])}}}",
            r"\caption{Request stream on target \texttt{host}: latency distribution of policies A (FIFO serial), "
            r"B (engine queues) and D (fused pairing with window $w$), one panel per point.}",
            r"\label{fig:serve}",
            r"\end{figure}",
        ]
    shown = ([("vs_rate", "against the arrival rate")] if rates > 1 else []) + (
        [("vs_window", "against D's pairing window")] if windows > 1 else []
    )
    shown = [(k, c) for k, c in shown if figures.get(k)]
    if shown:
        out += [r"\begin{figure}[tbp]", r"\centering"]
        for k, cap in shown:
            out += [
                r"\begin{subfigure}{\linewidth}\centering",
                r"\includegraphics[width=\linewidth,height=0.3\textheight,keepaspectratio]"
                rf"{{{tex_path(figures[k])}}}",
                rf"\caption{{{cap}}}",
                r"\end{subfigure}",
            ]
        out += [
            r"\caption{Request stream on target \texttt{host}: p99 latency, the bandwidth requests' p99 and the "
            r"deadline miss rate of policies A, B and D.}",
            r"\label{fig:serve-sweep}",
            r"\end{figure}",
        ]
    return "\n".join(out) + "\n"


def limitation_item(s: pd.DataFrame | None) -> str | None:
    """The request stream's item of the paper's limitations (None without service points)."""
    if s is None or not len(s):
        return None
    pts = _points_order(s)
    loaded = [p for p in pts if _serve_loaded(s, p)]
    lag = s[(s["metric"] == "admit_lag_max_ms") & s["policy"].isin(["A", "B", "D"])]
    return (
        rf"\item \textbf{{Request stream.}} {len(pts)} point(s), {len(loaded)} of them on a loaded machine; "
        r"the dispatcher and three engine threads share the host's cores, and its own admission lag (up to "
        + (
            f"{pd.to_numeric(lag['median'], errors='coerce').max():.2f}\\,ms: the largest median over replays"
            if len(lag)
            else "not recorded"
        )
        + r") counts in every latency."
    )


def load_serve(summary: str | Path | None) -> pd.DataFrame | None:
    return pd.read_csv(summary) if summary else None
