"""The analysis derives byte-identical outputs from one fixed set of raw files.

``tests/data/golden_run/`` (its README.md says what it holds) has the raw
runner files of one real tiny run; this test hands them to the workflow with
only the analysis rules allowed, so nothing is measured again, and compares
the SHA-256 of every derived table with the pinned list.  A refactor that
keeps behaviour passes it unchanged; one that moves a number fails, naming
the file.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tarfile
from pathlib import Path

from pipeline_util import snakemake

DATA = Path(__file__).parent / "data" / "golden_run"
EXPECTED = DATA / "expected.sha256"
# what the workflow derives from the raw files: (path, compared as gzip content)
OUTPUTS = (
    ("results/host/summary.csv", False),
    ("results/host/trials.csv.gz", True),
    ("results/host/verdicts.csv", False),
    ("paper/generated/results_table.tex", False),
    ("paper/generated/evidence_table.tex", False),
    ("paper/generated/results_macros.tex", False),
)
ANALYSIS_RULES = (
    "aggregate",
    "verdicts",
    "table",
    "figure_speedup",
    "figure_slowdown",
    "figure_timeline",
    "figure_family",
    "report_tables",
)


def _digest(path: Path, gz: bool) -> str:
    data = gzip.decompress(path.read_bytes()) if gz else path.read_bytes()
    return hashlib.sha256(data).hexdigest()


def test_fixed_raw_files_give_byte_identical_outputs(tmp_path):
    with tarfile.open(DATA / "inputs.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    targets = [p for p, _ in OUTPUTS]
    res = snakemake(tmp_path, "--allowed-rules", *ANALYSIS_RULES, "--", *targets)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "rule run:" not in res.stdout + res.stderr, "the test must not measure again"
    got = {p: _digest(tmp_path / p, gz) for p, gz in OUTPUTS}
    if os.environ.get("HXFUSE_WRITE_GOLDEN") == "1":
        EXPECTED.write_text("".join(f"{h}  {p}\n" for p, h in got.items()))
    want = dict(reversed(line.split("  ", 1)) for line in EXPECTED.read_text().split("\n") if line)
    changed = [p for p in targets if got[p] != want.get(p)]
    assert not changed, f"outputs differ from the pinned ones: {changed}"
