"""Code dependencies of the pipeline's jobs, derived from the imports.

A rule's script imports some ``hxfuse`` modules, and those import others.
:func:`script_modules` follows every ``import`` statement (at any depth in
the file: a function-level import runs when the function does) from a
script through the package and its subpackages, and returns the module
files it reaches, with the ``__init__.py`` of every package on the way
(importing ``hxfuse.graph.stats`` runs ``hxfuse/__init__.py`` and
``hxfuse/graph/__init__.py``).  The Snakefile gives each rule exactly these
files as inputs, computed once at startup, so editing a module reruns
exactly the jobs whose code ran it, and no hand-written list can fall behind.

Modules are named by their path inside the package without ``.py``
(``graph/stats``, ``config/load``; a package by its ``__init__``:
``graph/__init__``).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PACKAGE = "hxfuse"
PACKAGE_DIR = Path(__file__).resolve().parent


def _resolve(dotted: list[str], package_dir: Path) -> str | None:
    """The module a dotted name inside the package denotes (a file, or a
    package's ``__init__``), or None when it is not in the package."""
    if not dotted:
        return "__init__"
    rel = "/".join(dotted)
    if (package_dir / f"{rel}.py").is_file():
        return rel
    if (package_dir / rel / "__init__.py").is_file():
        return f"{rel}/__init__"
    return None


def _targets(base: list[str], names: list[str], package_dir: Path) -> set[str]:
    """``from <base> import <names>``: the base module, and each name that
    is itself a submodule of it."""
    out = {m for m in [_resolve(base, package_dir)] if m}
    out |= {m for n in names if (m := _resolve([*base, n], package_dir)) and not m.endswith("__init__")}
    return out


def _statements(tree: ast.AST):
    """Every statement of *tree*, at any depth (function and class bodies,
    branches, handlers, match cases).  An import is a statement, so the
    expressions, most of a tree's nodes, need no visit: a third of the
    time of ``ast.walk`` for the same imports."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                todo.extend(v for v in value if isinstance(v, (ast.stmt, ast.excepthandler, ast.match_case)))


def _imported(tree: ast.AST, current: str | None, package_dir: Path = PACKAGE_DIR) -> set[str]:
    """Package modules (``graph/stats``, ...) imported in *tree*.  *current*:
    the module's own name inside the package (for relative imports), None
    for a script outside it."""
    here = current.split("/")[:-1] if current else []
    found: set[str] = set()
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == PACKAGE:
                    found |= {m for m in [_resolve(parts[1:], package_dir)] if m}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside the package
                if current is None or node.level - 1 > len(here):
                    continue
                base = here[: len(here) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == PACKAGE:
                base = node.module.split(".")[1:]
            else:
                continue
            found |= _targets(base, [a.name for a in node.names], package_dir)
    return found


def _with_packages(mod: str) -> set[str]:
    """*mod* and the ``__init__`` of every package that contains it."""
    parts = mod.split("/")[:-1]
    return {mod, "__init__"} | {"/".join(parts[: i + 1]) + "/__init__" for i in range(len(parts))}


@lru_cache(maxsize=None)
def _direct(m: str, package_dir: Path) -> frozenset[str]:
    """What module *m* imports itself, with its packages' ``__init__``.
    Cached: every closure below reaches the same few dozen files, and
    parsing each once instead of once per closure is most of the Snakefile's
    start-up (about 1.2 of 2.9 s for a dry run, paid by every invocation)."""
    tree = ast.parse((package_dir / f"{m}.py").read_text(), filename=f"{m}.py")
    return frozenset(_imported(tree, m, package_dir) | _with_packages(m))


@lru_cache(maxsize=None)
def module_closure(name: str, package_dir: Path = PACKAGE_DIR) -> frozenset[str]:
    """*name* and every package module it imports, transitively, with the
    packages' ``__init__`` on the way."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo.extend(_direct(m, package_dir) - seen)
    return frozenset(seen)


def script_modules(script: str | Path, package_dir: Path = PACKAGE_DIR) -> list[str]:
    """The module files (absolute paths, sorted) a script runs when it imports
    what it imports; empty when it imports nothing of the package."""
    tree = ast.parse(Path(script).read_text(), filename=str(script))
    mods: set[str] = set()
    for m in _imported(tree, None, package_dir):
        mods |= module_closure(m, package_dir)
    return sorted(str(package_dir / f"{m}.py") for m in mods)
