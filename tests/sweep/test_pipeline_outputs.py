"""Figures and LaTeX from synthetic runner output (no C runner needed)."""

import copy

import pandas as pd
import pytest

from hxfuse.config import validate as hxvalidate
from hxfuse.config import points as hxpoints
from hxfuse.config import targets as hxtargets
from conftest import synthetic_run
from hxfuse.paper import sections
from hxfuse.render import latex
from hxfuse.sweep import plots
from pipeline_util import REPO, TINY, aggregate_synthetic


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("syn")
    cfg = copy.deepcopy(TINY)
    cfg["run"]["replicates"] = 2
    cfg = hxvalidate.validate(cfg)

    def records(p, rep, i):
        d = {"M": 100_000 * p["x"], "V": 80_000, "D": 60_000}
        d = {k: v for k, v in d.items() if k in p["id"].split("/")[1].upper()}
        return synthetic_run(
            d, workloads=(p["id"].split("/")[1],), rounds=8, jitter=0.03, seed=i, group_scale={"D": 0.9}
        )

    def check(p, rep):
        failed = p["id"] == "tiny/md/big" and rep == 1  # one replicate fails its check
        return {
            "status": "failed" if failed else "ok",
            "reasons": ["D.dst: 3 of 100 elements differ"] if failed else [],
        }

    doc = aggregate_synthetic(out, cfg, "host", records, check)
    return out, cfg, doc


def test_failed_point_listed_and_without_speedup(results):
    out, cfg, doc = results
    assert [f["point_id"] for f in doc["failed_points"]] == ["tiny/md/big"]
    s = pd.read_csv(out / "summary.csv")
    bad = s[(s["point_id"] == "tiny/md/big") & (s["group"] == "D")]
    assert bad["speedup_over_A"].isna().all() and not bad["point_ok"].any()
    good = s[(s["point_id"] == "tiny/mv/big") & (s["group"] == "D")]
    assert good["speedup_over_A"].notna().all()


def test_figures_written(results):
    out, cfg, _ = results
    sweep = cfg["sweeps"]["tiny"]
    long = plots.speedup_figure(out / "summary.csv", "tiny", sweep, [out / "sp.pdf", out / "sp.png"])
    assert {"D/A", "D/B", "D/C", "C/A"} <= set(long["comparison"])
    sd = plots.slowdown_figure(out / "trials.csv.gz", "tiny", sweep, [out / "sd.png"])
    assert set(sd["group"]) == {"A", "B", "C", "D"} and "big" not in set(sd[sd["workload"] == "md"]["point"])
    gi = plots.timeline_figure(
        out / "raw/tiny/mvd/small/rep0.jsonl", out / "check/tiny/mvd/small/rep0.json", "t", [out / "tl.png"]
    )
    assert set(gi["group"]) == {"A", "B", "C", "D"} and "host" in set(gi["lane"])
    for f in ("sp.pdf", "sp.png", "sd.png", "tl.png"):
        assert (out / f).stat().st_size > 5000


def test_latex_table_and_macros(results):
    out, cfg, _ = results
    gen = out / "gen"
    gen.mkdir()
    latex.write_all(
        [str(out / "summary.csv")],
        [str(out / "summary.json")],
        str(REPO / "workflow/templates/results_table.tex.j2"),
        cfg["sweeps"],
        str(gen / "t.tex"),
        str(gen / "m.tex"),
        evidence_template=str(REPO / "workflow/templates/evidence_table.tex.j2"),
        out_evidence=str(gen / "e.tex"),
    )
    table = (gen / "t.tex").read_text()
    # two tables (speedups with the verdict, then overlap and cost), each
    # with a rule per workload, at the paper's small font and never scaled
    assert table.count(r"\toprule") == 2 and table.count(r"\midrule") == 6
    assert r"\resizebox" not in table and r"\resizebox" not in (gen / "e.tex").read_text()
    # the verdict once per good row, in words, on the line under it
    lines = table.split(r"\end{table}")[0].splitlines()
    rows = [i for i, l in enumerate(lines) if l.startswith(("mv &", "md &", "mvd &")) and r"\hxspd{" in l]
    assert rows and all(r"\emph{" in lines[i + 1] and "multicolumn{8}" in lines[i + 1] for i in rows)
    assert "D vs B open" not in table
    # the evidence table: one row of slowdowns, host/device split and overlap per good point
    evidence = (gen / "e.tex").read_text()
    assert "<<" not in evidence and r"\label{tab:evidence}" in evidence
    rows = [l for l in evidence.splitlines() if l.startswith(("mv &", "md &", "mvd &"))]
    assert len(rows) == 6 and sum(l.count("&") == 11 for l in rows) == 5
    assert sum(r"\emph{failed correctness check" in l for l in rows) == 1
    assert r"\emph{failed correctness check" in table and "host/tiny/md/big" in table
    # 5 good points x D/A, D/B, D/C, C/A, D/A end to end and parallelism P
    assert table.count(r"\hxspd{") == 5 * 6 and r"D/A\textsubscript{e2e}" in table
    assert "<<" not in table and "<%" not in table
    macros = (gen / "m.tex").read_text()
    assert r"\newcommand{\hxNfailed}{1}" in macros and r"\newcommand{\hxNpoints}{6}" in macros
    assert r"\csname hx@v@host/tiny/mv/small/DA\endcsname" in macros
    assert r"\csname hx@v@host/tiny/mv/small/DAe2e\endcsname" in macros
    figs = sections.figures_tex(["host"], cfg["sweeps"], [], {}, 0.03)
    assert "../results/host/figures/speedup_tiny.pdf" in figs


def test_tex_escape():
    assert latex.tex_escape("a_b&c%") == r"a\_b\&c\%"
    assert latex.verdict_tex("D<C+overlap") == "D$<$C + overlap"
    # one escaper: the family figures' captions (hxfuse.sweep.families, which the
    # aggregation imports) escape exactly as the tables do, < and > included
    from hxfuse.sweep import families

    assert families.tex_escape is latex.tex_escape
    assert families.tex_escape("T_M < T_V > 0") == r"T\_M \textless{} T\_V \textgreater{} 0"


@pytest.fixture(scope="module")
def emulated_results(tmp_path_factory):
    """Synthetic results of an emulated target (meta.emulated, as hexagon-qemu writes)."""
    out = tmp_path_factory.mktemp("emu")
    cfg = copy.deepcopy(TINY)
    cfg["targets"] = ["hexagon-qemu"]
    cfg["target_settings"] = {"hexagon-qemu": {"params": {"precision": "u8i8"}, "run": {"replicates": 1}}}
    cfg = hxvalidate.validate(cfg)
    mapping = {g: f"group {g} on the emulator" for g in "ABCD"}

    def records(p, rep, i):
        w = p["id"].split("/")[1]
        d = {k: v for k, v in {"M": 100_000, "V": 80_000, "D": 60_000}.items() if k in w.upper()}
        return synthetic_run(
            d,
            workloads=(w,),
            rounds=6,
            jitter=0.03,
            seed=i,
            group_scale={"D": 0.7},
            meta={"emulated": True, "target": "hexagon-qemu"},
        )

    doc = aggregate_synthetic(
        out,
        cfg,
        "hexagon-qemu",
        records,
        prov_extra={"compiler": "zig", "runner_env": {"emulated": True, "group_mapping": mapping}},
    )
    return out, cfg, doc


def test_emulated_summary_has_no_verdicts(emulated_results):
    out, cfg, doc = emulated_results
    s = pd.read_csv(out / "summary.csv")
    assert s["emulated"].all()
    d = s[s["group"] == "D"]
    assert set(d["verdict"]) == {"not assessed (emulated)"} and set(d["verdict_key"]) == {"emulated"}
    assert set(s.loc[s["group"] == "B", "group_mapping"]) == {"group B on the emulator"}
    assert doc["emulated"] is True and doc["group_mapping"]["B"] == "group B on the emulator"
    assert "dspqueue" in doc["group_b_backend"]


def test_host_summary_is_not_emulated(results):
    out, cfg, doc = results
    s = pd.read_csv(out / "summary.csv")
    assert not s["emulated"].any() and doc["emulated"] is False
    assert s.loc[s["group"] == "D", "verdict"].ne("not assessed (emulated)").all()


def test_emulated_target_in_latex_and_figures(results, emulated_results):
    host_out, cfg, _ = results
    emu_out, emu_cfg, _ = emulated_results
    gen = emu_out / "gen"
    gen.mkdir()
    latex.write_all(
        [str(host_out / "summary.csv"), str(emu_out / "summary.csv")],
        [str(host_out / "summary.json"), str(emu_out / "summary.json")],
        str(REPO / "workflow/templates/results_table.tex.j2"),
        cfg["sweeps"],
        str(gen / "t.tex"),
        str(gen / "m.tex"),
        evidence_template=str(REPO / "workflow/templates/evidence_table.tex.j2"),
        out_evidence=str(gen / "e.tex"),
    )
    table = (gen / "t.tex").read_text()
    assert table.count("correct (emulated, timings not performance)") == 2 * 6  # in both results tables
    evidence = (gen / "e.tex").read_text()
    assert evidence.count("correct (emulated, timings not performance)") == 6
    assert not any(l.startswith("hexagon-qemu &") and l.count("&") > 3 for l in evidence.splitlines())
    assert table.count(r"\hxspd{") == 5 * 6  # the host's good points only
    assert r"\textbf{EMULATED}" in table
    for line in table.splitlines():
        if line.startswith("hexagon-qemu &"):
            assert r"\hxspd" not in line and "verdict" not in line and "overlap" not in line
    macros = (gen / "m.tex").read_text()
    assert "hx@v@hexagon-qemu" not in macros and "HexagonQemu" not in macros
    figs = sections.figures_tex(["host", "hexagon-qemu"], cfg["sweeps"], [], {}, 0.03)
    assert "results/hexagon-qemu/figures/speedup" not in figs and "results/host/figures/speedup_tiny" in figs
    # asked directly, the sweep figures of an emulated target draw only a notice
    long = plots.speedup_figure(emu_out / "summary.csv", "tiny", emu_cfg["sweeps"]["tiny"], [emu_out / "sp.png"])
    assert long.empty and (emu_out / "sp.png").stat().st_size > 1000
    sd = plots.slowdown_figure(emu_out / "trials.csv.gz", "tiny", emu_cfg["sweeps"]["tiny"], [emu_out / "sd.png"])
    assert sd.empty
    gi = plots.timeline_figure(
        emu_out / "raw/tiny/mvd/small/rep0.jsonl",
        emu_out / "check/tiny/mvd/small/rep0.json",
        "hexagon-qemu: tiny / mvd / small",
        [emu_out / "tl.png"],
    )
    assert set(gi["group"]) == {"A", "B", "C", "D"} and (emu_out / "tl.png").stat().st_size > 5000


def test_replicates_in_trials_and_summary(results):
    out, cfg, doc = results
    t = pd.read_csv(out / "trials.csv.gz")
    assert t["replicate"].dtype.kind == "i"
    assert sorted(t["replicate"].unique()) == [0, 1]
    assert set(t.groupby("point_id")["replicate"].nunique()) == {2}
    assert doc["replicates"] == {pid: 2 for pid in t["point_id"].unique()}
    # one failed replicate fails its point, with the replicate named
    assert [(f["point_id"], f["reason"]) for f in doc["failed_points"]] == [
        ("tiny/md/big", "rep1: D.dst: 3 of 100 elements differ")
    ]
    assert not t.loc[t["point_id"] == "tiny/md/big", "check_ok"].any()
    assert doc["provenance"]["config_hash"] == hxpoints.config_hash(cfg)
    prov = doc["provenance"]
    assert set(prov["points"]) == set(doc["replicates"])  # keyed by point id (environment page)
    assert len(prov["replicate_sidecars"]) == 2 * len(prov["points"])
    assert prov["replicate_sidecars"]["tiny/mv/big/rep1"]["replicate"] == 1


def test_aggregation_refuses_a_raw_file_changed_after_the_run(tmp_path):
    """A raw file whose SHA-256 differs from its sidecar (one digit of a time
    flipped after the run) stops aggregation, naming the file.  At 50ee96f the
    changed time went silently into the trials table."""
    cfg = copy.deepcopy(TINY)
    cfg["run"]["replicates"] = 1
    cfg["sweeps"]["tiny"]["workloads"] = ["mv"]
    cfg = hxvalidate.validate(cfg)

    def records(p, rep, i):
        return synthetic_run({"M": 100_000, "V": 80_000}, workloads=("mv",), rounds=3, seed=i)

    aggregate_synthetic(tmp_path, cfg, "host", records)
    raw = tmp_path / "raw/tiny/mv/big/rep0.jsonl"
    text = raw.read_text()
    i = text.index('"end": ', text.index('"record": "trial"')) + len('"end": ')
    raw.write_text(text[: i + 2] + ("1" if text[i + 2] != "1" else "2") + text[i + 3 :])
    from hxfuse.runner import integrity
    from hxfuse.sweep.pipeline import aggregate_target

    pts = hxpoints.aggregate_points(cfg, "host")
    ids = [p["id"] for p in pts]
    with pytest.raises(integrity.IntegrityError, match=rf"{raw}: SHA-256 differs from its provenance"):
        aggregate_target(
            "host",
            pts,
            [str(tmp_path / f"raw/{i}/rep0.jsonl") for i in ids],
            [str(tmp_path / f"check/{i}/rep0.json") for i in ids],
            [str(tmp_path / f"raw/{i}/rep0.provenance.json") for i in ids],
            None,
            cfg["analysis"],
            cfg["check"],
            "h",
            hxtargets.info("host"),
            str(tmp_path / "t.csv.gz"),
            str(tmp_path / "s.csv"),
            str(tmp_path / "s.json"),
        )


def test_an_undetermined_reason_is_printed_whole_or_cut_at_a_word():
    from hxfuse.render.latex import REASON_CHARS, verdict_words

    busy = (
        "D/C: machine busy: interference could shift its median by up to 1.1%, "
        "which widens [0.990, 1.022] across the margin [0.971, 1.030]"
    )
    row = {"verdict": "undetermined (machine busy)", "verdict_key": "undetermined", "inconclusive_reason": busy}
    # a reason as the analysis words it ends as it does (at 23b148d it was
    # cut at 110 characters, mid-word: "across th...")
    assert verdict_words(row).endswith("the margin [0.971, 1.030]")
    long = " ".join(["widening"] * 60)
    cut = verdict_words({**row, "inconclusive_reason": long})
    first = cut.split(": ", 1)[1]
    assert first.endswith("widening...") and len(first) <= REASON_CHARS
