"""Code dependencies of the pipeline's jobs, derived from the imports.

A rule's script imports some ``hxfuse`` modules, and those import others.
:func:`script_modules` follows every ``import`` statement (at any depth in
the file: a function-level import runs when the function does) from a
script through the package, and returns the module files it reaches, the
package's ``__init__.py`` included (importing any submodule runs it).  The
Snakefile gives each rule exactly these files as inputs, computed once at
startup, so editing a module reruns exactly the jobs whose code ran it, and
no hand-written list can fall behind.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PACKAGE = "hxfuse"
PACKAGE_DIR = Path(__file__).resolve().parent


def _imported(tree: ast.AST, current: str | None, package_dir: Path = PACKAGE_DIR) -> set[str]:
    """hxfuse submodule names (``config``, ``io``, ...) imported in *tree*.
    *current*: the module's own name inside the package (for relative
    imports), None for a script outside it."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == PACKAGE and len(parts) > 1:
                    names.add(parts[1])
                elif parts[0] == PACKAGE:
                    names.add("__init__")
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside the package
                if current is None or node.level > 1:
                    continue
                base = node.module.split(".")[0] if node.module else None
            elif node.module and node.module.split(".")[0] == PACKAGE:
                parts = node.module.split(".")
                base = parts[1] if len(parts) > 1 else None
            else:
                continue
            if base is not None:
                names.add(base)
            else:  # from hxfuse import x, y / from . import x, y
                names.update(a.name for a in node.names)
    return {n for n in names if (package_dir / f"{n}.py").is_file()}


@lru_cache(maxsize=None)
def module_closure(name: str, package_dir: Path = PACKAGE_DIR) -> frozenset[str]:
    """*name* and every package module it imports, transitively."""
    seen, todo = set(), [name]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        tree = ast.parse((package_dir / f"{m}.py").read_text(), filename=f"{m}.py")
        todo.extend(_imported(tree, m, package_dir) - seen)
    return frozenset(seen)


def script_modules(script: str | Path, package_dir: Path = PACKAGE_DIR) -> list[str]:
    """The module files (absolute paths, sorted) a script runs when it imports
    what it imports; empty when it imports nothing of the package."""
    tree = ast.parse(Path(script).read_text(), filename=str(script))
    mods: set[str] = set()
    for m in _imported(tree, None, package_dir):
        mods |= module_closure(m, package_dir)
    if mods:
        mods.add("__init__")
    return sorted(str(package_dir / f"{m}.py") for m in mods)
