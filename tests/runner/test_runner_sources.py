"""kernels/Makefile's lists of each runner's files (print-SOURCES-<runner>),
which the workflow's build rules take as inputs: one runner's own files are
never another's, so editing hxgraph or hxserve does not rebuild hxrun (and
rerun every measurement)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hxfuse.runner.sources import runner_sources

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"


def listed(runner: str, target: str = "host") -> set[str]:
    return {str(Path(p).relative_to(KERNELS)) for p in runner_sources(runner, target)}


def test_each_runner_lists_its_own_files_and_the_common_core_only():
    own = {r: listed(r) for r in ("hxrun", "hxgraph", "hxserve")}
    for runner, files in own.items():
        dirs = {f.split("/")[0] for f in files}
        assert dirs == {"common", runner}, (runner, dirs)
        assert all((KERNELS / f).is_file() for f in files)
    # every file of the runner's own directory, headers included
    for runner, files in own.items():
        assert {str(p.relative_to(KERNELS)) for p in (KERNELS / runner).glob("*.[ch]")} <= files


def test_hxrun_gets_the_headers_of_the_core_and_no_other_runners_file():
    files = listed("hxrun")
    assert {"common/platform.h", "common/kernels.h", "hxrun/exec.h", "hxrun/main.c"} <= files
    assert not any(f.startswith(("hxgraph/", "hxserve/")) for f in files)


def test_a_hexagon_target_adds_its_backend_and_still_no_graph_file():
    pytest.importorskip("ziglang")
    files = listed("hxrun", "hexagon-qemu")
    assert "hexagon/kernels_hvx.c" in files and "hexagon/kernels_hexagon.h" in files
    assert "common/kernels_host.c" not in files
    assert not any(f.startswith("hxgraph/") for f in files)


def test_an_unknown_runner_is_refused():
    with pytest.raises(ValueError, match="no runner"):
        runner_sources("hxfoo", "host")


# ---- The C sources' structure: no include circles, OS headers in the platform files only ----
#
# A unit is a .c file.  A function defined (not static) in exactly one unit
# belongs to it, and a unit that names another's function depends on it: the
# shared header declares it, but the dependency is between the two files.
# A circle is two or more units that depend on each other, around: then
# neither can be read, tested or replaced without the other.  A function
# defined in several units is an interface whose implementation the build
# chooses (platform.h's functions, hx_kernels_fast, main, the SDK stand-ins),
# not a dependency on any one of them.

_C_TOKENS = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_C_ID = re.compile(r"[A-Za-z_]\w*")


def _blank_c(text: str) -> str:
    """*text* without comments, literals and preprocessor lines (newlines kept)."""
    text = _C_TOKENS.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out, continued = [], False
    for line in text.split("\n"):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.endswith("\\")
        out.append(" " * len(line) if directive else line)
    return "\n".join(out)


def c_unit(text: str) -> tuple[set[str], set[str]]:
    """(functions the unit defines with external linkage, identifiers it names)."""
    code = _blank_c(text)
    defined, depth, start = set(), 0, 0
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                decl = code[start:i].strip()
                head = decl[: decl.find("(")] if decl.endswith(")") else ""
                name = re.search(r"(\w+)\s*$", head)
                if name and not re.search(r"\bstatic\b", head):
                    defined.add(name.group(1))
            depth += 1
        elif ch == "}":
            depth -= 1
            start = i + 1 if depth == 0 else start
        elif ch == ";" and depth == 0:
            start = i + 1
    return defined, set(_C_ID.findall(code))


def unit_circles(units: dict[str, str]) -> list[list[str]]:
    """The circles (strongly connected sets of 2+ units, sorted) among *units*
    (name -> source text), each with the functions that close it."""
    scanned = {u: c_unit(t) for u, t in units.items()}
    owners: dict[str, list[str]] = {}
    for u, (defined, _) in scanned.items():
        for f in defined:
            owners.setdefault(f, []).append(u)
    deps = {u: {owners[f][0] for f in named if len(owners.get(f, ())) == 1} - {u} for u, (_, named) in scanned.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(u: str) -> None:  # Tarjan's strongly connected components
        index[u] = low[u] = len(index)
        stack.append(u)
        for v in sorted(deps[u]):
            if v not in index:
                visit(v)
                low[u] = min(low[u], low[v])
            elif v in stack:
                low[u] = min(low[u], index[v])
        if low[u] == index[u]:
            comp = []
            while True:
                v = stack.pop()
                comp.append(v)
                if v == u:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for u in sorted(units):
        if u not in index:
            visit(u)
    return sorted(circles)


def _kernel_sources(pattern: str) -> dict[str, str]:
    return {
        str(p.relative_to(KERNELS)): p.read_text()
        for p in sorted(KERNELS.rglob(pattern))
        if "build" not in p.relative_to(KERNELS).parts
    }


def test_no_two_c_files_depend_on_each_other():
    circles = unit_circles(_kernel_sources("*.c"))
    assert not circles, f"units that depend on each other (split one so the dependency runs one way): {circles}"


def test_the_circle_check_finds_a_planted_circle():
    a = '#include "x.h"\nstatic int helper(void) { return 1; }\nint a_fn(void) { return b_fn() + helper(); }\n'
    b = '#include "x.h"\nint b_fn(void) {\n    /* a_fn() in a comment is no use */\n    return 2;\n}\n'
    c = "int c_fn(void) { return b_fn(); }\n"
    assert unit_circles({"a.c": a, "b.c": b, "c.c": c}) == []
    b_uses_a = b.replace("return 2;", "return a_fn();")
    assert unit_circles({"a.c": a, "b.c": b_uses_a, "c.c": c}) == [["a.c", "b.c"]]
    # around three units
    three = {"a.c": a, "b.c": b.replace("return 2;", "return c_fn();"), "c.c": c.replace("b_fn", "a_fn")}
    assert unit_circles(three) == [["a.c", "b.c", "c.c"]]
    # a function two units define (an interface the build chooses) is no dependency
    both = {"a.c": a + "int now(void) { return 0; }\n", "b.c": b_uses_a, "p.c": "int a_fn(void) { return 0; }\n"}
    assert unit_circles(both) == []


def test_no_header_includes_itself_around_a_circle():
    inc = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
    headers = _kernel_sources("*.h")
    edges = {
        h: {str((KERNELS / h).parent.joinpath(i).resolve().relative_to(KERNELS.resolve())) for i in inc.findall(t)}
        for h, t in headers.items()
    }
    # a header's includes resolved against -Icommon too
    for h, t in headers.items():
        edges[h] |= {"common/" + i for i in inc.findall(t) if "common/" + i in headers}
    edges = {h: {i for i in e if i in headers} for h, e in edges.items()}
    circles: list[list[str]] = []
    seen: set[str] = set()

    def walk(h: str, path: list[str]) -> None:
        if h in path:
            circles.append(path[path.index(h) :])
            return
        if h in seen:
            return
        seen.add(h)
        for i in sorted(edges[h]):
            walk(i, path + [h])

    for h in sorted(headers):
        walk(h, [])
    assert not circles, circles


# OS interfaces (threads, processes, the loader, file descriptors, POSIX
# clocks and sleeps) belong to the platform layer, so that a new target is a
# new platform file.  time.h is standard C; its POSIX clocks are not.
OS_HEADERS = re.compile(
    r"^\s*#\s*include\s*<(pthread\.h|unistd\.h|sched\.h|dlfcn\.h|fcntl\.h|signal\.h|dirent\.h|sys/[^>]+|linux/[^>]+)>",
    re.M,
)
POSIX_TIME = re.compile(r"\b(clock_gettime|clock_nanosleep|nanosleep|CLOCK_[A-Z_]+)\b")
# The platform files: the POSIX platform and its own self-test steps (each
# target file names both), the Hexagon folder (QuRT is its OS and its
# backends call it), the loopback stand-in of the FastRPC library.
PLATFORM = ("common/platform_", "hxrun/selftest_posix.c", "hexagon/", "loopback/")
# Named exceptions, each with its reason (a stale one fails too).
OS_EXCEPTIONS = {
    "ap/ap_main.c": "the teardown's bounded join detaches a stuck thread: platform.h has no detach yet",
    "ap/exec_ap.c": "the dspqueue callbacks' mutex: platform.h has no mutex yet",
    "ap/deadline.c": "the watchdog's condition variable with a CLOCK_MONOTONIC timed wait: platform.h has none yet",
    "ap/clock_align.c": "CLOCK_MONOTONIC_RAW beside CLOCK_MONOTONIC for the clock alignment: platform.h has one clock",
    "ap/rpc_dl.c": "dlopen of libcdsprpc.so, the AP's FastRPC loader",
    "ap/test_deadline.c": "a standalone test program of ap/deadline.c that sleeps",
}


def os_interfaces(text: str) -> list[str]:
    """The OS headers *text* includes and the POSIX clock calls it makes."""
    code = _C_TOKENS.sub(" ", text.replace("#include <", "#include@<"))  # keep <...> of includes
    code = code.replace("#include@<", "#include <")
    return OS_HEADERS.findall(code) + sorted(set(POSIX_TIME.findall(_blank_c(text))))


def test_os_headers_only_in_the_platform_files():
    found = {f: os_interfaces(t) for f, t in _kernel_sources("*.[ch]").items() if not f.startswith(PLATFORM)}
    found = {f: v for f, v in found.items() if v and "sdk_decls" not in f}
    bad = {f: v for f, v in found.items() if f not in OS_EXCEPTIONS}
    assert not bad, f"OS interfaces outside the platform files (move them behind common/platform.h): {bad}"
    stale = sorted(set(OS_EXCEPTIONS) - set(found))
    assert not stale, f"exceptions that no longer include an OS header: drop them from OS_EXCEPTIONS: {stale}"


def test_the_os_header_check_sees_a_planted_include():
    assert os_interfaces("#include <stdio.h>\n#include <time.h>\nint f(void) { return 0; }\n") == []
    assert os_interfaces("#include <stdio.h>\n#include <pthread.h>\n") == ["pthread.h"]
    assert os_interfaces("#  include <sys/mman.h>\n") == ["sys/mman.h"]
    assert os_interfaces('/* #include <unistd.h> */\nconst char *s = "nanosleep";\n') == []
    assert os_interfaces("#include <time.h>\nvoid f(struct timespec *t) { clock_gettime(CLOCK_MONOTONIC, t); }\n") == [
        "CLOCK_MONOTONIC",
        "clock_gettime",
    ]


# ---- Runners apart from reporters ----
#
# hxrun's protocol (protocol.c, and the interference sampling it calls)
# measures and fills the structs of hxrun/report.h; only the reporter writes
# records, so a new output format is a new reporter and the protocol stays as
# it is.  The executor's own contributions to the records (exec.h's
# hx_exec_write_*: a split executor's DSP side) are called by the reporter.
MEASURING = ("hxrun/protocol.c", "hxrun/interference.c", "hxrun/interference.h", "hxrun/protocol.h", "hxrun/report.h")


def json_use(text: str) -> list[str]:
    """The JSON writer's header and names that *text* uses."""
    inc = re.findall(r'^\s*#\s*include\s*"([^"]*json\.h)"', text, re.M)
    return inc + sorted(set(re.findall(r"\bhx_json_\w+", _blank_c(text))))


def test_the_protocol_writes_no_record_itself():
    found = {f: json_use((KERNELS / f).read_text()) for f in MEASURING}
    assert not any(found.values()), f"JSON writing outside the reporter (move it to hxrun/report_jsonl.c): {found}"
    assert json_use((KERNELS / "hxrun" / "report_jsonl.c").read_text())  # the check sees the reporter's
    assert json_use('#include "json.h"\nvoid f(hx_json *j) { hx_json_str(j, "k", "v"); }\n') == [
        "json.h",
        "hx_json_str",
    ]
