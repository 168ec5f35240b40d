"""A clone explains itself: no tracked file points outside the repository
(design notes, issue trackers) and every relative link in the docs resolves."""

import re
import subprocess

import pytest

from pipeline_util import REPO

# Text that sends a reader somewhere a clone does not have.  Built from parts
# so that this file does not match itself.
OUTSIDE = [
    re.compile(p)
    for p in (
        "shared" + r"/design",
        r"\.\./" + "shared",
        r"\bissue" + r" #?[0-9]",
        "issues" + " show",
        "/work" + "/shared",
    )
]


def tracked() -> list[str]:
    r = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=False)
    if r.returncode != 0:
        pytest.skip("not a git checkout")
    return [f for f in r.stdout.decode().split("\0") if f]


def test_no_reference_outside_the_repository():
    hits = []
    for rel in tracked():
        path = REPO / rel
        if not path.is_file() or path.suffix in {".npy", ".png", ".pdf", ".gz"}:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            hits += [f"{rel}:{n}: {line.strip()}" for p in OUTSIDE if p.search(line)]
    assert not hits, "references outside the repository:\n" + "\n".join(hits)


LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_relative_doc_links_resolve():
    bad = []
    for rel in tracked():
        if not rel.endswith(".md"):
            continue
        src = REPO / rel
        for target in LINK.findall(src.read_text()):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            if not (src.parent / target).exists():
                bad.append(f"{rel}: link to {target} does not exist")
    assert not bad, "\n".join(bad)
