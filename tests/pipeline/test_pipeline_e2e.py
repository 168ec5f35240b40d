"""End to end: the real pipeline on a tiny config in a temporary directory.

One module-scoped run (build, deploy, run, check, aggregate, figures, table)
on a copy of the workflow and its sources is shared by the assertions; each
later step (dry run, forced point, edited code) works on the same directory
in order.
"""

import copy
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipeline_util import REPO, TINY, job_counts, snakemake as _snakemake, write_config

pytestmark = pytest.mark.skipif(
    not shutil.which("make") or not shutil.which("cc"),
    reason="needs make and a C compiler: apt-get install build-essential",
)

POINTS = [f"tiny/{w}/{p}" for w in ("mv", "md", "mvd") for p in ("small", "big")]
REPS = [f"{p}/rep{r}" for p in POINTS for r in (0, 1)]  # TINY: 2 replicates


@pytest.fixture(scope="module")
def work(tiny_run, tmp_path_factory):
    """A copy of the shared finished tiny run (its own workflow copy, so the
    tests below may edit code in it)."""
    wd = tmp_path_factory.mktemp("pipe") / "wd"
    shutil.copytree(tiny_run, wd, symlinks=True)
    return wd


def snakemake(workdir, *args, **kw):
    """Snakemake with the copied workflow when there is one in workdir."""
    snakefile = workdir / "Snakefile"
    return _snakemake(workdir, *args, snakefile=snakefile if snakefile.exists() else None, **kw)


def test_every_point_produced_and_checked(work):
    for rid in REPS:
        raw = work / "results/host/raw" / f"{rid}.jsonl"
        assert raw.is_file()
        end = json.loads(raw.read_text().splitlines()[-1])
        assert end["record"] == "end" and end["digest"].startswith("fnv1a64:")
        prov = json.loads((work / "results/host/raw" / f"{rid}.provenance.json").read_text())
        for key in (
            "git_commit",
            "git_dirty",
            "compiler",
            "target",
            "runner_env",
            "point_hash",
            "runner_sha256",
            "raw_sha256",
            "replicate",
        ):
            assert key in prov, key
        assert prov["target"] == "host" and prov["runner_env"]["cpu_model"]
        # replicate r runs with seed run.seed + r (TINY: seed 3)
        rep = int(rid[-1])
        assert prov["replicate"] == rep
        assert prov["runner_args"][prov["runner_args"].index("--seed") + 1] == str(3 + rep)
        assert set(prov["raw_sha256"]) > {"jsonl"}  # and every .npy
        check = json.loads((work / "results/host/check" / f"{rid}.json").read_text())
        assert check["status"] == "ok" and check["integrity"] == "ok", check["reasons"]
        assert check["sidecar_sha256"] == "ok"  # the arrays' hashes, compared before they went
    assert not list((work / "results").rglob("*.work")), "no work directories may remain"
    # the verification arrays of the sweeps, graphs and service runs are
    # deleted once their checks have run (temp; docs/outputs.md)
    assert not list((work / "results").rglob("*.npy")), "arrays kept after their check"


def test_summary_table_and_figures(work):
    s = pd.read_csv(work / "results/host/summary.csv")
    d = s[s["group"] == "D"]
    assert sorted(d["point_id"]) == sorted(POINTS)
    assert d["speedup_over_A"].notna().all() and (d["speedup_over_A_lo"] <= d["speedup_over_A_hi"]).all()
    t = pd.read_csv(work / "results/host/trials.csv.gz")
    assert set(t["group"]) >= {"A", "B", "C", "D", "alone"} and t["check_ok"].all()
    assert set(t["replicate"]) == {0, 1}
    doc = json.loads((work / "results/host/summary.json").read_text())
    assert doc["failed_points"] == [] and doc["n_points"] == 6
    assert doc["replicates"] == {p: 2 for p in POINTS}
    assert doc["provenance"]["config_hash"] and "git_commit" in doc["provenance"]
    for ext in ("pdf", "png"):
        for pid in POINTS:
            assert (work / f"results/host/figures/timeline/{pid}.{ext}").stat().st_size > 1000
        for kind in ("speedup", "slowdown", "family"):
            assert (work / f"results/host/figures/{kind}_tiny.{ext}").stat().st_size > 1000
    # the family figure is in the paper's list, and the control overhead as a
    # share of the makespan is in the summary (A-D rows)
    fams = (work / "paper/generated/families.tex").read_text()
    assert "figures/family_tiny.pdf" in fams and "granularity family" in fams
    abcd = s[s["group"].isin(["A", "B", "C", "D"])]
    share = abcd["control_overhead_share"]
    assert share.notna().all() and (share > 0).all()
    assert (abs(share - abcd["control_overhead_ns"] / abcd["makespan_ns"]) < 1e-12).all()
    table = (work / "paper/generated/results_table.tex").read_text()
    assert (
        r"\toprule" in table and r"\bottomrule" in table and table.count(r"\hxspd{") == 6 * 6
    )  # 6 points x D/A, D/B, D/C, C/A, D/A end to end and parallelism
    macros = (work / "paper/generated/results_macros.tex").read_text()
    assert r"\newcommand{\hxNpoints}{6}" in macros and r"\hxMedianDAmvd" in macros
    # `all` writes the paper's generated sections too (not the PDF: rule `paper`)
    answers = (work / "paper/generated/answers.tex").read_text()
    assert r"\newcommand{\hxAnswerA}" in answers and "End to end" in answers
    assert (work / "results/host/mechanism.json").is_file() and (work / "paper/generated/mechanism.tex").is_file()
    assert not (work / "paper/main.pdf").exists()


def test_second_run_has_nothing_to_do(work):
    res = snakemake(work, "-n", "all")
    assert res.returncode == 0
    assert "Nothing to be done" in res.stdout + res.stderr


def test_html_report_builds_with_every_category(work):
    """`snakemake --report` is how a reader browses a run: every captioned
    output must be found and its caption must render (a missing caption file
    or a figure declared `report()` but never made fails here, not for the
    user)."""
    res = snakemake(work, "--report", "report.html")
    assert res.returncode == 0, res.stderr[-3000:]
    html = (work / "report.html").read_text(errors="replace")
    assert len(html) > 100_000
    for category in ("Verdicts", "Environment", "Timelines", "Speedup", "Slowdown", "Families", "Perfetto traces"):
        assert category in html, category
    # the run itself is untouched by building the report
    assert "Nothing to be done" in (lambda r: r.stdout + r.stderr)(snakemake(work, "-n", "all"))


def test_forcing_one_replicate_reruns_it_and_downstream_only(work):
    target = "results/host/raw/tiny/md/big/rep1.jsonl"
    before = {r: (work / "results/host/raw" / f"{r}.jsonl").stat().st_mtime_ns for r in REPS}
    res = snakemake(work, "-f", target, "all")
    assert res.returncode == 0, res.stderr[-3000:]
    counts = job_counts(res.stdout + res.stderr)
    assert counts.get("run") == 1 and counts.get("check") == 1, counts
    assert counts.get("aggregate") == 1, counts
    # the timeline and trace are drawn from replicate 0: not redrawn
    assert "figure_timeline" not in counts and "perfetto" not in counts, counts
    assert "build" not in counts and "deploy" not in counts, counts
    after = {r: (work / "results/host/raw" / f"{r}.jsonl").stat().st_mtime_ns for r in REPS}
    assert [r for r in REPS if after[r] != before[r]] == ["tiny/md/big/rep1"]
    assert "Nothing to be done" in (lambda r: r.stdout + r.stderr)(snakemake(work, "-n", "all"))


def test_changing_one_point_reruns_that_point_only(work):
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][0]["v_passes"] = 2  # point "small", all workloads
    write_config(work, cfg)
    try:
        res = snakemake(work, "-n", "all")
        counts = job_counts(res.stdout + res.stderr)
        assert counts.get("run") == 6, counts  # mv, md, mvd of point small, 2 replicates
        assert "build" not in counts
    finally:
        write_config(work, copy.deepcopy(TINY))


def test_plot_code_change_reruns_figures_not_trials(work):
    plots = work / "hxfuse" / "sweep" / "plots.py"
    original = plots.read_text()
    try:
        plots.write_text(original + "\n# an edit to the plotting code\n")
        counts = job_counts((lambda r: r.stdout + r.stderr)(snakemake(work, "-n", "all")))
        assert counts.get("figure_timeline") == 6 and counts.get("figure_speedup") == 1, counts
        assert counts.get("figure_slowdown") == 1 and counts.get("table") == 1, counts
        assert not {"build", "deploy", "run", "check", "aggregate"} & set(counts), counts
        counts = job_counts((lambda r: r.stdout + r.stderr)(snakemake(work, "-n", "all", "-R", "figure_speedup")))
        assert "run" not in counts
    finally:
        plots.write_text(original)


def test_hung_runner_is_killed_and_leaves_nothing(tmp_path):
    """A sub-second timeout is honoured (at 50ee96f `int(0.5)` made it 0, i.e.
    no limit, and the 3 s busy task ran its 2 rounds to the end)."""
    cfg = copy.deepcopy(TINY)
    cfg["run"].update({"timeout_s": 0.5, "rounds": 2, "warmup": 0, "replicates": 1})
    cfg["sweeps"] = {
        "hang": {
            "workloads": ["mv"],
            "points": [
                {"name": "stuck", "x": 1, "calibrate": {"M": 3_000_000, "V": 10.5}},  # 3 s busy task
                {"name": "fine", "x": 2},
            ],
        }
    }
    write_config(tmp_path, cfg)
    res = snakemake(
        tmp_path,
        "--keep-going",
        "results/host/check/hang/mv/stuck/rep0.json",
        "results/host/check/hang/mv/fine/rep0.json",
    )
    assert res.returncode != 0
    out = res.stdout + res.stderr
    msg = (
        "hxfuse: point host/hang/mv/stuck/rep0 FAILED: runner timed out after 0.5 s "
        "(config run.timeout_s) and was killed"
    )
    assert msg in out
    log = (tmp_path / "logs/host/run/hang/mv/stuck/rep0.log").read_text()
    assert msg in log
    assert not (tmp_path / "results/host/raw/hang/mv/stuck/rep0.jsonl").exists()
    assert not (tmp_path / "results/host/npy/hang/mv/stuck/rep0").exists()
    assert not list((tmp_path / "results").rglob("*.work"))
    assert json.loads((tmp_path / "results/host/check/hang/mv/fine/rep0.json").read_text())["status"] == "ok"


def test_bad_config_stops_before_any_job(tmp_path):
    cfg = copy.deepcopy(TINY)
    cfg["run"]["rounds"] = 0
    cfg["run"]["colour"] = "red"
    write_config(tmp_path, cfg)
    res = snakemake(tmp_path, "all")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "config.run.rounds: 0 is less than the minimum of 1" in out
    assert "config.run: unknown key(s) 'colour'" in out
    assert not (tmp_path / "results").exists()


# Which rules run each hxfuse module, read off the scripts' imports (and their
# modules' imports, function-level ones included) by hand: a known answer, so
# that the derived dependencies (hxfuse/deps.py) are checked, not restated.
# (ort_figure_timeline and ort_perfetto: ONNX Runtime's timelines, the same
# scripts as figure_timeline and perfetto)
FIG = {"figure_timeline", "ort_figure_timeline", "figure_speedup", "figure_slowdown", "figure_family"}
ANALYSIS = {"aggregate", "perfetto", "ort_perfetto", "report_tables"} | FIG
# the ONNX Runtime comparison (workflow/rules/external.smk): the harness, the
# per-point comparison and its concatenation, the LaTeX table
COMPARE = {"external_point", "external"}
# the paper's generated sections (part of `all` where the host runs; the
# PDF, rule `paper`, is not)
PAPER = {"paper_sections", "figure_evidence"}
# workload 4, the task graphs (workflow/rules/graph.smk)
GRAPH = {
    "graph_build",
    "graph_run",
    "graph_check",
    "graph_summary",
    "graph_figure_profile",
    "graph_figure_speedup",
    "graph_figure_timeline",
    "graph_table",
}
# the service mode (workflow/rules/serve.smk; serve_run, the run wrapper's, is
# listed with the runner modules)
SERVE = {"serve_trace", "serve_check", "serve_summary", "serve_figures", "serve_table"}
# fixed vs searched (workflow/rules/search.smk, not part of `all`): the
# candidates and the confirmation run the runner like `run`; the analysis
# rules check, choose, compute regret, draw and tabulate
SEARCH_RUN = {"search_run", "search_confirm"}
SEARCH_ANALYSIS = {"search_select", "search_result", "figure_search", "search_table"}
NOT_IN_ALL = SEARCH_RUN | SEARCH_ANALYSIS
# every job script that reads intermediate files, through hxfuse.intermediate
# (not the jobs that measure or build what a measurement reads)
INTERMEDIATE = (
    ANALYSIS
    | COMPARE
    | PAPER
    | SERVE - {"serve_trace"}
    | GRAPH - {"graph_build", "graph_run"}
    | SEARCH_ANALYSIS
    | {"table", "external_table", "families_tex"}
)
RULES_OF_MODULE = {
    "__init__": {"run", "check", "deploy", "table", "ort_run", "external_table", "families_tex"}
    | ANALYSIS
    | COMPARE
    | PAPER
    | {"mechanism"}
    | NOT_IN_ALL
    | SERVE
    | {"serve_run"}
    | GRAPH,
    "analysis/aggregate": {"aggregate"},
    # the one reading of the machine's load: aggregate and every study that
    # judges a loaded machine (the ONNX Runtime comparison, the search's
    # confirmation, graphs, the service mode); and the mechanism checks,
    # whose steal premise is its MAX_STEAL_SHARE (the paper's sections
    # and the evidence figure import the checks' table)
    "analysis/environment": {"aggregate", "graph_summary", "graph_figure_timeline", "serve_check", "serve_summary"}
    | COMPARE
    | SEARCH_ANALYSIS
    | {"mechanism"}
    | PAPER,
    "paper/answers": PAPER,
    "runner/checks": {"check", "ort_run", "serve_check", "graph_check"} | SEARCH_ANALYSIS,
    # the Snakefile's; no job script imports them (the rules pass what they
    # need as params)
    **{
        f"config/{m}": set()
        for m in (
            "__main__",
            "cli",
            "load",
            "params",
            "points",
            "preflight",
            "remote",
            "schema",
            "semantics",
            "validate",
        )
    },
    # the table of hxrun's options: the ONNX Runtime harness's parser takes
    # hxrun's defaults and least values from it
    "runner/cli": {"ort_run"},
    "deps": set(),
    "scheduler_exit": set(),  # the Snakefile's exit hooks, by no script
    "intermediate": INTERMEDIATE,
    "external/compare": COMPARE,
    "external/gaps": COMPARE,
    "sweep/families": {"aggregate", "figure_family", "families_tex"},
    "graph/check": {"graph_check"},
    "graph/plots": {"graph_figure_profile", "graph_figure_speedup", "graph_figure_timeline"},
    "graph/profile": {"graph_summary", "graph_figure_profile"},
    "graph/build": {"graph_build", "graph_summary", "graph_figure_profile"},
    "graph/stats": {"graph_summary", "graph_figure_timeline"},
    "graph/study": set(),  # the Snakefile's validation only
    "graph/table": {"graph_table"},
    "sweep/family_plots": {"figure_family"},
    "runner/integrity": {
        "run",
        "check",
        "aggregate",
        "ort_run",
        "serve_run",
        "serve_check",
        "serve_summary",
        "graph_run",
        "graph_check",
        "graph_summary",
    }
    | SEARCH_RUN
    | SEARCH_ANALYSIS
    | INTERMEDIATE,
    "analysis/intervals": ANALYSIS | COMPARE | PAPER | {"mechanism"},
    # the raw-file reader: the ONNX Runtime harness reads the runner's raw
    # file of the point with it to match its durations (measurement code)
    "runner/records": ANALYSIS | COMPARE | SEARCH_ANALYSIS | {"ort_run"},
    # the one reader of runner output: the run wrapper reads the meta with it
    # (through provenance), so like integrity it is measurement code
    "runner/jsonl": {"run", "deploy", "check", "ort_run", "mechanism", "serve_run", "serve_check", "graph_run"}
    | {"graph_check", "serve_summary", "graph_summary", "graph_figure_timeline"}
    | ANALYSIS
    | COMPARE
    | PAPER
    | SEARCH_RUN
    | SEARCH_ANALYSIS
    | INTERMEDIATE,
    "render/latex": {"table", "external_table", "serve_table", "graph_table", "search_table"} | PAPER,
    "runner/mechanism": PAPER | {"mechanism"},
    "analysis/metrics": ANALYSIS | COMPARE,
    # imported by metrics (and timeline)
    "analysis/progress": ANALYSIS | COMPARE,
    # the vocabulary (tasks, workloads, groups, pairs, V defaults)
    "model": ANALYSIS | COMPARE | {"ort_run", "families_tex", "graph_summary", "graph_figure_timeline"},
    "external/ort": {"ort_run"},
    "external/ort_point": {"ort_run"},
    "external/ort_inputs": {"ort_run"},
    "external/ort_graphs": {"ort_run"},
    "external/ort_checks": {"ort_run"},
    "external/ort_sessions": {"ort_run"},
    "external/ort_engines": {"ort_run"},
    "external/ort_profile": {"ort_run"},
    "external/ort_records": {"ort_run"},
    "external/ort_harness": {"ort_run"},
    "external/ort_qnn": {"ort_run"},
    "external/ort_match": {"ort_run"},
    "paper/sections": PAPER,
    "paper/workloads": PAPER,
    "paper/prose": PAPER,
    "paper/graph_section": PAPER,
    "paper/serve_section": PAPER,
    "paper/search_section": PAPER,
    "sweep/pipeline": {"aggregate"},
    "sweep/plots": FIG,
    # the one plot style: every rule that draws a figure
    "render/style": FIG
    | PAPER
    | {"figure_search", "graph_figure_profile", "graph_figure_speedup", "graph_figure_timeline", "serve_figures"},
    "runner/provenance": {"run", "deploy", "aggregate", "graph_run", "serve_run"} | SEARCH_RUN,
    "sweep/report": {"report_tables"},
    # the run wrapper: every rule that runs a runner but the ONNX Runtime harness
    "runner/runpoint": {"run", "graph_run", "serve_run"} | SEARCH_RUN,
    "search/compare": SEARCH_ANALYSIS,
    "search/plots": {"figure_search"},
    "search/confirm": SEARCH_RUN,
    "search/space": set(),  # imported by the config's validation, which no job script runs
    # the first-day ladder's reading (the selftest rule's script)
    "runner/selftest": {"selftest_target"},
    "runner/sources": set(),  # the build rules' inputs (make print-SOURCES-*), by no script
    "serve/stats": {"serve_check", "serve_summary"},
    "serve/check": {"serve_check"},
    "serve/config": set(),  # read by the workflow itself (serve_common.smk), by no script
    "serve/table": {"serve_table"},
    "serve/plots": {"serve_figures"},
    "serve/trace": {"serve_trace", "serve_check"},
    # the intervals every figure and table prints are log-ratio intervals
    # decided there (the figures' and tables' one interval per relation)
    "analysis/stats": {"aggregate", "serve_check", "serve_summary", "graph_summary", "graph_figure_timeline"}
    | {"table", "external_table", "graph_table", "serve_table"}
    | FIG
    | COMPARE
    | SEARCH_ANALYSIS
    | PAPER,
    "config/targets": {"aggregate", "report_tables", "table", "external_table", "serve_table", "graph_table"}
    | {"serve_check", "serve_summary", "graph_summary", "graph_figure_timeline"}
    | FIG
    | COMPARE
    | PAPER
    | SEARCH_ANALYSIS
    | {"mechanism"},  # through analysis/environment
    # the one LaTeX escaper: whatever imports latex or families
    "render/tex": {
        "aggregate",
        "figure_family",
        "families_tex",
        "table",
        "external_table",
        "serve_table",
        "graph_table",
    }
    | {"search_table"}
    | PAPER,
    "analysis/timeline": FIG | {"perfetto", "ort_perfetto"},
    # the rule table: rendering reads which rows state D against B from it
    "analysis/verdicts": {"aggregate", "graph_summary", "graph_figure_timeline"}
    | {"table", "external_table", "graph_table", "serve_table", "search_table"}
    | COMPARE
    | PAPER,
    # is B concurrent? (the summary's group_b_concurrency)
    "analysis/transport": {"aggregate"},
    # the evidence figures and their data
    "render/evidence": PAPER,
    # measure, don't veto: the run wrapper's wait for a quiet machine and reruns
    "runner/quiet": {"run", "graph_run", "serve_run"} | SEARCH_RUN,
    # the GPU target's probes: the Snakefile's preflight, no job script
    "config/gpu": set(),
    # generates kernels/hxrun/options.h from the option table (make), no job script
    "runner/cli_c": set(),
}


# Which rules consume each rule's outputs (the workflow's DAG, by hand).
CONSUMERS = {
    "deploy": {"run"},
    # ort_run: the ONNX Runtime harness matches its durations to the runner replicate's
    "run": {"check", "aggregate", "figure_timeline", "perfetto", "external_point", "ort_run"},
    "check": {"aggregate", "figure_timeline", "perfetto"},
    "aggregate": {
        "figure_speedup",
        "figure_slowdown",
        "figure_family",
        "report_tables",
        "table",
        "figure_evidence",
        "paper_sections",
    },
    "figure_timeline": {"table", "paper_sections"},
    "figure_speedup": {"table", "paper_sections"},
    "figure_slowdown": {"table", "paper_sections"},
    "figure_family": {"families_tex"},
    "figure_evidence": {"paper_sections"},
    "mechanism": {"paper_sections"},
    "ort_run": {"external_point", "ort_figure_timeline", "ort_perfetto"},
    "external_point": {"external"},
    "external": {"external_table", "paper_sections"},
    "external_table": {"paper_sections"},
    "serve_build": {"serve_run"},
    "serve_trace": {"serve_run", "serve_check"},
    "serve_run": {"serve_check", "serve_summary"},
    "serve_check": {"serve_summary"},
    "serve_summary": {"serve_figures", "serve_table", "paper_sections"},
    "serve_figures": {"paper_sections"},
    "serve_table": {"paper_sections"},
    "graph_build": {"graph_run", "graph_check", "graph_summary", "graph_figure_profile"},
    "graph_run": {"graph_check", "graph_summary", "graph_figure_timeline"},
    "graph_check": {"graph_summary", "graph_figure_timeline"},
    "graph_summary": {"graph_figure_speedup", "graph_table", "paper_sections"},
    "graph_figure_profile": {"paper_sections"},
    "graph_figure_speedup": {"paper_sections"},
    "graph_table": {"paper_sections"},
}


def _rules_of_module() -> dict[str, set[str]]:
    """The table, with each subpackage's ``__init__``: importing any of its
    modules runs it, so its rules are theirs together."""
    out = dict(RULES_OF_MODULE)
    for mod, rules in RULES_OF_MODULE.items():
        if "/" in mod:
            out.setdefault(mod.rsplit("/", 1)[0] + "/__init__", set()).update(rules)
    return out


# A check's .npy input is temp (deleted once it has run: docs/outputs.md), so
# a check that reruns reruns the measurement that writes its arrays.
REMEASURED_BY = {"check": "run", "graph_check": "graph_run", "serve_check": "serve_run"}


def downstream(rules):
    out, todo = set(rules), list(rules)
    while todo:
        rule = todo.pop()
        for c in [*CONSUMERS.get(rule, ()), *([REMEASURED_BY[rule]] if rule in REMEASURED_BY else [])]:
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def test_derived_code_dependencies_match_the_imports():
    """hxfuse.deps gives each rule's script exactly the modules of the table."""
    from hxfuse import deps

    script_of = {
        "run": "run_point",
        "check": "check",
        "deploy": "deploy",
        "table": "table",
        "aggregate": "aggregate",
        "perfetto": "perfetto",
        "report_tables": "report_tables",
        "figure_timeline": "figure_timeline",
        "figure_speedup": "figure_speedup",
        "ort_figure_timeline": "figure_timeline",
        "ort_perfetto": "perfetto",
        "figure_slowdown": "figure_slowdown",
        "ort_run": "ort_run",
        "external_point": "external_point",
        "external": "external_concat",
        "external_table": "external_table",
        "paper_sections": "paper_sections",
        "figure_evidence": "figure_evidence",
        "mechanism": "mechanism",
        "figure_family": "figure_family",
        "families_tex": "families_tex",
        "search_run": "search_run",
        "search_select": "search_select",
        "search_confirm": "search_confirm",
        "search_result": "search_result",
        "figure_search": "figure_search",
        "search_table": "search_table",
        "graph_build": "graph_build",
        "graph_run": "run_point",
        "serve_run": "run_point",
        "graph_check": "graph_check",
        "graph_summary": "graph_summary",
        "graph_figure_profile": "graph_figure_profile",
        "graph_figure_speedup": "graph_figure_speedup",
        "graph_table": "graph_table",
        "graph_figure_timeline": "graph_figure_timeline",
        **{r: r for r in SERVE},
    }
    for rule, script in script_of.items():
        got = {
            str(Path(m).relative_to(REPO / "hxfuse"))[: -len(".py")]
            for m in deps.script_modules(REPO / "workflow" / "scripts" / f"{script}.py")
        }
        want = {m for m, rules in _rules_of_module().items() if rule in rules}
        assert got == want, (rule, got ^ want)


def test_touching_a_module_replans_exactly_the_rules_that_import_it(work):
    """Editing a module plans the rules that import it and what consumes their
    outputs, nothing else.  At 50ee96f each rule listed its modules by hand
    and the lists were incomplete: editing hxfuse/analysis/timeline.py reran the
    Perfetto traces but not the timeline figures."""
    import os

    mods = sorted(str(p.relative_to(work / "hxfuse"))[: -len(".py")] for p in (work / "hxfuse").rglob("*.py"))
    assert sorted(_rules_of_module()) == mods, "a new module: add the rules that import it"
    # every module's rule set is checked against hxfuse.deps without Snakemake
    # (test_derived_code_dependencies_match_the_imports); here a dry run per
    # module of each kind shows the workflow uses them (2-3 s per dry run)
    for mod in ("analysis/timeline", "config/targets", "runner/integrity", "runner/runpoint", "sweep/report"):
        # an edit, not a bare touch: Snakemake compares a newer input's
        # checksum with the one it recorded and ignores a touch
        path = work / "hxfuse" / f"{mod}.py"
        original, st = path.read_text(), path.stat()
        path.write_text(original + "\n# an edit\n")
        try:
            res = snakemake(work, "-n", "all")
        finally:
            path.write_text(original)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        planned = set(job_counts(res.stdout + res.stderr)) - {"all"}
        assert planned == downstream(_rules_of_module()[mod]) - NOT_IN_ALL, (mod, planned)
    assert "Nothing to be done" in (lambda r: r.stdout + r.stderr)(snakemake(work, "-n", "all"))


def test_changing_a_label_reruns_summary_figures_table_not_runs(work):
    """At 50ee96f the summary kept the old label and x and the paper the old
    \\hxConfigHash: the aggregate script read the config, not its params."""
    cfg = copy.deepcopy(TINY)
    cfg["sweeps"]["tiny"]["points"][1]["label"] = "a renamed point"
    cfg["sweeps"]["tiny"]["points"][1]["x"] = 3
    write_config(work, cfg)
    try:
        res = snakemake(work, "all")
        assert res.returncode == 0, res.stderr[-3000:]
        counts = job_counts(res.stdout + res.stderr)
        assert {"aggregate", "figure_speedup", "figure_slowdown", "table", "report_tables"} <= set(counts)
        assert not {"run", "check", "build", "deploy", "figure_timeline", "perfetto"} & set(counts), counts
        s = pd.read_csv(work / "results/host/summary.csv")
        big = s[s["point"] == "big"]
        assert set(big["label"]) == {"a renamed point"} and set(big["x"]) == {3}
        from hxfuse.config import validate as hxvalidate
        from hxfuse.config import points as hxpoints

        new_hash = hxpoints.config_hash(hxvalidate.validate(copy.deepcopy(cfg)))
        assert json.loads((work / "results/host/summary.json").read_text())["provenance"]["config_hash"] == new_hash
        assert new_hash in (work / "paper/generated/results_macros.tex").read_text()
    finally:
        # the last test of the module: the next run (none here) would redo
        # the summary for the original labels
        write_config(work, copy.deepcopy(TINY))
