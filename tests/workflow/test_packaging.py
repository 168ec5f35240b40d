"""The package ships every subpackage: what pyproject.toml tells setuptools
to find is every folder of hxfuse/ with an ``__init__.py``, and every
``__init__.py`` is empty (a package is a folder, not an API of its own)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

REPO = Path(__file__).resolve().parents[2]


def _on_disk() -> set[str]:
    return {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "hxfuse").rglob("__init__.py")
        if "build" not in p.parts
    }


def test_setuptools_finds_every_subpackage():
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "packages" in tool and "find" in tool["packages"], "pyproject.toml: use [tool.setuptools.packages.find]"
    found = set(find_packages(where=str(REPO), include=tool["packages"]["find"]["include"]))
    assert found == _on_disk(), found ^ _on_disk()


def test_every_init_is_empty():
    full = [str(p.relative_to(REPO)) for p in (REPO / "hxfuse").rglob("__init__.py") if p.read_text().strip()]
    assert full == []
