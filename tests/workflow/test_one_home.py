"""One home per mechanism: the package keeps one reader of runner output, one
reader of the machine's load, one busy-core limit and no import circle.

Each rule reads the source with ast (nothing is imported), so a second copy
fails here however it is spelled at the call; each rule also has a known
answer on a planted copy in a temporary tree, so that a rule which stopped
seeing anything would fail too.

- (a) the runner's JSON Lines are parsed only by hxfuse/runner/jsonl.py: no
  other module calls ``json.loads`` per line of a file (in a loop or
  comprehension over a file or its ``splitlines()``/``readlines()``, or on
  a ``splitlines()``/``readline()`` result), and a function named
  ``read_records`` elsewhere must hand the file to hxfuse.runner.jsonl;
- (b) the machine's load is read only by hxfuse/analysis/environment.py and
  the measurement side that writes it (the runner's provenance, the ONNX
  Runtime harness): no other module calls ``os.getloadavg``, names
  ``/proc/loadavg`` or reads a ``load_average_*`` / ``other_busy_cores_*``
  field of a record (``.get(FIELD)`` or ``[FIELD]``);
- (c) ``BUSY_PER_CORE`` and ``LOADED_PER_CORE`` are assigned only in
  hxfuse/analysis/environment.py;
- (d) no import circle among hxfuse's modules (function-level imports
  included: a circle there still ties the modules' dependencies together,
  and hxfuse.deps reruns a rule for any module its script reaches).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

JSONL_HOME = "hxfuse/runner/jsonl.py"
# The self-test ladder (the selftest rule's output) is not a runner output:
# it has no meta or end record, and a line cut by a crash is skipped by design.
JSONL_EXEMPT = {"hxfuse/runner/selftest.py"}

LOAD_HOME = "hxfuse/analysis/environment.py"
# Where the readings are taken and written, not read back: the run wrapper's
# provenance and the ONNX Runtime harness (it samples the machine as hxrun does).
LOAD_WRITERS = {"hxfuse/runner/provenance.py", "hxfuse/external/ort_records.py"}
LOAD_FIELDS = {"load_average_before", "load_average_after", "other_busy_cores_before", "other_busy_cores_after"}
LIMITS = {"BUSY_PER_CORE", "LOADED_PER_CORE"}


def _sources(root: Path) -> dict[str, ast.AST]:
    """Repository-relative path -> parsed module, for hxfuse/**/*.py and the
    workflow's job scripts."""
    files = sorted((root / "hxfuse").rglob("*.py")) + sorted((root / "workflow" / "scripts").glob("*.py"))
    return {f.relative_to(root).as_posix(): ast.parse(f.read_text(), filename=str(f)) for f in files}


def _is_call_to(node: ast.AST, names: set[str]) -> bool:
    """A call of ``x.NAME(...)`` or ``NAME(...)`` for NAME in *names*."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr in names) or (isinstance(f, ast.Name) and f.id in names)


def _contains_call_to(node: ast.AST, names: set[str]) -> bool:
    return any(_is_call_to(n, names) for n in ast.walk(node))


def _file_handles(tree: ast.AST) -> set[str]:
    """Names bound by ``with open(...) as NAME``."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if _is_call_to(item.context_expr, {"open"}) and isinstance(item.optional_vars, ast.Name):
                    out.add(item.optional_vars.id)
    return out


def _over_lines(it: ast.AST, handles: set[str]) -> bool:
    """An iterable that yields the lines of a file."""
    if isinstance(it, ast.Name) and it.id in handles:
        return True
    return _contains_call_to(it, {"splitlines", "readlines", "open"})


def jsonl_parsers(sources: dict[str, ast.AST]) -> list[str]:
    """Places outside the one reader that parse JSON Lines themselves."""
    found = []
    for path, tree in sources.items():
        if path == JSONL_HOME or path in JSONL_EXEMPT:
            continue
        handles = _file_handles(tree)
        for node in ast.walk(tree):
            loops = []
            if isinstance(node, (ast.For, ast.AsyncFor)):
                loops = [(node.iter, node.body)]
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                loops = [(g.iter, [node]) for g in node.generators]
            for it, body in loops:
                if _over_lines(it, handles) and any(_contains_call_to(b, {"loads"}) for b in body):
                    found.append(f"{path}:{node.lineno}: json.loads per line of a file")
            if _is_call_to(node, {"loads"}) and any(
                _contains_call_to(a, {"splitlines", "readline", "readlines"}) for a in node.args
            ):
                found.append(f"{path}:{node.lineno}: json.loads on a file's lines")
            if isinstance(node, ast.FunctionDef) and node.name == "read_records":
                delegates = any(
                    _is_call_to(n, {"read_records"})
                    and isinstance(n.func, ast.Attribute)
                    and isinstance(n.func.value, ast.Name)
                    and n.func.value.id == "jsonl"
                    for n in ast.walk(node)
                )
                if not delegates:
                    found.append(f"{path}:{node.lineno}: read_records that does not call hxfuse.runner.jsonl")
    return sorted(set(found))


def load_readers(sources: dict[str, ast.AST]) -> list[str]:
    """Places outside the one environment module that read the machine's load."""
    found = []
    for path, tree in sources.items():
        if path == LOAD_HOME or path in LOAD_WRITERS:
            continue
        for node in ast.walk(tree):
            where = f"{path}:{getattr(node, 'lineno', 0)}"
            if (isinstance(node, ast.Attribute) and node.attr == "getloadavg") or (
                isinstance(node, ast.Name) and node.id == "getloadavg"
            ):
                found.append(f"{where}: os.getloadavg")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "/proc/loadavg" in node.value:
                found.append(f"{where}: /proc/loadavg")
            elif _is_call_to(node, {"get"}) and node.args and _load_field(node.args[0]):
                found.append(f"{where}: .get({node.args[0].value!r})")
            elif isinstance(node, ast.Subscript) and _load_field(node.slice):
                found.append(f"{where}: [{node.slice.value!r}]")
    return sorted(set(found))


def _load_field(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in LOAD_FIELDS


def limit_assignments(sources: dict[str, ast.AST]) -> list[str]:
    """Assignments of the busy-core and load limits outside their home."""
    found = []
    for path, tree in sources.items():
        if path == LOAD_HOME:
            continue
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            for t in targets:
                for n in ast.walk(t):
                    name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
                    if name in LIMITS:
                        found.append(f"{path}:{node.lineno}: {name} assigned")
    return sorted(found)


def _module_name(path: str) -> str:
    """hxfuse/a/b.py -> a.b; hxfuse/a/__init__.py -> a."""
    parts = Path(path).with_suffix("").parts[1:]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(sources: dict[str, ast.AST]) -> dict[str, set[str]]:
    """hxfuse module -> the hxfuse modules it imports (anywhere in its body),
    names relative to the package (``analysis.stats``; a package is its
    ``__init__``)."""
    mods = {_module_name(p): tree for p, tree in sources.items() if p.startswith("hxfuse/")}
    graph: dict[str, set[str]] = {}
    for name, tree in mods.items():
        package = name if name and any(m.startswith(name + ".") for m in mods) else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                dotted = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".") if package else []
                    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    base_name = ".".join(base + ([node.module] if node.module else []))
                    stem = "hxfuse" + ("." + base_name if base_name else "")
                else:
                    stem = node.module or ""
                dotted = [f"{stem}.{a.name}" for a in node.names] + [stem]
            else:
                continue
            for d in dotted:
                if d != "hxfuse" and not d.startswith("hxfuse."):
                    continue
                rel = d[len("hxfuse.") :] if d != "hxfuse" else ""
                # the longest prefix that is a module: ``from hxfuse.a import f`` is an edge to a
                while rel and rel not in mods:
                    rel = rel.rpartition(".")[0]
                if rel in mods and rel != name:
                    edges.add(rel)
        graph[name] = edges
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# --------------------------------------------------------------------------
# the repository


def test_one_reader_of_runner_json_lines():
    assert jsonl_parsers(_sources(REPO)) == []


def test_one_reader_of_the_machine_load():
    assert load_readers(_sources(REPO)) == []


def test_one_busy_core_limit():
    assert limit_assignments(_sources(REPO)) == []


def test_no_import_circle():
    assert import_circles(import_graph(_sources(REPO))) == []


# --------------------------------------------------------------------------
# known answers: each rule sees a planted copy


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, ast.AST]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "workflow" / "scripts").mkdir(parents=True, exist_ok=True)
    return _sources(tmp_path)


PLAIN_READER = "import json\ndef read_records(p):\n    return [json.loads(x) for x in open(p)]\n"


def test_a_second_json_lines_parser_is_found(tmp_path):
    src = _tree(
        tmp_path,
        {
            "hxfuse/runner/jsonl.py": PLAIN_READER,
            "hxfuse/a.py": PLAIN_READER,
            "hxfuse/b.py": (
                "import json\n"
                "def last(p):\n"
                "    with open(p) as fh:\n"
                "        for line in fh:\n"
                "            r = json.loads(line)\n"
                "    return json.loads(open(p).read().splitlines()[-1])\n"
            ),
            "hxfuse/c.py": (
                "import json\nfrom hxfuse.runner import jsonl\n"
                "def read_records(p):\n    return jsonl.read_records(p).records\n"
                "def maps(m):\n    return {k: json.loads(v) for k, v in m.items()}\n"
            ),
        },
    )
    found = jsonl_parsers(src)
    assert [f.split(":")[0] for f in found] == ["hxfuse/a.py", "hxfuse/a.py", "hxfuse/b.py", "hxfuse/b.py"], found
    assert any("read_records that does not" in f for f in found)


def test_a_second_load_reader_is_found(tmp_path):
    src = _tree(
        tmp_path,
        {
            "hxfuse/analysis/environment.py": "def f(meta):\n    return meta.get('load_average_before')\n",
            "hxfuse/a.py": "import os\ndef f():\n    return os.getloadavg()[0]\n",
            "hxfuse/b.py": "def f():\n    return open('/proc/loadavg').read()\n",
            "hxfuse/c.py": (
                "def f(meta, end):\n    return meta.get('other_busy_cores_before'), end['load_average_after']\n"
            ),
            "hxfuse/d.py": "COLUMNS = ('load_average_before',)\ndef f(env):\n    return env.get('online_cores')\n",
        },
    )
    found = load_readers(src)
    assert sorted({f.split(":")[0] for f in found}) == ["hxfuse/a.py", "hxfuse/b.py", "hxfuse/c.py"], found
    assert len([f for f in found if f.startswith("hxfuse/c.py")]) == 2


def test_a_second_busy_core_limit_is_found(tmp_path):
    src = _tree(
        tmp_path,
        {
            "hxfuse/analysis/environment.py": "BUSY_PER_CORE = 0.25\n",
            "hxfuse/a.py": "BUSY_PER_CORE = 0.25\n",
            "hxfuse/b.py": "from hxfuse.analysis.environment import BUSY_PER_CORE\nLIMIT = BUSY_PER_CORE\n",
            "hxfuse/c.py": "class K:\n    LOADED_PER_CORE: float = 0.5\n",
        },
    )
    assert [f.split(":")[0] for f in limit_assignments(src)] == ["hxfuse/a.py", "hxfuse/c.py"]


def test_an_import_circle_is_found(tmp_path):
    src = _tree(
        tmp_path,
        {
            "hxfuse/__init__.py": "",
            "hxfuse/p/__init__.py": "",
            "hxfuse/p/a.py": "from hxfuse.p import b\n",
            # a function-level import closes the circle
            "hxfuse/p/b.py": "def f():\n    from hxfuse.p.c import g\n    return g\n",
            "hxfuse/p/c.py": "from . import a\ndef g():\n    pass\n",
            "hxfuse/q.py": "from hxfuse.p.a import b\nimport hxfuse.p.c\n",
        },
    )
    graph = import_graph(src)
    assert graph["q"] == {"p.a", "p.c"} and graph["p.c"] == {"p.a", "p"}
    assert import_circles(graph) == [{"p.a", "p.b", "p.c"}]
