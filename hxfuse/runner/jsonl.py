"""The one reader of the runner's JSON Lines output (docs/runner.md).

Every module that reads a runner output (or the ONNX Runtime harness's, which
has the same shape) reads it here: the analysis tables (hxfuse.runner.records), the
correctness check (hxfuse.runner.checks), the provenance sidecar's meta
(hxfuse.runner.provenance) and the mechanism tests (hxfuse.runner.mechanism).

A runner output is one JSON object per line, each with a ``record`` field:
first ``meta``, then ``trial``, ``verify`` (and kinds a newer runner may add),
last ``end``.  :func:`read_records` returns them as :class:`Records` (the
meta, the end record, every record by kind, each with its line number) and
raises :class:`IncompleteRunError` naming the file and the line of whatever
is wrong: a line that is not JSON (a write cut in the middle), a line that is
not a record, a first record that is not ``meta``, a second ``meta``, a
record after ``end``, no ``end`` (the runner did not finish).  Blank lines
are skipped.  ``partial=True`` is for a caller that judges an unfinished run
itself (the mechanism tests report the runner's exit status): a malformed
last line (the runner was killed while writing it) is dropped and a missing
``end`` is no error.  :func:`read_meta` reads the first line only.

Standard library only, and no other hxfuse import: the run wrapper imports
this module (through hxfuse.runner.provenance), and a change to the analysis code
must never rerun a measurement.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable


class IncompleteRunError(ValueError):
    """The file is not a complete runner output and must not be used (the
    message names the file and, where it can, the line)."""


@dataclass(frozen=True)
class Records:
    """The records of one runner output, in file order."""

    source: str
    meta: dict[str, Any]
    # (line number, record) of every record, meta and end included
    lines: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    end: dict[str, Any] | None = None

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every record, meta and end included."""
        return [r for _, r in self.lines]

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The records of one kind (``trial``, ``verify``, ...), in order."""
        return [r for _, r in self.lines if r["record"] == kind]


def decode(lines: Iterable[str], source: str = "<memory>", partial: bool = False) -> list[tuple[int, dict[str, Any]]]:
    """(line number, record) of every non-blank line.  A line that is not
    JSON, or not an object with a ``record`` field, raises
    IncompleteRunError naming *source* and the line; with *partial*, a
    malformed LAST line is dropped instead (a write the runner did not
    finish)."""
    lines = list(lines)
    last = max((i for i, ln in enumerate(lines, start=1) if ln.strip()), default=0)
    out = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            # A blank line is harmless (e.g. a trailing newline pair).
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if partial and lineno == last:
                break
            raise IncompleteRunError(
                f"{source}:{lineno}: malformed JSON ({exc.msg}); the run is truncated or corrupt"
            ) from None
        if not isinstance(obj, dict) or "record" not in obj:
            raise IncompleteRunError(f"{source}:{lineno}: not a runner record (no 'record' field)")
        out.append((lineno, obj))
    return out


def parse(lines: Iterable[str], source: str = "<memory>", partial: bool = False) -> Records:
    """:class:`Records` of the text lines of a runner output (see the module
    docstring for what is an error)."""
    records = decode(lines, source, partial)
    if not records:
        if partial:
            return Records(source=source, meta={})
        raise IncompleteRunError(f"{source}: empty file, no meta and no end record")
    first_line, first = records[0]
    if first["record"] != "meta":
        raise IncompleteRunError(f"{source}:{first_line}: first record is {first['record']!r}, expected 'meta'")
    end: dict[str, Any] | None = None
    for lineno, rec in records[1:]:
        kind = rec["record"]
        if end is not None:
            raise IncompleteRunError(f"{source}:{lineno}: {kind!r} record after the 'end' record")
        if kind == "end":
            end = rec
        elif kind == "meta":
            raise IncompleteRunError(f"{source}:{lineno}: second 'meta' record")
    if end is None and not partial:
        raise IncompleteRunError(f"{source}: no 'end' record after line {records[-1][0]}; the run did not finish")
    return Records(source=source, meta=first, lines=records, end=end)


def read_records(path: str | os.PathLike[str], partial: bool = False) -> Records:
    """:class:`Records` of a runner output file."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    return parse(lines, source=str(path), partial=partial)


def read_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The meta record (first line) of a runner output, without reading the
    rest of the file; IncompleteRunError naming the file when it is not one."""
    with open(path, encoding="utf-8") as fh:
        first = fh.readline()
    records = decode([first], str(path))
    if not records or records[0][1]["record"] != "meta":
        raise IncompleteRunError(f"{path}:1: first record is not 'meta'")
    return records[0][1]
