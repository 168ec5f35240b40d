"""The workflow's files: helper files (``common.smk``, ``*_common.smk``)
hold every function and shared name and no rule; rule files hold rules
only, so the order in which the Snakefile includes them does not matter.

Known answers: a Snakefile that includes the rule files in another order
plans exactly the jobs of the repository's (a dry run on the tiny config,
several targets at once); and no rule file defines a top-level name
(function, assignment, import) that another rule file uses, which is what
made the include order matter (the paper's sections read graph, serve and
search names that their rule files defined).
"""

from __future__ import annotations

import copy
import os
import random
import re
from pathlib import Path

import pytest

from pipeline_util import REPO, SNAKEFILE, TINY, job_counts, snakemake, write_config

RULES_DIR = REPO / "workflow" / "rules"
INCLUDE = re.compile(r'^include: "workflow/rules/([\w-]+\.smk)"\s*$', re.M)
# every target a user runs by name (README, docs): `all` and the ones `all`
# leaves out, so that every rule file's rules are planned
TARGETS = ("all", "paper", "selftest", "serve_all", "graphs", "external_full", "external_timelines", "searches")


def is_helper(name: str) -> bool:
    return name == "common.smk" or name.endswith("_common.smk")


def included() -> list[str]:
    """The .smk files the Snakefile includes, in its order."""
    return INCLUDE.findall(SNAKEFILE.read_text())


def rule_files() -> list[Path]:
    return sorted(p for p in RULES_DIR.glob("*.smk") if not is_helper(p.name))


def _code(text: str) -> str:
    """*text* without comments and without triple-quoted strings (docstrings,
    shell blocks), which may start a line at column 0 without being code."""
    text = re.sub(r'(?s)("""|\'\'\').*?\1', '""', text)
    return re.sub(r"(?m)#.*$", "", text)


def top_level_names(text: str) -> set[str]:
    """Names a .smk file defines at its top level: def, class, assignment,
    import.  Directives (rule, checkpoint, include, wildcard_constraints,
    configfile, ...) are not names."""
    names = set()
    for line in _code(text).splitlines():
        if not line or line[0].isspace():
            continue
        if m := re.match(r"(?:async\s+)?(?:def|class)\s+(\w+)", line):
            names.add(m.group(1))
        elif m := re.match(r"import\s+(.+)", line):
            names |= {part.split(" as ")[-1].strip().split(".")[0] for part in m.group(1).split(",")}
        elif m := re.match(r"from\s+\S+\s+import\s+\(?([^)]+)\)?", line):
            names |= {part.split(" as ")[-1].strip() for part in m.group(1).split(",") if part.strip()}
        elif m := re.match(r"([A-Za-z_][\w\s,]*?)\s*(?::[^=]+)?(?<![=!<>])=(?!=)", line):
            names |= {n.strip() for n in m.group(1).split(",") if n.strip()}
    return names


def used_names(text: str) -> set[str]:
    """Every identifier of a file, strings included (f-strings and shell
    commands name globals too)."""
    return set(re.findall(r"\b[A-Za-z_]\w*\b", re.sub(r"(?m)#.*$", "", text)))


def cross_file_globals(files: list[Path]) -> list[str]:
    """'<name>: defined in A, used in B' for each top-level name of a rule
    file that another rule file uses."""
    defined = {p.name: top_level_names(p.read_text()) for p in files}
    used = {p.name: used_names(p.read_text()) for p in files}
    return sorted(
        f"{name}: defined in {a}, used in {b}"
        for a, names in defined.items()
        for b, uses in used.items()
        if a != b
        for name in names & uses
    )


def test_top_level_names_known_answers():
    text = (
        "import json as _json\nimport os, sys\nfrom x.y import a, b as c\n"
        "X = 1\nY: int = 2\nP, Q = 1, 2\ndef f(wc):\n    z = 3\n"
        'rule r:\n    params:\n        k=X,\n    shell:\n        """\nW = 5\n"""\n'
        "wildcard_constraints:\n    w='a',\n# V = 4\n"
    )
    assert top_level_names(text) == {"_json", "os", "sys", "a", "c", "X", "Y", "P", "Q", "f"}


def test_a_global_shared_between_rule_files_is_found(tmp_path):
    (tmp_path / "a.smk").write_text('DIR = "results"\n\n\nrule a:\n    output:\n        f"{DIR}/a",\n')
    (tmp_path / "b.smk").write_text('rule b:\n    input:\n        f"{DIR}/a",\n')
    assert cross_file_globals([tmp_path / "a.smk", tmp_path / "b.smk"]) == ["DIR: defined in a.smk, used in b.smk"]


def test_no_rule_file_defines_a_name_another_uses():
    assert not cross_file_globals(rule_files())


def test_rule_files_define_rules_only_and_helper_files_no_rule():
    """A rule file's names would be visible to the files included after it
    only; a helper file's rule would make Snakemake's linter complain about
    functions and rules in one file."""
    for p in rule_files():
        assert not top_level_names(p.read_text()), (p.name, top_level_names(p.read_text()))
        assert not re.search(r"(?m)^include:", p.read_text()), f"{p.name} includes another file"
    for p in RULES_DIR.glob("*.smk"):
        if is_helper(p.name):
            assert not re.search(r"(?m)^(rule|checkpoint)\s", p.read_text()), f"{p.name} defines a rule"


def test_snakefile_includes_every_file_once_helpers_first():
    inc = included()
    assert sorted(inc) == sorted(p.name for p in RULES_DIR.glob("*.smk")), inc
    helpers = [i for i, n in enumerate(inc) if is_helper(n)]
    assert helpers == list(range(len(helpers))), f"helper files are included first: {inc}"


def _snakefile_in_order(dest: Path, order: list[str]) -> Path:
    """The repository's Snakefile with its rule files included in *order*
    (helper files first, as there), by absolute path."""
    text = SNAKEFILE.read_text()
    inc = included()
    helpers = [n for n in inc if is_helper(n)]
    lines = "".join(f'include: "{RULES_DIR / n}"\n' for n in [*helpers, *order])
    first = INCLUDE.search(text).start()
    body = INCLUDE.sub("", text[first:])
    # this checkout's package, wherever the Snakefile is written
    head = text[:first].replace("str(workflow.current_basedir)", repr(str(REPO)))
    dest.write_text(head + lines + body)
    return dest


def _planned(out: str) -> list[tuple[str, str]]:
    """(rule, output) of every job of a dry run."""
    jobs = re.findall(r"(?m)^(?:local)?(?:rule|checkpoint) (\w+):\n((?:    .*\n)*)", out)
    return sorted((rule, (re.search(r"(?m)^    output: (.*)$", body) or [None, ""])[1]) for rule, body in jobs)


def _dry_run(workdir: Path, snakefile: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    res = snakemake(workdir, "-n", *TARGETS, cores=1, snakefile=snakefile, env=env, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    return out


@pytest.fixture(scope="module")
def tiny_workdir(tmp_path_factory) -> Path:
    cfg = copy.deepcopy(TINY)
    # a search too, so that search.smk's rules are planned
    cfg["searches"] = {
        "place": {
            "workload": "mv",
            "space": {"m_tile": [64, 256]},
            "budget": {"candidates": 2, "rounds": 4, "warmup": 1},
            "confirm": {"pairs": 2, "rounds": 4, "warmup": 1},
            "seed": 2,
        }
    }
    wd = tmp_path_factory.mktemp("order")
    write_config(wd, cfg)
    return wd


@pytest.fixture(scope="module")
def normal_plan(tiny_workdir) -> str:
    return _dry_run(tiny_workdir, SNAKEFILE)


@pytest.mark.parametrize("how", ["reversed", "shuffled"])
def test_include_order_of_rule_files_changes_no_job(tiny_workdir, normal_plan, tmp_path, how):
    rules = [n for n in included() if not is_helper(n)]
    order = rules[::-1] if how == "reversed" else random.Random(1).sample(rules, len(rules))
    assert order != rules
    out = _dry_run(tiny_workdir, _snakefile_in_order(tmp_path / "Snakefile", order))
    want = job_counts(normal_plan)
    # every rule file planned something (a target per file above)
    assert {"build", "run", "graph_run", "serve_run", "ort_run", "search_run", "paper_sections"} <= set(want)
    assert job_counts(out) == want
    assert _planned(out) == _planned(normal_plan)
