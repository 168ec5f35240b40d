"""The pinned environment: constraints.txt covers pyproject.toml, every
install path uses it, and provenance records what a result was made with."""

import copy
import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata

import numpy as np
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from hxfuse.config import validate as hxvalidate
from hxfuse.config import targets as hxtargets
from conftest import synthetic_run
from hxfuse.runner import provenance
from pipeline_util import REPO, TINY, aggregate_synthetic

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def pins() -> dict[str, str]:
    out = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version, f"constraints.txt: {line!r} is not an exact pin"
            out[canonicalize_name(name)] = version
    return out


def test_constraints_pin_every_dependency_at_pyprojects_version():
    got = pins()
    for spec in [*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["test"]]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in got, f"{req.name} (pyproject.toml) is not pinned in constraints.txt"
        # a pin in pyproject.toml and the constraint must be the same version
        assert req.specifier.contains(got[name]), (req, got[name])
    assert got["ziglang"] == hxtargets.ZIG_PIN
    assert "ruff" in got
    # the analysis stack provenance records is pinned, matplotlib included
    # (seaborn pulls it in)
    assert set(provenance.ANALYSIS_STACK) <= set(got)


def _constraints_check(*extra):
    return subprocess.run(
        [sys.executable, str(REPO / ".ci/constraints.py"), "--check", *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_constraints_generator_agrees_with_the_file():
    """The file is what .ci/constraints.py derives from pyproject.toml and the
    installed distributions (CI runs the same check after installing).  It
    needs CI's tools (the `ci` extra: the README's test command does not
    install them): without them it skips naming them, except in CI
    (HXFUSE_CI=1, set by .ci/run, which installs them), where that fails."""
    gone = _constraints_module().missing_tools()
    if gone:
        msg = f"needs CI's tools, missing: {', '.join(gone)} ({_constraints_module().CI_INSTALL})"
        if os.environ.get("HXFUSE_CI") == "1":
            pytest.fail(msg + "; HXFUSE_CI=1 (.ci/run) installs them")
        pytest.skip(msg)
    r = _constraints_check()
    assert r.returncode == 0, r.stderr


def test_the_installed_part_of_the_pins_is_what_is_installed():
    """What the README's test command installs (the dependencies and the test
    extra, CI's tools or not) is at constraints.txt's versions: this runs on
    every machine, the full comparison above only where the tools are."""
    r = _constraints_check("--without-ci-tools")
    assert r.returncode == 0, r.stderr


def test_ci_tools_are_the_ci_extra_and_name_themselves_when_missing(monkeypatch):
    ci = _constraints_module()
    assert set(ci.TOOLS) == {"ruff", "snakefmt", "clang-format", "ziglang"}
    assert set(ci.TOOLS) == set(PROJECT["optional-dependencies"]["ci"])
    # known answer: a tool that is not installed is named, with the command
    # that installs it, before any work
    monkeypatch.setattr(ci, "TOOLS", (*ci.TOOLS, "hxfuse-no-such-tool"))
    assert ci.missing_tools()[-1:] == ["hxfuse-no-such-tool"]
    with pytest.raises(SystemExit) as exc:
        ci.main(["--check"])
    assert "hxfuse-no-such-tool" in str(exc.value) and "-e '.[test,ci,cuda]'" in str(exc.value)
    # the cuda extra is CI's too: a fresh machine with the ci extra but not
    # the cuda one (seen: "nvidia-cuda-cccl is required but not installed")
    # skips naming it instead of failing
    monkeypatch.setattr(ci, "TOOLS", ())
    monkeypatch.setattr(ci, "CUDA", (*ci.CUDA, "hxfuse-no-such-cuda"))
    assert ci.missing_tools()[-1:] == ["hxfuse-no-such-cuda"]


def _constraints_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("ci_constraints", REPO / ".ci" / "constraints.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_hash_lock_holds_exactly_the_pins():
    """requirements.lock (what CI installs with --require-hashes) pins what
    constraints.txt pins, each with its hashes; a lock that falls behind a
    regenerated constraints.txt, or loses a hash, is named."""
    ci = _constraints_module()
    pins, lock = (REPO / "constraints.txt").read_text(), (REPO / "requirements.lock").read_text()
    assert ci.lock_problems(pins, lock) == []
    # known answers: a pin moved in one file only, and a pin without its hashes
    moved = pins.replace("numpy==", "numpy==0")
    assert "requirements.lock lacks numpy==0" in " ".join(ci.lock_problems(moved, lock))
    bare = re.sub(r"(pandas==[^ ]+) \\\n(    --hash=[^\n]*\n)+", r"\1\n", lock)
    assert bare != lock and any("pandas==" in p and "no hash" in p for p in ci.lock_problems(pins, bare))


def test_every_install_path_uses_the_constraints():
    readme = (REPO / "README.md").read_text()
    assert "pip install -c constraints.txt -e . && snakemake" in readme
    # the tests need the test extra (pytest, hypothesis are not runtime dependencies)
    assert "pip install -c constraints.txt -e '.[test]' && python3 -m pytest" in readme
    # CI installs the same pins from the hash lock, then the package alone
    ci = (REPO / ".ci/run").read_text()
    assert "pip install --require-hashes -r requirements.lock" in ci and "pip install --no-deps -e ." in ci
    assert not {"pytest", "hypothesis"} & {canonicalize_name(Requirement(d).name) for d in PROJECT["dependencies"]}
    env = yaml.safe_load((REPO / "envs/analysis.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "-c ../constraints.txt" in pip and "-e ../" in pip
    # conda gives the interpreter only; its version satisfies requires-python
    py = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    version = py.split("=")[-1].strip()
    assert version == "3.11" and Requirement(f"python{PROJECT['requires-python']}").specifier.contains(version + ".0")
    assert [d for d in env["dependencies"] if isinstance(d, str)] == [py, "pip"]


def _pytest_lines(text: str) -> list[str]:
    """The shell lines of *text* that run pytest (comments and prose aside)."""
    return [l.strip() for l in text.splitlines() if "-m pytest" in l and not l.lstrip().startswith("#")]


def test_ci_runs_the_readmes_tests_and_names_the_same_packages():
    """CI's test step is the README's command itself, with nothing that
    selects, deselects or skips tests (no -m, -k, paths, --deselect): so a
    green CI means the README's command passes.  Its environment variables
    only make skips for missing tools into failures.  Every Debian package
    .ci/run installs for the tests is named in the README's table of them."""
    readme, ci = (REPO / "README.md").read_text(), (REPO / ".ci/run").read_text()
    cmd = "pip install -c constraints.txt -e '.[test]' && python3 -m pytest"
    assert f"\n{cmd}\n" in readme
    assert _pytest_lines(ci) == ["python3 -m pytest"], _pytest_lines(ci)
    # pyproject's pytest options select nothing either
    opts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert not re.search(r"(^|\s)(-m|-k|--deselect|--ignore)\b", opts.get("addopts", "")), opts
    exported = set(re.findall(r"^export (HXFUSE_[A-Z_]+)=", ci, re.M))
    assert exported == {"HXFUSE_REQUIRE_SLURM", "HXFUSE_CI"}, exported
    packages = set(re.findall(r"need_apt\+=\(([^)]*)\)", ci))
    packages = {p for group in packages for p in group.split()}
    assert {"build-essential", "qemu-user", "latexmk", "chromium", "munge", "slurm-client"} <= packages
    table = readme[readme.index(cmd) : readme.index("## Everyday use")]
    assert not {p for p in packages if p not in table}, "README's test section lacks these .ci/run packages"


def test_sidecar_records_installed_analysis_stack(tmp_path):
    jsonl = tmp_path / "rep0.jsonl"
    jsonl.write_text(json.dumps({"record": "meta", "compiler": "cc 1", "cpu_model": "x"}) + "\n")
    runner = tmp_path / "hxrun"
    runner.write_bytes(b"\x7fELF")
    rec = provenance.sidecar({"target": "host", "replicate": 0}, jsonl, runner, ["--seed", "1"])
    pk = rec["packages"]
    assert list(pk) == list(provenance.ANALYSIS_STACK)
    assert pk["numpy"] == np.__version__
    assert pk["snakemake"] == metadata.version("snakemake")
    assert all(isinstance(v, str) and v for v in pk.values()), pk
    json.dumps(rec)  # the sidecar is written as JSON


def test_missing_package_is_recorded_as_none():
    assert provenance.package_versions(("numpy", "hxfuse-no-such-package")) == {
        "numpy": np.__version__,
        "hxfuse-no-such-package": None,
    }


def test_summary_json_records_installed_analysis_stack(tmp_path):
    cfg = copy.deepcopy(TINY)
    cfg["run"]["replicates"] = 1
    cfg = hxvalidate.validate(cfg)

    def records(p, rep, i):
        d = {"M": 100_000, "V": 80_000, "D": 60_000}
        d = {k: v for k, v in d.items() if k in p["id"].split("/")[1].upper()}
        return synthetic_run(d, workloads=(p["id"].split("/")[1],), rounds=4, seed=i)

    doc = aggregate_synthetic(tmp_path, cfg, "host", records)
    assert doc["provenance"]["packages"] == provenance.package_versions()
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["provenance"]["packages"]["pandas"] == metadata.version("pandas")


@pytest.mark.parametrize("name", provenance.ANALYSIS_STACK)
def test_installed_analysis_stack_is_the_pinned_one(name):
    """What the tests run with is what constraints.txt says (a drifted
    environment is named here rather than found in a result's sidecar)."""
    assert provenance.package_versions((name,))[name] == pins()[canonicalize_name(name)]


def test_slow_modules_exist_and_the_marker_is_registered():
    from conftest import SLOW_FOLDERS

    missing = sorted(f for f in SLOW_FOLDERS if not (REPO / "tests" / f).is_dir())
    assert not missing, f"tests/conftest.py marks missing folders slow: {missing}"
    markers = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("slow:") for m in markers)


def test_conda_environment_carries_the_constraints_hash():
    """Snakemake hashes the environment file only: the analysis environment
    names constraints.txt's SHA-256, so a changed pin rebuilds it."""
    import hashlib
    import importlib.util

    digest = hashlib.sha256((REPO / "constraints.txt").read_bytes()).hexdigest()
    assert (REPO / "envs/analysis.yaml").read_text().startswith(f"# constraints.txt sha256: {digest}\n")
    spec = importlib.util.spec_from_file_location("ci_constraints", REPO / ".ci/constraints.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = (REPO / "constraints.txt").read_text()
    now = mod.stamped_envs(text)
    changed = mod.stamped_envs(text.replace("numpy==", "numpy==0", 1))
    assert set(now) == {REPO / "envs/analysis.yaml"}
    assert now[REPO / "envs/analysis.yaml"] == (REPO / "envs/analysis.yaml").read_text()
    assert changed[REPO / "envs/analysis.yaml"] != now[REPO / "envs/analysis.yaml"]
