"""What the speedup, slowdown and timeline figures draw (hxfuse.sweep.plots),
read back from the matplotlib figure before it is written: the interval the
verdict reads, the no-difference band on every panel, categorical points
never joined, queueing (A, C) apart from sharing (B, D), the spread over
rounds and the displaced host submit, and every text at least 6 pt at the
size the paper prints it."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import Polygon, Rectangle

from conftest import end_record, meta_record, trial_record, write_jsonl
from hxfuse.render import style
from hxfuse.sweep import plots

SWEEP = {
    "title": "ratio",
    "variable": "nominal T_M / T_V",
    "log_x": True,
    "workloads": ["mv", "md"],
    "points": [
        {"name": "Mshort", "x": 0.1, "label": "M short"},
        {"name": "similar", "x": 1, "label": "similar"},
        {"name": "Vshort", "x": 6, "label": "V, D short"},
    ],
}


@pytest.fixture
def captured(monkeypatch):
    """The figures the plotting functions would write, kept open."""
    figs = []
    monkeypatch.setattr(plots, "save", lambda fig, out, dpi=None: figs.append(fig))
    yield figs
    for f in figs:
        style.plt.close(f)


def summary_frame(workloads=("mv", "md")) -> pd.DataFrame:
    """A summary with known speedups: every decision interval is wider than
    (and distinct from) the bootstrap interval, as the verdict's is."""
    rows = []
    for w in workloads:
        for i, p in enumerate(SWEEP["points"]):
            for g in ("A", "B", "C", "D"):
                r = {
                    "sweep": "ratio",
                    "workload": w,
                    "group": g,
                    "point": p["name"],
                    "label": p["label"],
                    "x": p["x"],
                    "point_id": f"ratio/{w}/{p['name']}",
                    "point_ok": True,
                    "t_serial_ns": 2e6,
                    "t_bound_ns": 1.2e6,
                    "parallelism": 1.2 + 0.2 * i,
                    "parallelism_lo": 1.15 + 0.2 * i,
                    "parallelism_hi": 1.25 + 0.2 * i,
                }
                for y in "ABC":
                    v = 1.1 + 0.1 * i
                    r[f"speedup_over_{y}"] = v
                    # _lo/_hi: the decision interval (docs/columns.md); _boot_*:
                    # its bootstrap ingredient, never to be drawn
                    r[f"speedup_over_{y}_boot_lo"], r[f"speedup_over_{y}_boot_hi"] = v - 0.02, v + 0.02
                    r[f"speedup_over_{y}_lo"], r[f"speedup_over_{y}_hi"] = v - 0.07, v + 0.11
                    r[f"speedup_over_{y}_rel"] = "<"
                rows.append(r)
    return pd.DataFrame(rows)


def _joined_lines(ax) -> list[Line2D]:
    """Data lines of *ax* that join two or more points (axhline/axvline,
    whose x or y data are the axis fraction 0..1, and markers-only lines
    left out)."""
    out = []
    for ln in ax.get_lines():
        if ln.get_linestyle() in ("None", "none", "", " ") or len(ln.get_xdata()) < 2:
            continue
        if ln.get_transform() != ax.transData:  # axhline / axvline
            continue
        out.append(ln)
    return out


def test_speedup_draws_the_decision_interval_and_joins_no_categories(tmp_path, captured):
    s = summary_frame()
    s.to_csv(tmp_path / "s.csv", index=False)
    plots.speedup_figure(tmp_path / "s.csv", "ratio", SWEEP, [tmp_path / "sp.png"], min_effect=0.03)
    (fig,) = captured
    axes = [a for a in fig.axes if a.get_title()]
    assert len(axes) == 2
    want = {(round(v - 0.07, 6), round(v + 0.11, 6)) for v in (1.1, 1.2, 1.3)}
    boot = {(round(v - 0.02, 6), round(v + 0.02, 6)) for v in (1.1, 1.2, 1.3)}
    for ax in axes:
        # no line joins the points of a series (they are categories)
        assert _joined_lines(ax) == [], [ln.get_label() for ln in _joined_lines(ax)]
        # the band 1 +/- m on every panel
        bands = [p for p in ax.patches + ax.collections if isinstance(p, (Polygon, PolyCollection, Rectangle))]
        ys = [p.get_path().get_extents().transformed(p.get_transform() - ax.transData) for p in bands]
        assert any(abs(b.y0 - 0.97) < 1e-6 and abs(b.y1 - 1.03) < 1e-6 for b in ys)
        # the intervals drawn are the decision intervals, never the bootstrap ones
        segs = {
            (round(min(seg[:, 1]), 6), round(max(seg[:, 1]), 6))
            for c in ax.collections
            if isinstance(c, LineCollection)
            for seg in c.get_segments()
            if len(seg) == 2 and seg[0, 0] == seg[1, 0]
        }
        assert want <= segs and not (boot & segs)
    text = " ".join(t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")))
    assert "decision interval" in text and "95% CI" not in text


def test_decision_interval_accessor_names_what_it_reads():
    s = summary_frame()
    lo, hi, name = plots.decision_interval(s, "speedup_over_A")
    assert name == plots.DECISION_INTERVAL and np.allclose(hi - lo, 0.18)
    # a ratio no relation is decided on (no _rel): its _lo/_hi are a bootstrap interval
    lo, hi, name = plots.decision_interval(s.drop(columns=["speedup_over_A_rel"]), "speedup_over_A")
    assert name == plots.BOOTSTRAP_INTERVAL


def trials_frame() -> pd.DataFrame:
    """Per-trial slowdowns: in A and C, V waits behind M (about 10x), in B
    and D every task stays near 1."""
    rng = np.random.default_rng(0)
    rows = []
    for w in ("mv", "md"):
        for p in SWEEP["points"]:
            for g in "ABCD":
                for rep in (0, 1):
                    for rnd in range(8):
                        q = g in "AC"
                        d = (12.0 if q else 1.1) + 0.05 * rng.standard_normal()
                        rows.append(
                            {
                                "sweep": "ratio",
                                "workload": w,
                                "group": g,
                                "point": p["name"],
                                "label": p["label"],
                                "x": p["x"],
                                "round": rnd,
                                "replicate": rep,
                                "warmup": False,
                                "empty": False,
                                "check_ok": True,
                                "M_slowdown": 1.0 + 0.02 * rng.standard_normal(),
                                "V_slowdown": (10.0 if q else 1.05) + 0.05 * rng.standard_normal(),
                                "D_slowdown": d if w == "md" else None,
                            }
                        )
    return pd.DataFrame(rows)


def test_slowdown_separates_queueing_from_sharing(tmp_path, captured):
    trials_frame().to_csv(tmp_path / "t.csv", index=False)
    plots.slowdown_figure(tmp_path / "t.csv", "ratio", SWEEP, [tmp_path / "sd.png"])
    (fig,) = captured
    panels = [a for a in fig.axes if a.has_data()]
    assert len(panels) == 4  # 2 rows (sharing, queueing) x 2 workloads
    rows: dict[float, list] = {}
    for a in panels:
        rows.setdefault(round(a.get_position().y0, 3), []).append(a)
    assert len(rows) == 2
    (bottom, top) = sorted(rows)
    # the sharing row (B, D) keeps its values near 1 readable: nothing of A's
    # or C's ~10x queueing is on its scale; one y scale across the row
    for a in rows[top]:
        assert a.get_ylim()[1] < 2 and a.get_yscale() == "linear"
        assert _joined_lines(a) == []
    assert len({a.get_ylim() for a in rows[top]}) == 1
    for a in rows[bottom]:
        assert a.get_yscale() == "log" and a.get_ylim()[1] > 10
    assert len({a.get_ylim() for a in rows[bottom]}) == 1
    labels = " ".join(a.get_ylabel() for a in fig.axes)
    assert "sharing" in labels and "queueing" in labels
    text = " ".join(t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")))
    assert "two-level bootstrap" in text and "95% CI over rounds" not in text


@pytest.mark.parametrize("kind", ["speedup", "slowdown"])
def test_paper_figures_print_no_text_below_6pt(tmp_path, captured, kind):
    # three workloads: the widest a sweep figure gets
    three = dict(SWEEP, workloads=["mv", "md", "mvd"])
    if kind == "speedup":
        s = summary_frame()
        s = pd.concat([s, s[s["workload"] == "md"].assign(workload="mvd")], ignore_index=True)
        s.to_csv(tmp_path / "s.csv", index=False)
        plots.speedup_figure(tmp_path / "s.csv", "ratio", three, [tmp_path / "f.png"], min_effect=0.03)
    else:
        t = trials_frame()
        t = pd.concat([t, t[t["workload"] == "md"].assign(workload="mvd")], ignore_index=True)
        t.to_csv(tmp_path / "s.csv", index=False)
        plots.slowdown_figure(tmp_path / "s.csv", "ratio", three, [tmp_path / "f.png"])
    (fig,) = captured
    size, text = style.smallest_text_pt(fig)
    assert size >= style.MIN_TEXT_PT, (size, text)
    assert fig.get_size_inches()[0] <= style.TEXT_WIDTH_IN + 1e-6
    # as written (tight bounding box: a legend wider than the axes widens it)
    style.save(fig, [tmp_path / "f.pdf"])
    box = re.search(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ", (tmp_path / "f.pdf").read_bytes())
    assert box and float(box.group(1)) / 72 <= style.TEXT_WIDTH_IN + 0.02


def _pinned_run(rounds: int = 6) -> list[dict]:
    """Group A with the host pinned to V's core (as on the 2-core host): the
    host waits for M, then submits V; its call returns only when V, woken on
    its core, has ended.  Group D beside it.  Times in ns, jittered per round."""
    recs = [meta_record(online_cores=2)]
    t = 1_000_000.0
    for r in range(rounds):
        j = 1_000.0 * r
        a = trial_record(
            round=r,
            workload="mv",
            group="A",
            tasks=[("M", "mx", t + 2_000, t + 100_000), ("V", "vec", t + 105_000, t + 185_000 + j)],
            submit=(t, t + 186_000 + j),
            wait=(t + 1_000, t + 190_000 + j),
            waits=[("host", "M", t + 1_000, t + 101_000), ("host", "V", t + 186_000 + j, t + 190_000 + j)],
            seq=2 * r,
        )
        a["host"]["cpu"] = 1
        for task in a["tasks"]:
            task["cpu_begin"] = task["cpu_end"] = 1 if task["task"] == "V" else 0
        t += 300_000
        d = trial_record(
            round=r,
            workload="mv",
            group="D",
            tasks=[("M", "mx", t + 2_000, t + 100_000 + j), ("V", "vec", t + 2_000, t + 80_000)],
            submit=(t, t + 1_000),
            wait=(t + 1_000, t + 101_000 + j),
            device=(t + 1_000, t + 100_500 + j),
            seq=2 * r + 1,
        )
        d["host"]["cpu"] = 1
        recs += [a, d]
        t += 300_000
    recs.append(end_record(2 * rounds))
    return recs


def test_timeline_shows_spread_and_displaced_submit(tmp_path, captured):
    """A's second submit does not return while V runs on the host's core,
    and the figure draws and names that part; every group's panel gives the
    spread of its makespan over the rounds."""
    from hxfuse.runner.records import read_run

    path = write_jsonl(tmp_path / "run.jsonl", _pinned_run())
    gi = plots.timeline_figure(path, None, "t", [tmp_path / "tl.png"])
    (fig,) = captured
    a = gi[gi["group"] == "A"]
    disp = plots.displaced_parts(a, plots._host_cpus(read_run(path)))
    v = a[(a["kind"] == "task") & (a["name"] == "V")].iloc[0]
    # exactly V's run on the host's core, inside the submit of V
    assert len(disp) == 1 and disp[0] == (v["start_rel_ns"], v["end_rel_ns"])
    assert plots.displaced_parts(gi[gi["group"] == "D"], plots._host_cpus(read_run(path))) == []
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert sum("6 rounds: median" in t for t in titles) == 2
    legend = " ".join(t.get_text() for lg in fig.legends for t in lg.get_texts())
    assert "held the host's core" in legend and "over rounds" in legend
    size, text = style.smallest_text_pt(fig)
    assert size >= style.MIN_TEXT_PT, (size, text)


# a legend asked of a panel with nothing labelled: matplotlib warns and draws none
@pytest.mark.filterwarnings("error:No artists with labels found to put in legend")
def test_family_speedups_draw_the_decision_interval_unjoined(tmp_path, captured, monkeypatch):
    from hxfuse.sweep import family_plots

    monkeypatch.setattr(family_plots, "save", lambda fig, out, dpi=None: captured.append(fig))
    summary_frame().to_csv(tmp_path / "s.csv", index=False)
    cfg = dict(SWEEP, family="share", log_x=False)
    long = family_plots.family_figure(tmp_path / "s.csv", "ratio", cfg, 0.03, [tmp_path / "f.png"])
    (fig,) = captured
    sp = long[long["panel"] == "speedup"]
    assert len(sp) and np.allclose(sp["hi"] - sp["lo"], 0.18)  # the decision interval, not the bootstrap's 0.04
    for ax in fig.axes:
        if ax.get_title().startswith(("mv", "md")):
            assert _joined_lines(ax) == [] and "decision interval" in fig.axes[0].get_ylabel()
    # the paper includes it at the text width: drawn that wide, no text under 6 pt
    assert fig.get_size_inches()[0] <= style.TEXT_WIDTH_IN + 1e-6
    size, text = style.smallest_text_pt(fig)
    assert size >= style.MIN_TEXT_PT, (size, text)


def test_family_legends_stay_in_their_panels_and_titles_apart(tmp_path, captured, monkeypatch):
    """Three workloads at the text width (the default ratio family): a
    secondary panel's legend lies inside its own axes (not over the y label
    and ticks), and no two panel titles run into each other."""
    from hxfuse.sweep import family_plots

    monkeypatch.setattr(family_plots, "save", lambda fig, out, dpi=None: captured.append(fig))
    summary_frame(("mv", "md", "mvd")).to_csv(tmp_path / "s.csv", index=False)
    cfg = dict(SWEEP, family="ratio", workloads=["mv", "md", "mvd"])
    family_plots.family_figure(tmp_path / "s.csv", "ratio", cfg, 0.03, [tmp_path / "f.png"])
    (fig,) = captured
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    legends = [ax for ax in fig.axes[3:] if ax.get_legend() is not None]
    assert legends  # the no-overlap band is named somewhere
    for ax in legends:
        box, frame = ax.get_legend().get_window_extent(r), ax.get_window_extent(r)
        assert frame.x0 - 1 <= box.x0 and box.x1 <= frame.x1 + 1, (ax.get_title(), box, frame)
    titles = [ax.title.get_window_extent(r) for ax in fig.axes if ax.get_title()]
    assert not [(a, b) for i, a in enumerate(titles) for b in titles[i + 1 :] if a.overlaps(b)]
