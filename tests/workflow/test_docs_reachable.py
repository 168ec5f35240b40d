"""The README is a front door and the docs are reachable from it.

Checked against the tree as it is when the tests run, so moving a module, a
rule file or a page makes this fail until the docs follow:

- README.md stays short (the details live in docs/);
- every docs/*.md page is linked from README.md or from a docs page that is
  itself reachable from README.md;
- every hxfuse subpackage and every workflow/rules/*.smk file is named in
  README.md or a docs page (docs/layout.md is their home);
- every link in README.md and docs/ to a repository path points to an
  existing file inside the repository, and an anchor into a Markdown page
  to one of its headings.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

from pipeline_util import REPO

MAX_README_LINES = 200

README = REPO / "README.md"
DOCS = REPO / "docs"

# inline Markdown links: [text](target) or [text](target#anchor)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def prose(path: Path) -> list[str]:
    """The page's lines outside fenced code blocks."""
    out, fenced = [], False
    for line in path.read_text().splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def links(path: Path) -> list[tuple[str, Path, str]]:
    """(as written, resolved file, anchor) of every link that is not a URL."""
    found = []
    for line in prose(path):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path.resolve()
            found.append((target, resolved, anchor))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: rendered text, lower case, punctuation
    dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading)  # HTML tags
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in prose(path):
        out.update(EXPLICIT_ANCHOR.findall(line))
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def all_text() -> str:
    return "\n".join(p.read_text() for p in pages())


def test_readme_is_short():
    n = len(README.read_text().splitlines())
    assert n <= MAX_README_LINES, (
        f"README.md has {n} lines (at most {MAX_README_LINES}): move details to a docs/ page and link it"
    )


def test_every_docs_page_is_reachable_from_the_readme():
    reached, todo = {README.resolve()}, deque([README])
    while todo:
        page = todo.popleft()
        for _, target, _ in links(page):
            if target.suffix == ".md" and target.parent == DOCS.resolve() and target not in reached:
                reached.add(target)
                if target.is_file():
                    todo.append(target)
    orphans = [rel(p) for p in sorted(DOCS.glob("*.md")) if p.resolve() not in reached]
    assert not orphans, f"docs pages linked from neither README.md nor a page reachable from it: {orphans}"


def test_every_subpackage_and_rule_file_is_named():
    text = all_text()
    subpackages = sorted(d.name for d in (REPO / "hxfuse").iterdir() if d.is_dir() and (d / "__init__.py").is_file())
    assert subpackages, "no hxfuse subpackages found"
    missing = [
        f"hxfuse/{name}/"
        for name in subpackages
        if f"hxfuse/{name}/" not in text and not re.search(rf"\bhxfuse\.{re.escape(name)}\b", text)
    ]
    rules = sorted(p.name for p in (REPO / "workflow" / "rules").glob("*.smk"))
    assert rules, "no workflow/rules/*.smk found"
    missing += [
        f"workflow/rules/{name}" for name in rules if not re.search(rf"(?<![\w-]){re.escape(name)}(?!\w)", text)
    ]
    assert not missing, "named in neither README.md nor a docs page (add them to docs/layout.md): " + ", ".join(missing)


def test_links_to_repository_paths_exist():
    bad = []
    root = REPO.resolve()
    for page in pages():
        for target, resolved, anchor in links(page):
            where = f"{rel(page)}: ({target})"
            if not resolved.is_relative_to(root):
                bad.append(f"{where} points outside the repository")
            elif not resolved.exists():
                bad.append(f"{where} does not exist")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                bad.append(f"{where}: no heading with anchor #{anchor} in {resolved.relative_to(root).as_posix()}")
    assert not bad, "\n".join(bad)


def _layout_rows() -> dict[str, set[str]]:
    """{package folder (``hxfuse/``, ``hxfuse/runner/``): module files named
    in its rows} of docs/layout.md's tables."""
    rows: dict[str, set[str]] = {}
    current = "hxfuse/"
    for line in (DOCS / "layout.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if not cells:
            continue
        if len(cells) == 3:  # | subpackage | module | what |
            if cells[0].startswith("`hxfuse/"):
                current = cells[0].strip("`")
            mods = cells[1]
        elif len(cells) == 2:  # | module | what | (the top level)
            current, mods = "hxfuse/", cells[0]
        else:
            continue
        rows.setdefault(current, set()).update(re.findall(r"`([\w]+\.py)`", mods))
    return rows


def test_every_module_has_a_line_in_the_layout_page():
    """A newcomer finds each module's one line under its package in
    docs/layout.md; a module added without one is named here."""
    rows = _layout_rows()
    missing = [
        str(p.relative_to(REPO))
        for p in sorted((REPO / "hxfuse").rglob("*.py"))
        if p.name != "__init__.py" and p.name not in rows.get(str(p.parent.relative_to(REPO)).rstrip("/") + "/", set())
    ]
    assert not missing, "modules without a line in docs/layout.md: " + ", ".join(missing)
