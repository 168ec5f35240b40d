"""The fixed-vs-searched figure (data: hxfuse.search.compare.candidates_long and
confirmation_long).

Left: every evaluated candidate's median D makespan with its bootstrap
interval, in evaluation order; the best found is filled red, the fixed
default (where it was among the candidates) outlined black, a failed
candidate is listed without a number.  Right: the confirmation, fixed / best
of the D makespan (regret + 1) with its paired interval, and D/A, D/C of the
fixed default and of the best, each with its interval; the grey band is
1 ± min_effect, inside which a difference does not count.
"""

from __future__ import annotations

import json
from typing import Sequence

import numpy as np

from hxfuse.render import style
from hxfuse.render.style import plt, save
from hxfuse.search.compare import candidates_long, confirmation_long

BEST_COLOR, FIXED_COLOR, OTHER_COLOR = "#C44E52", "#000000", "#4C72B0"
SIDE_COLORS = {"ratio": "#8172B3", "fixed": "#7f7f7f", "best": BEST_COLOR}


def search_figure(result_json: str, min_effect: float, out: Sequence[str]) -> None:
    doc = json.loads(open(result_json).read())
    cands, conf = candidates_long(doc), confirmation_long(doc)
    style.apply()
    s = doc["search"]
    n = max(len(cands), 1)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 1.2 + 0.32 * max(n, 6)), gridspec_kw={"width_ratios": [1.4, 1]})
    y = np.arange(len(cands))[::-1]
    for yi, r in zip(y, cands.itertuples()):
        if r.status != "ok" or not np.isfinite(r.median_ms):
            ax.text(
                0.01,
                yi,
                "check failed: no number",
                transform=ax.get_yaxis_transform(),
                va="center",
                fontsize=7,
                color="#a00",
            )
            continue
        color = BEST_COLOR if r.best else OTHER_COLOR
        ax.errorbar(
            r.median_ms,
            yi,
            xerr=[[r.median_ms - r.lo_ms], [r.hi_ms - r.median_ms]],
            fmt="o",
            color=color,
            ms=7 if r.best else 5,
            capsize=2,
            mfc="white" if r.disturbed else color,
            mec=FIXED_COLOR if r.fixed else color,
            mew=2 if r.fixed else 1,
        )
    ax.set_yticks(y)
    ax.set_yticklabels(
        [
            ("* best: " if r.best else "")
            + ("[fixed] " if r.fixed and not r.label.startswith("fixed") else "")
            + r.label
            for r in cands.itertuples()
        ],
        fontsize=7,
    )
    ax.set_xlabel("group D makespan, median of the search's rounds [ms]")
    cost = s["cost"]
    ax.set_title(
        f"search: {cost['candidates']} of {s['space_size']} configurations, "
        f"{cost['d_rounds']} D rounds, {cost['runner_seconds']:.1f} s of runner time\n"
        "red: best found; black edge: the fixed default; open: run disturbed by other load",
        fontsize=8,
    )
    bx.axvspan(1 - min_effect, 1 + min_effect, color="0.85", zorder=0)
    bx.axvline(1.0, color="0.5", lw=0.8)
    labels = []
    for i, r in enumerate(conf.itertuples()):
        yi = len(conf) - 1 - i
        if np.isfinite(r.value):
            lo = r.value - r.lo if np.isfinite(r.lo) else 0
            hi = r.hi - r.value if np.isfinite(r.hi) else 0
            bx.errorbar(
                r.value,
                yi,
                xerr=[[lo], [hi]],
                fmt="s" if r.side == "ratio" else "o",
                color=SIDE_COLORS[r.side],
                capsize=3,
            )
        labels.append(r.quantity if r.side == "ratio" else f"{r.quantity} of {r.side}")
    bx.set_yticks(np.arange(len(conf))[::-1])
    bx.set_yticklabels(labels, fontsize=8)
    bx.set_xlabel("ratio (median, 95% interval; grey: 1 ± minimum effect)")
    c = doc.get("confirmation") or {}
    pairs = c.get("pairs")
    if c.get("verdict") == "inconclusive":
        what = (
            f"inconclusive: {len(c.get('reasons') or [])} finding(s) of other load or failed "
            "checks (listed in result.json)"
        )
    else:
        what = c.get("verdict_text", "not run")
    reg = c.get("regret") or {}
    if reg.get("value") is not None:
        what += f"\nregret {reg['value']:+.1%} [{reg['lo']:+.1%}, {reg['hi']:+.1%}]"
    bx.set_title(f"confirmation: {pairs} interleaved pairs\n{what}", fontsize=8)
    fig.suptitle(f"{s['title']} (target {s['target']}, workload {s['workload']})", fontsize=10)
    fig.tight_layout()
    save(fig, out)
