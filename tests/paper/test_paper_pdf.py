"""The paper end to end: `snakemake paper` on a copy of the shared finished
tiny run (the tiny_run fixture of tests/conftest.py) builds paper/main.pdf
with latexmk, every section is in the text, and nothing is left unresolved
(no "??" in the PDF, no undefined reference or citation in the LaTeX log).
The copy keeps the run's files and times, so only the LaTeX job runs: a
study of its own would measure and draw everything again (about 30 s on 2
cores).  Needs latexmk and TeX Live (.ci/run installs them); skipped, saying
so, only where latexmk is absent."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from pipeline_util import REPO, job_counts, snakemake

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("latexmk") is None,
        reason="latexmk is not installed "
        "(the paper rule needs LaTeX: see README, 'build the paper'; .ci/run installs it)",
    ),
]

# \section titles of paper/main.tex and paper/related.tex, in order
SECTIONS = [
    "Question",
    "Platform and scope",
    "Method",
    "Mechanism validation",
    "Answers",
    "Results",
    "Task graphs from model blocks",
    "Request stream",
    "Fixed versus searched",
    "Limitations and threats to validity",
    "Related work",
]


def test_sections_are_those_of_the_paper():
    tex = (REPO / "paper" / "main.tex").read_text() + (REPO / "paper" / "related.tex").read_text()
    assert re.findall(r"\\section\{([^}]*)\}", tex) == SECTIONS


def test_paper_builds_from_the_tiny_run(tiny_run, tmp_path):
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is needed to read the PDF back"
    wd = tmp_path / "run"
    shutil.copytree(tiny_run, wd, symlinks=True)
    r = snakemake(wd, "paper", timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    # everything the paper reads is part of `all`: only the LaTeX job ran
    assert job_counts(r.stdout + r.stderr) == {"paper": 1}, (r.stdout + r.stderr)[-4000:]
    pdf = wd / "paper" / "main.pdf"
    assert pdf.stat().st_size > 50_000
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))
    # figures at their natural size: one timeline per page, two evidence
    # figures, the results split in two tables and the external one sideways
    # (20 pages on the tiny run: a family sweep of 6 points)
    assert 6 <= pages <= 24, pages
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    flat = re.sub(r"\s+", " ", text)
    for i, title in enumerate(SECTIONS, start=1):
        assert f"{i} {title}" in flat, f"section {i} {title!r} not in the PDF's text"
    assert "??" not in text, "an unresolved reference: " + text[max(0, text.find("??") - 200) : text.find("??") + 50]
    # the tiny sweep's points and the external comparison made it into the text
    assert "tiny sweep" in flat and "ONNX Runtime" in flat
    # the further workloads: the default graph point and serve point (part of
    # `all`) with their generated sentences; the search, not configured, is
    # said not to have run, with the command that runs it
    assert "Abstract" in flat
    assert "mobilenetv2" in flat and "ready nodes in one step" in flat
    assert "Task graphs from model blocks (workload 4)" in flat
    assert "Point tiny (400 requests/s" in flat and "p99 latency D/A" in flat
    assert "Not run in this build" in flat and "snakemake --cores 4 searches --config study=search" in flat
    log = (wd / "paper" / "build" / "main.log").read_text(errors="replace")
    # nothing wider than the text: no table or figure was left to overflow
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox[^\n]*", log)
    bad = re.findall(
        r"(?:LaTeX|Package \w+) Warning: (?:Reference|Citation|Hyper reference) [^\n]*undefined"
        r"|There were undefined (?:references|citations)",
        log,
    )
    assert not bad, bad
