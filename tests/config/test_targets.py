"""hxfuse.config.targets: every target's properties (a known answer), and the rule
that no other module decides emulation by itself."""

import ast
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from hxfuse.config import targets as tg

REPO = Path(__file__).resolve().parents[2]

# name: (emulated, simulated, native, needs_sdk, hexagon, toolchain, sources, integer_only, defaults)
KNOWN = {
    "host": (False, False, True, False, False, "cc", None, {}),
    "hexagon-qemu": (
        True,
        False,
        False,
        False,
        True,
        "zig",
        "QEMU has no HVX floating point",
        {"qemu": "qemu-hexagon"},
    ),
    "hexagon": (
        False,
        False,
        False,
        True,
        True,
        "hexagon-clang",
        "its fp32 path is scalar reference code, not HVX/HMX",
        {"arch": "v73", "device_dir": "/data/local/tmp/hxfuse"},
    ),
    "hexagon-sim": (
        False,
        True,
        False,
        True,
        True,
        "hexagon-clang",
        "its fp32 path is scalar reference code, not HVX/HMX",
        {"arch": "v73"},
    ),
    "gpu": (False, False, True, False, False, "nvcc", None, {}),
    "gpu-graph": (False, False, True, False, False, "nvcc", None, {}),
}


def test_every_target_is_known():
    assert tg.NAMES == tuple(KNOWN)
    for name, (emu, sim, native, sdk, hexagon, tc, integer_only, defaults) in KNOWN.items():
        t = tg.get(name)
        got = (
            t.emulated,
            t.simulated,
            t.native,
            t.needs_sdk,
            t.hexagon,
            t.toolchain,
            t.integer_only,
            dict(t.defaults),
        )
        assert got == (emu, sim, native, sdk, hexagon, tc, integer_only, defaults), name
        assert tg.is_emulated(name) is emu
        assert t.make_target == name
        assert (REPO / "kernels" / "targets" / f"{t.make_target}.mk").is_file()
        assert t.status and t.group_b
        assert tg.info(name) == {"emulated": emu, "status": t.status, "group_b": t.group_b, "hexagon": hexagon}
    assert tg.EMULATED_TARGETS == {"hexagon-qemu"}
    assert tg.SDK_TARGETS == ("hexagon", "hexagon-sim")
    assert tg.HEXAGON_TARGETS == ("hexagon-qemu", "hexagon", "hexagon-sim")
    assert "EMULATED" in tg.get("hexagon-qemu").status
    assert "cycle model" in tg.get("hexagon-sim").status


def test_the_schema_agrees_with_it():
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    assert tuple(schema["properties"]["targets"]["items"]["enum"]) == tg.NAMES


def test_defaults_agree_with_the_schema_and_the_make_files():
    """A per-target default is said in three places (the schema fills it when
    target_settings.<target> is given, hxfuse.config.targets when it is not, the
    target's .mk for a bare make): they must agree."""
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    ts = schema["properties"]["target_settings"]["properties"]
    mk_var = {"arch": "HEXAGON_ARCH", "device_dir": "HX_DEVICE_DIR", "qemu": "QEMU_HEXAGON"}
    for name, t in tg.TARGETS.items():
        mk = (REPO / "kernels" / "targets" / f"{t.make_target}.mk").read_text()
        for inc in re.findall(r"^include (targets/\S+\.mk)$", mk, re.M):
            mk += (REPO / "kernels" / inc).read_text()
        for key, value in t.defaults.items():
            if key != "qemu":  # the schema's null means "the .mk's"
                assert ts[name]["properties"][key]["default"] == value, (name, key)
            assert re.search(rf"^{mk_var[key]} \?= {re.escape(value)}$", mk, re.M), (name, key)


def test_unknown_targets():
    assert tg.is_emulated("external") is False and tg.is_emulated(None) is False
    with pytest.raises(KeyError, match="unknown target 'nope' \\(targets: host, hexagon-qemu"):
        tg.get("nope")


@pytest.mark.parametrize(
    "value,want",
    [
        (True, True),
        (np.True_, True),
        ("true", True),
        ("True", True),
        (" TRUE ", True),
        ("1", True),
        (1, True),
        (1.0, True),
        (False, False),
        (np.False_, False),
        ("False", False),
        ("0", False),
        (0, False),
        (0.0, False),
        (None, False),
        (math.nan, False),
        ("", False),
        ("nan", False),
        ("yes", False),
    ],
)
def test_emulated_flag(value, want):
    assert tg.emulated_flag(value) is want


def test_emulated_results():
    host = pd.DataFrame({"target": ["host", "host"], "emulated": [False, False]})
    assert not tg.emulated_results("host", table=host, doc={"emulated": False})
    assert tg.emulated_results("hexagon-qemu")  # by name
    assert tg.emulated_results("host", doc={"emulated": True})  # summary.json
    assert tg.emulated_results(table=host.assign(emulated=[False, True]))  # any row of the column
    assert tg.emulated_results(table=host.assign(emulated=["False", "true"]))  # as read from CSV text
    assert tg.emulated_results(table=host.assign(target=["host", "hexagon-qemu"]))  # the target column
    assert not tg.emulated_results(table=pd.DataFrame())
    assert not tg.emulated_results("host", table=pd.DataFrame({"x": [1]}))


# --------------------------------------------------------------------------
# nobody else decides emulation


def _is_target(node: ast.AST) -> bool:
    """``TARGETS[...]`` or ``<...>.get(...)``/``get(...)``: a Target object."""
    if isinstance(node, ast.Subscript):
        v = node.value
        return (isinstance(v, ast.Name) and v.id == "TARGETS") or (isinstance(v, ast.Attribute) and v.attr == "TARGETS")
    if isinstance(node, ast.Call):
        f = node.func
        return (isinstance(f, ast.Name) and f.id == "get") or (isinstance(f, ast.Attribute) and f.attr == "get")
    return False


def _emulation_decisions(source: str, filename: str) -> list[str]:
    """Places in Python *source* that decide emulation without hxfuse.config.targets:
    a comparison with an emulated target's name (``t == "hexagon-qemu"``,
    ``t in ("hexagon-qemu", ...)``) or with ``EMULATED_TARGETS``, or a read of
    a target's ``.emulated`` property."""
    out = []

    def names_emulated(node: ast.AST) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and tg.is_emulated(n.value):
                return True
            if isinstance(n, ast.Name) and n.id == "EMULATED_TARGETS":
                return True
            if isinstance(n, ast.Attribute) and n.attr == "EMULATED_TARGETS":
                return True
        return False

    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Compare) and any(names_emulated(x) for x in [node.left, *node.comparators]):
            out.append(f"{filename}:{node.lineno}: compares with an emulated target")
        elif isinstance(node, ast.Attribute) and node.attr == "emulated" and _is_target(node.value):
            out.append(f"{filename}:{node.lineno}: reads a target's .emulated")
    return out


def test_the_scan_finds_a_decision():
    bad = (
        'if target == "hexagon-qemu":\n    pass\n'
        "x = t in EMULATED_TARGETS\n"
        'y = t in ("host", "hexagon-qemu")\n'
        "z = TARGETS[t].emulated\n"
        "w = hxtargets.get(t).emulated\n"
    )
    assert len(_emulation_decisions(bad, "x.py")) == 5
    ok = 'ok = targets.is_emulated(t)\nd = doc.get("emulated")\ne = sm.params.emulated\n'
    assert _emulation_decisions(ok, "x.py") == []


def test_no_other_module_decides_emulation():
    """Only hxfuse/config/targets.py knows which targets are emulated: the package,
    the job scripts and the workflow ask it (is_emulated, emulated_results,
    emulated_flag for a recorded value)."""
    problems = []
    files = [p for p in sorted((REPO / "hxfuse").rglob("*.py")) if p.name != "targets.py"]
    files += sorted((REPO / "workflow" / "scripts").glob("*.py"))
    for p in files:
        problems += _emulation_decisions(p.read_text(), str(p.relative_to(REPO)))
    # the Snakefile and the rules are not plain Python: no code line there
    # names an emulated target or the set of them
    quoted = re.compile(
        "|".join(rf"""["']{re.escape(t)}["']""" for t in tg.EMULATED_TARGETS) + r"|\bEMULATED_TARGETS\b"
    )
    for p in [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]:
        for i, line in enumerate(p.read_text().splitlines(), start=1):
            code = line.split("#", 1)[0]
            if quoted.search(code):
                problems.append(f"{p.relative_to(REPO)}:{i}: {line.strip()}")
    assert problems == []
