"""Studies replace, never merge: the README's recipes from a checkout whose
config.yaml is the default one.

At 50ee96f `--configfile my.yaml` was merged into config.yaml: a one-point
file planned 18 run jobs (the default 17 plus its own) and `sweeps: {}`
silently ran the default study.  The earlier tests missed it because their
test config *was* config.yaml.
"""

import shutil
import subprocess
import sys

import pytest
import yaml

from pipeline_util import REPO, copy_repo, job_counts

pytestmark = pytest.mark.skipif(
    not shutil.which("make") or not shutil.which("cc"),
    reason="needs make and a C compiler: apt-get install build-essential",
)

ONE_POINT = {
    "run": {"rounds": 2, "warmup": 0, "replicates": 1},
    "analysis": {"bootstrap": 200},
    "sweeps": {
        "mine": {
            "workloads": ["md"],
            "points": [{"name": "only", "x": 1, "m_shape": [32, 32, 32], "d_shape": [64, 256], "d_repeat": 1}],
        }
    },
}


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A copy of the repository with the default config.yaml and config/."""
    wd = copy_repo(tmp_path_factory.mktemp("clone"))
    shutil.copy2(REPO / "config.yaml", wd / "config.yaml")
    shutil.copytree(REPO / "config", wd / "config", dirs_exist_ok=True)  # copy_repo has it too
    return wd


def sm(wd, *args, timeout=600):
    """snakemake as a user types it in the checkout (no --configfile of ours)."""
    env = {**__import__("os").environ, "PYTHONPATH": str(wd)}
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", *args],
        cwd=wd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def write(wd, name, obj):
    (wd / name).write_text(obj if isinstance(obj, str) else yaml.safe_dump(obj, sort_keys=False))
    return name


def test_default_study_plans_its_21_points(checkout):
    r = sm(checkout, "-n", "all")
    assert r.returncode == 0, r.stderr[-3000:]
    assert job_counts(r.stdout + r.stderr)["run"] == 21 * 3  # 3 replicates each


def test_all_writes_the_papers_sections_but_not_the_pdf(checkout):
    """`all` plans the generated sections (and the mechanism checks and the
    evidence figure they read), never the PDF, which needs LaTeX."""
    r = sm(checkout, "-n", "all")
    assert r.returncode == 0, r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert {"paper_sections", "mechanism", "figure_evidence"} <= set(counts), counts
    assert "paper" not in counts, counts


def test_configfile_sweeps_replace_the_study(checkout):
    f = write(checkout, "my.yaml", ONE_POINT)
    r = sm(checkout, "-n", "all", "--configfile", f)
    assert r.returncode == 0, r.stderr[-3000:]
    counts = job_counts(r.stdout + r.stderr)
    assert counts["run"] == 1 and counts["check"] == 1, counts  # not 18
    assert "results/host/raw/mine/md/only/rep0.jsonl" in r.stdout + r.stderr


def test_study_by_name_replaces_the_study(checkout):
    r = sm(checkout, "-n", "all", "--config", "study=smoke")
    assert r.returncode == 0, r.stderr[-3000:]
    assert job_counts(r.stdout + r.stderr)["run"] == 3 * 3  # mv, md, mvd x 3 replicates
    assert "raw/smoke/mvd/small/rep2.jsonl" in r.stdout + r.stderr


@pytest.mark.parametrize(
    "doc,message",
    [
        ({"sweeps": {}}, "config.sweeps: {} should be non-empty"),
        ({"sweeps": {"s": {"points": []}}}, "config.sweeps.s.points: [] should be non-empty"),
        ({"study": "default", "sweeps": ONE_POINT["sweeps"]}, "config.study and config.sweeps: give one"),
        ({"study": "nosuch"}, "config.study: no study file"),
        ({"study": "broken.yaml"}, "broken.yaml:4:14: YAML syntax error"),
        ({"study": "badkey.yaml"}, "badkey.yaml: sweeps.s.points[0].m_shape[1]: 0 is less than the minimum of 1"),
    ],
)
def test_bad_studies_stop_before_any_job(checkout, doc, message):
    write(checkout, "broken.yaml", "sweeps:\n  s:\n    points: [{name: a, x: 1\n    workloads: [mv]\n")
    write(checkout, "badkey.yaml", {"sweeps": {"s": {"points": [{"name": "a", "x": 1, "m_shape": [1, 0, 1]}]}}})
    f = write(checkout, "bad.yaml", doc)
    r = sm(checkout, "-n", "all", "--configfile", f)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert message in out, out[-3000:]
    assert "Traceback" not in out and not (checkout / "results").exists()


def test_configfile_yaml_error_is_located_by_the_checker(checkout):
    """Snakemake loads a --configfile itself and names neither file nor line;
    `python -m hxfuse.config FILE` (the README's advice) does."""
    f = write(checkout, "typo.yaml", "run:\n  rounds: [1, 2\n  warmup: 3\n")
    r = subprocess.run(
        [sys.executable, "-m", "hxfuse.config", f],
        cwd=checkout,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(checkout)},
    )
    assert r.returncode == 1 and "typo.yaml:3:" in r.stderr and "YAML syntax error" in r.stderr, r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "hxfuse.config", write(checkout, "ok.yaml", ONE_POINT)],
        cwd=checkout,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(checkout)},
    )
    assert r.returncode == 0 and "1 points, 1 runner jobs" in r.stdout, r.stdout + r.stderr
    # (a one-point study run end to end, from its own config file, is what
    # every test of tests/pipeline/test_pipeline_e2e.py does)


def test_yaml_error_in_config_yaml_names_file_and_line(tmp_path):
    (tmp_path / "config.yaml").write_text("run:\n  rounds: [1, 2\n  warmup: 3\n")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-s",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "-n",
            "--cores",
            "1",
            "all",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode != 0
    assert "hxfuse: config.yaml:3:9: YAML syntax error" in r.stdout + r.stderr, r.stderr[-2000:]
