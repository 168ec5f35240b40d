"""kernels/hxrun/options.h from hxrun's option table (:mod:`hxfuse.runner.cli`).

The table in cli.py is the one source of hxrun's options: their integer
bounds, defaults and named values.  This module writes them as a C header
that kernels/hxrun/args.c parses with, so a changed bound, default or named
value is one edit in cli.py plus the regenerated header:

    python3 -m hxfuse.runner.cli_c > kernels/hxrun/options.h

kernels/Makefile runs it when cli.py is newer than the header (and writes the
header only when its text changes); tests/runner/test_runner_cli.py
fails while the committed header differs from what the table gives.  The
header is committed so that a build without Python (a device toolchain's
host) still builds.

For each option ``--foo-bar`` (``HX_OPT_FOO_BAR``): ``_LO``/``_HI`` (the
inclusive bounds of each integer) and ``_RANGE`` (``"[lo, hi]"``, as the
error messages print them); ``_DEFAULT`` (an integer default; ``_DEFAULT_0``..
for a comma list of integers; ``_DEFAULT_INDEX``: the default's place among
the named values); ``_CHOICES`` (an initializer of the named values) and
``_NCHOICES``.  args.c asserts at compile time that the bounds the runner's
own arrays depend on (HX_MAX_VWORKERS, ...) and its enums' order agree.

Standard library only (cli.py's rule).
"""

from __future__ import annotations

import sys

from hxfuse.runner.cli import OPTIONS, Option

HEADER = "kernels/hxrun/options.h"


def _name(o: Option) -> str:
    return "HX_OPT_" + o.flag.removeprefix("--").replace("-", "_").upper()


def _c_int(v: int) -> str:
    """An integer literal of the right width (bounds reach 2^64 - 1)."""
    if v >= 1 << 63:
        return f"{v}ULL"
    if v >= 1 << 31 or v < -(1 << 31):
        return f"{v}LL"
    return str(v)


def _c_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def option_lines(o: Option) -> list[str]:
    """The #defines of one option."""
    n, out = _name(o), []
    if o.lo is not None:
        out += [f"#define {n}_LO {_c_int(o.lo)}", f"#define {n}_HI {_c_int(o.hi)}"]
        out.append(f"#define {n}_RANGE {_c_str(f'[{o.lo}, {o.hi}]')}")
    if o.multiple != 1:
        out.append(f"#define {n}_MULTIPLE {o.multiple}")
    if o.choices:
        out.append(f"#define {n}_CHOICES {{{', '.join(map(_c_str, o.choices))}}}")
        out.append(f"#define {n}_NCHOICES {len(o.choices)}")
    d = o.default
    if isinstance(d, bool) or d is None:
        pass
    elif isinstance(d, int):
        out.append(f"#define {n}_DEFAULT {_c_int(d)}")
    elif o.kind == "ints":
        out += [f"#define {n}_DEFAULT_{i} {_c_int(v)}" for i, v in enumerate(d)]
    elif isinstance(d, str) and d in o.choices:
        out.append(f"#define {n}_DEFAULT_INDEX {o.choices.index(d)}")
    if isinstance(d, bool):
        out.append(f"#define {n}_DEFAULT {int(d)}")
    return out


def _aligned(defines: list[str]) -> list[str]:
    """#define lines with their values in one column (clang-format's
    AlignConsecutiveMacros, so the generated header passes the C lint)."""
    parts = [d.removeprefix("#define ").split(" ", 1) for d in defines]
    width = max(len(name) for name, _ in parts)
    return [f"#define {name.ljust(width)} {value}" for name, value in parts]


def header() -> str:
    """The text of kernels/hxrun/options.h."""
    lines = [
        "/* GENERATED from hxfuse/runner/cli.py by `python3 -m hxfuse.runner.cli_c`",
        " * (kernels/Makefile reruns it): do not edit; edit the table and regenerate.",
        " * hxrun's options: bounds, defaults and named values (hxfuse/runner/cli_c.py",
        " * says what each name means). */",
        "#ifndef HX_OPTIONS_H",
        "#define HX_OPTIONS_H",
    ]
    for o in OPTIONS:
        body = option_lines(o)
        if body:
            lines += ["", f"/* {o.flag} */", *_aligned(body)]
    lines += ["#endif", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    sys.stdout.write(header())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
