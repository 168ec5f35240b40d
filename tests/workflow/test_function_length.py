"""No function in hxfuse/ or the runners' C is too long without a reason.

In C a function's length runs from the first line of its declaration
(return type included) to its closing brace, and may be at most ``LIMIT``
(80) lines.  Python is formatted by ``ruff format``, which spreads one
statement over as many lines as its arguments need, so physical lines would
measure the formatter; a Python function's length is instead the number of
lines on which one of its statements begins (the ``def`` line and each
decorator included), at most ``PY_LIMIT`` (60: about 80 lines as written by
hand).  A function over its limit must
say why it stays long on the line immediately above that first line, in a
comment holding ``long:``::

    # long: one flat table of the runner's options, a branch per option
    def parse(...):

    /* long: one flat table of the runner's options, a branch per option */
    static int parse(int argc, char **argv, ...) {

Python functions are found with ``ast`` (nested functions and methods
included).  C functions are found by brace matching over the source with
comments, string and character literals and preprocessor lines blanked
out: a ``{`` at file level whose declaration ends in ``)`` opens a
function body (struct bodies and initialisers do not end in ``)``).  Split a
long function along the lines of its jobs rather than adding a reason,
unless splitting would hurt (a flat table, a state machine read top to
bottom).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIMIT = 80
PY_LIMIT = 60
REASON = "long:"
# The runners' C: the shared core, each runner's own sources, hxrun-ap's
# driver and skel (ap/), the Hexagon platform and backends (hexagon/) and the
# FastRPC loopback stand-in (loopback/), their test programs included.
C_DIRS = ("common", "hxrun", "hxgraph", "hxserve", "ap", "hexagon", "loopback")
# Long functions that may not carry a "long:" comment (a file another
# branch is reworking): (path, declaration as reported) -> why.  Empty now;
# an entry that no longer matches a long function fails the test, so the
# list only shrinks.
C_EXCEPTIONS: dict[tuple[str, str], str] = {}


def _has_reason(lines: list[str], first: int) -> bool:
    """Line *first* (1-based) is preceded by a comment holding ``long:``."""
    if first < 2:
        return False
    above = lines[first - 2].strip()
    return above.startswith(("#", "/*", "//", "*")) and REASON in above


def python_long_functions(text: str, limit: int | None = None) -> list[tuple[str, int, int, bool]]:
    """(name, first line, length in statement lines, has a reason) of every
    function over *limit* (PY_LIMIT) statement lines."""
    limit = PY_LIMIT if limit is None else limit
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            starts = {s.lineno for s in ast.walk(node) if isinstance(s, ast.stmt)}
            starts |= {d.lineno for d in node.decorator_list}
            length = len(starts)
            if length > limit:
                out.append((node.name, first, length, _has_reason(lines, first)))
    return out


_C_TOKENS = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


def _blank_c(text: str) -> str:
    """*text* with comments, literals and preprocessor lines replaced by
    spaces (newlines kept, so line numbers stay)."""
    text = _C_TOKENS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out, continued = [], False
    for line in text.split("\n"):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.endswith("\\")
        out.append(" " * len(line) if directive else line)
    return "\n".join(out)


def c_long_functions(text: str) -> list[tuple[str, int, int, bool]]:
    """(declaration, first line, length, has a reason) of every C function over LIMIT lines."""
    lines = text.splitlines()
    code = _blank_c(text)
    out = []
    depth, decl_start, body = 0, 0, None  # decl_start: offset after the last file-level ; } or start
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                decl = code[decl_start:i].strip()
                body = (decl, decl_start) if decl.endswith(")") else None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if body is not None:
                    decl, start = body
                    lead = len(code[start:]) - len(code[start:].lstrip())
                    first = code.count("\n", 0, start + lead) + 1
                    last = code.count("\n", 0, i) + 1
                    length = last - first + 1
                    if length > LIMIT:
                        name = " ".join(decl.split())[:80]
                        out.append((name, first, length, _has_reason(lines, first)))
                body = None
                decl_start = i + 1
        elif ch == ";" and depth == 0:
            decl_start = i + 1
    return out


def violations(root: Path = REPO, exceptions: dict | None = None) -> list[str]:
    """Every function in *root*'s hxfuse/ and runner C sources over LIMIT lines
    without a reason (or an entry in *exceptions*, C_EXCEPTIONS by default)."""
    exceptions = C_EXCEPTIONS if exceptions is None else exceptions
    sources = [(p, python_long_functions, PY_LIMIT, "statement lines") for p in sorted((root / "hxfuse").rglob("*.py"))]
    sources += [
        (p, c_long_functions, LIMIT, "lines")
        for p in sorted(p for d in C_DIRS for p in (root / "kernels" / d).glob("*.c"))
    ]
    bad, excepted = [], set()
    for path, find, limit, unit in sources:
        for name, first, length, reason in find(path.read_text()):
            key = (str(path.relative_to(root)), name)
            if key in exceptions:
                excepted.add(key)
            elif not reason:
                bad.append(
                    f"{path.relative_to(root)}:{first}: {name} is {length} {unit} (> {limit}) "
                    f"without a '{REASON}' comment on the line above"
                )
    bad += [
        f"{p}: {n}: listed as a long-function exception but no longer long: drop it"
        for p, n in sorted(set(exceptions) - excepted)
    ]
    return bad


def test_no_long_function_without_a_reason():
    bad = violations()
    assert not bad, "split these, or say why they stay long:\n" + "\n".join(bad)


def test_checker_catches_a_planted_long_python_function():
    def src(total: int, reason: str | None = None, decorator: bool = False) -> str:
        lines = ["import os", ""]
        if reason:
            lines.append(f"# {reason}")
        if decorator:
            lines.append("@staticmethod")
        lines.append("def planted():")
        body = total - 1 - (1 if decorator else 0)
        lines += [f"    x{i} = {i}" for i in range(body)]
        return "\n".join(lines) + "\n"

    assert python_long_functions(src(PY_LIMIT)) == []
    assert python_long_functions(src(PY_LIMIT + 1)) == [("planted", 3, PY_LIMIT + 1, False)]
    # the decorator counts, and the reason goes above it
    assert python_long_functions(src(PY_LIMIT + 1, decorator=True)) == [("planted", 3, PY_LIMIT + 1, False)]
    assert python_long_functions(src(PY_LIMIT + 1, "long: a flat table", decorator=True))[0][3]
    assert python_long_functions(src(PY_LIMIT + 1, "long: a flat table"))[0][3]
    # a comment without the marker is no reason
    assert not python_long_functions(src(PY_LIMIT + 1, "a flat table"))[0][3]
    # nested functions are checked too
    # a statement the formatter spreads over many lines is one statement line
    spread = "def spread():\n    x = f(\n" + "        1,\n" * (2 * PY_LIMIT) + "    )\n"
    assert python_long_functions(spread) == []
    nested = "def outer():\n" + "\n".join("    " + line for line in src(PY_LIMIT + 1).splitlines()[2:]) + "\n"
    assert [f[0] for f in python_long_functions(nested)] == ["outer", "planted"]


def test_checker_catches_a_planted_long_c_function():
    def src(total: int, reason: str | None = None) -> str:
        lines = [
            "#include <stdio.h>",
            '#define BRACE "{"',
            "static const int table[] = {1, 2,",
            "    3};",
            "struct s { int a; };",
        ]
        if reason:
            lines.append(f"/* {reason} */")
        lines += ["static int", "planted(int a,", "        int b) {"]
        lines += ['    a += b; /* { */ puts("}");' for _ in range(total - 5)]
        lines += ["    return a;", "}", "int after(void) { return 0; }"]
        return "\n".join(lines) + "\n"

    assert c_long_functions(src(LIMIT)) == []
    found = c_long_functions(src(LIMIT + 1))
    assert len(found) == 1 and found[0][1:] == (6, LIMIT + 1, False), found
    assert found[0][0].startswith("static int planted(int a")
    assert c_long_functions(src(LIMIT + 1, "long: a state machine read top to bottom"))[0][3]
    assert not c_long_functions(src(LIMIT + 1, "a state machine"))[0][3]


def test_the_repository_scan_sees_planted_functions(tmp_path):
    """The scan the repository test runs flags a planted long function in
    each language, and accepts it once the reason is there."""
    py = tmp_path / "hxfuse" / "planted.py"
    c = tmp_path / "kernels" / "common" / "planted.c"
    py.parent.mkdir()
    c.parent.mkdir(parents=True)
    py_body = "def planted():\n" + "".join(f"    x{i} = {i}\n" for i in range(PY_LIMIT))
    c_body = "int planted(void) {\n    int a = 0;\n" + "    a++;\n" * (LIMIT - 3) + "    return a;\n}\n"
    py.write_text(py_body)
    c.write_text(c_body)
    assert violations(tmp_path, {}) == [
        f"hxfuse/planted.py:1: planted is {PY_LIMIT + 1} statement lines (> {PY_LIMIT}) without a 'long:' comment "
        "on the line above",
        f"kernels/common/planted.c:1: int planted(void) is {LIMIT + 1} lines (> {LIMIT}) without a 'long:' comment "
        "on the line above",
    ]
    # a named exception covers it; one that matches nothing is reported
    assert violations(tmp_path, {("kernels/common/planted.c", "int planted(void)"): "why"}) == [
        f"hxfuse/planted.py:1: planted is {PY_LIMIT + 1} statement lines (> {PY_LIMIT}) without a 'long:' comment "
        "on the line above",
    ]
    assert violations(tmp_path, {("kernels/common/gone.c", "int gone(void)"): "why"})[-1] == (
        "kernels/common/gone.c: int gone(void): listed as a long-function exception but no longer long: drop it"
    )
    # every runner folder is scanned
    for d in ("ap", "hexagon", "loopback"):
        other = tmp_path / "kernels" / d / "planted.c"
        other.parent.mkdir()
        other.write_text(c_body)
        assert any(v.startswith(f"kernels/{d}/planted.c:1:") for v in violations(tmp_path, {})), d
        other.unlink()
    py.write_text("# long: planted\n" + py_body)
    c.write_text("/* long: planted */\n" + c_body)
    assert violations(tmp_path, {}) == []
