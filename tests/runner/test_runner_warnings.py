"""The runner's warnings carry stable codes (meta.warning_codes, parallel to
meta.warnings), and the analysis keys on the code, never on the wording."""

import pytest

from hxfuse.analysis import aggregate as ag
from hxfuse.analysis import environment
from hxfuse.runner.records import read_run
from runner_util import build_runner, run_runner

CODES = {"engines_exceed_cores", "spin_wait_oversubscribed", "calibration", "host_unpinned", "antagonists_share_cores"}


@pytest.fixture(scope="module")
def hxrun():
    return build_runner("host")


def test_every_warning_has_a_stable_code(hxrun, tmp_path):
    # 8 V workers + M + D: more engines than cores on any machine with fewer
    # than 10 cores; calibration and spin waits add their own warnings
    out = tmp_path / "w.jsonl"
    proc, recs = run_runner(
        hxrun,
        out,
        "--workloads",
        "mvd",
        "--warmup",
        "0",
        "--rounds",
        "1",
        "--v-workers",
        "8",
        "--wait",
        "spin",
        "--calibrate",
        "M=20,V=20,D=20",
    )
    assert proc.returncode == 0, proc.stderr
    meta = recs[0]
    texts, codes = meta["warnings"], meta["warning_codes"]
    assert len(codes) == len(texts) and set(codes) <= CODES, (texts, codes)
    assert texts[codes.index("calibration")].startswith("calibration run")
    if meta["engines_exceed_cores"]:
        assert "online cores" in texts[codes.index("engines_exceed_cores")]
        assert "spin_wait_oversubscribed" in codes
    else:
        assert "engines_exceed_cores" not in codes
    # the analysis carries the codes beside the texts, in the same order ...
    env = ag.environment(read_run(out))
    assert env["runner_warning_codes"].split("; ") == codes
    assert env["runner_warnings"].split("; ") == texts
    # ... and does not repeat the runner's engines-vs-cores warning
    env |= {"online_cores": meta["online_cores"], "engines_exceed_cores": meta["engines_exceed_cores"]}
    found = [c for c, _ in environment.environment_findings(env)]
    assert "engines_exceed_cores" not in found
    assert found.count("runner") == len(codes)


def test_no_warning_no_code(hxrun, tmp_path):
    out = tmp_path / "q.jsonl"
    proc, recs = run_runner(
        hxrun, out, "--workloads", "mv", "--warmup", "0", "--rounds", "1", "--m-shape", "16,16,16", "--v-shape", "8,64"
    )
    assert proc.returncode == 0, proc.stderr
    meta = recs[0]
    assert len(meta["warning_codes"]) == len(meta["warnings"])
    assert "calibration" not in meta["warning_codes"]


def test_no_python_code_matches_a_warning_text():
    """Static half of the rule: no phrase of the runner's warning texts
    (kernels/hxrun/protocol.c, collect_warnings) appears in the package or the
    job scripts, so nothing can be keyed on the wording."""
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    c = (repo / "kernels" / "hxrun" / "protocol.c").read_text()
    body = c[c.index("static void collect_warnings(") :]
    body = body[: body.index("\n}\n")]
    assert set(re.findall(r'\(hx_warning\)\{"([a-z_]+)"', body)) == CODES
    # a text may be split over adjacent literals and lines (clang-format)
    texts = [t for code, t in re.findall(r'\(hx_warning\)\{"([a-z_]+)",\s*((?:"[^"]*"\s*)+)\}', body)]
    texts += re.findall(r'snprintf\([^,]+,\s*[^,]+,\s*((?:"[^"]*"\s*)+)', body)
    phrases = set()
    for t in texts:
        t = "".join(re.findall(r'"([^"]*)"', t)) if t.startswith('"') else t
        for part in re.split(r"%[-0-9.]*[a-z]+|[:;,()]", t):
            words = part.split()
            if len(words) >= 3:
                phrases.add(" ".join(words).lower())
    assert len(texts) == len(CODES) and len(phrases) >= 10, phrases  # the parse found every text
    sources = sorted((repo / "hxfuse").rglob("*.py")) + sorted((repo / "workflow" / "scripts").glob("*.py"))
    hits = [(p.name, ph) for p in sources for ph in phrases if ph in " ".join(p.read_text().lower().split())]
    assert hits == []
