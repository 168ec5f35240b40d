"""The pipeline's intermediate files, read by the job scripts: a damaged one
(cut short, emptied, overwritten, a column gone) stops its job with one line
naming the file and the command that redoes it, never a traceback.

A file between two jobs (a summary table, a check verdict, a provenance
sidecar, a runner output, a graph) is damaged when it was changed after the
job that wrote it: a disk filled up, a copy was interrupted, someone edited
it.  That is not a bug in the reading code, and the fix is always the same:
rerun the job that writes it and what depends on it.  So:

- :class:`DamagedFile` (an IntegrityError, like a raw file that differs from
  its provenance sidecar) carries the one-line message: ``hxfuse: <file>:
  damaged (<why>); redo it with: snakemake --cores 4 -f <file> all``;
- :func:`read_json` is the one reading of an intermediate JSON object (the
  aggregation's check verdicts and sidecars come through it);
- :func:`check_input` checks one input file by its kind before a script uses
  it: JSON parses, a table (``.csv``, ``.csv.gz``) is complete (every row has
  the header's fields, the last line ends, gzip is whole) and has the
  columns its readers select by (:data:`KEY_COLUMNS`), a runner output
  (``.jsonl``) reads with hxfuse.runner.jsonl, the one reader;
- :func:`job` wraps a job script's body: its stderr to the job's log, every
  input checked, and each damaged file (or an IntegrityError or
  IncompleteRunError from the body) printed as one line, in the log and on
  the terminal, with exit status 1.

The command carries the ``--config``/``--configfile`` the workflow was run
with (:func:`config_args`: the workflow puts them in ``HXFUSE_CONFIG_ARGS``
for its jobs), so a rerun plans the same study.

Standard library only at import time (pandas is not needed to read a table's
rows): the aggregation imports this module, the measurement jobs do not.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Iterator, Sequence

from hxfuse.runner.integrity import IntegrityError
from hxfuse.runner.jsonl import IncompleteRunError, read_records

CONFIG_ENV = "HXFUSE_CONFIG_ARGS"

# The columns every reader of a table selects by (its keys and the values
# drawn), per kind of table (a regular expression on the path).  A table
# without one of them was not written by its job.
KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    r"(^|/)graph/summary\.csv$": ("point", "model", "label", "failed"),
    r"(^|/)graph/profile\.csv$": ("step", "class", "ready", "point"),
    r"(^|/)graph/trials\.csv\.gz$": ("point", "replicate", "round", "group"),
    r"(^|/)serve/summary\.csv$": ("point", "rate", "window_us", "policy", "metric", "median", "lo", "hi"),
    r"(^|/)serve/requests\.csv\.gz$": ("point", "rate", "window_us", "policy", "latency_ns"),
    r"(^|/)serve/replays\.csv$": ("point", "rate", "window_us", "policy"),
    r"(^|/)serve/trace/.*\.csv$": ("arrival_ns", "kind", "size", "deadline_ns"),
    r"(^|/)external(/.*)?\.csv$": ("sweep", "point", "workload"),
    r"(^|/)results/[^/]+/summary\.csv$": ("target", "sweep", "point_id", "point", "x", "label", "workload", "group"),
    r"(^|/)results/[^/]+/trials\.csv\.gz$": (
        "sweep",
        "point_id",
        "point",
        "x",
        "label",
        "replicate",
        "workload",
        "group",
    ),
}


class DamagedFile(IntegrityError):
    """An intermediate file is damaged; the message names it and the command that redoes it."""

    def __init__(self, path: str | os.PathLike, why: str, redo: str | os.PathLike | None = None):
        self.path = str(path)
        super().__init__(f"hxfuse: {path}: damaged ({why}); redo it with: {redo_command(redo or path)}")


def config_args(argv: Sequence[str]) -> list[str]:
    """The ``--configfile``/``--config`` part of a Snakemake command line
    (Snakemake's own parser reads *argv*), as arguments to repeat."""
    if not any(a.startswith(("--config", "-C")) for a in argv):
        return []  # the common case, without building Snakemake's parser
    from snakemake.cli import get_argument_parser

    args, _ = get_argument_parser().parse_known_args(list(argv))
    out = []
    if args.configfile:
        out += ["--configfile", *map(str, args.configfile)]
    if args.config:
        out += ["--config", *map(str, args.config)]
    return out


def redo_command(path: str | os.PathLike, target: str | None = None, extra: Sequence[str] | None = None) -> str:
    """The command that redoes *path* (an output of some job) and everything
    downstream of it: force its job, then *target* (``searches`` for the
    search's files, which `all` does not make; else ``all``).  *extra*: the
    config arguments to repeat (default: the workflow's, from the
    environment)."""
    path = str(path)
    target = target or ("searches" if re.search(r"(^|/)search/", path) else "all")
    if extra is None:
        extra = shlex.split(os.environ.get(CONFIG_ENV, ""))
    return shlex.join(["snakemake", "--cores", "4", "-f", path, target, *extra])


def read_json(path: str | os.PathLike, redo: str | os.PathLike | None = None) -> Any:
    """The JSON document of an intermediate file, or DamagedFile (redone by
    *redo*'s job: default the file's own)."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise DamagedFile(path, getattr(exc, "strerror", None) or str(exc), redo) from None
    if not text.strip():
        raise DamagedFile(path, "empty", redo)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise DamagedFile(path, f"not valid JSON: {exc}", redo) from None


def read_json_object(path: str | os.PathLike, redo: str | os.PathLike | None = None) -> dict:
    """:func:`read_json` of a file that holds one JSON object."""
    doc = read_json(path, redo)
    if not isinstance(doc, dict):
        raise DamagedFile(path, "not a JSON object", redo)
    return doc


def _table_text(path: Path) -> str:
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", newline="") as fh:
            return fh.read()
    return path.read_text()


def check_table(path: str | os.PathLike, columns: Sequence[str] | None = None) -> None:
    """DamagedFile unless *path* is a whole CSV table: not empty, the last
    line ended, every row with the header's number of fields, and, when
    it has rows, the *columns* (default: its kind's :data:`KEY_COLUMNS`) in
    the header."""
    path = Path(path)
    try:
        text = _table_text(path)
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # gzip cut short: EOFError
        raise DamagedFile(path, f"unreadable: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.strip():
        raise DamagedFile(path, "empty")
    if not text.endswith("\n"):
        raise DamagedFile(path, "the last line does not end: cut short")
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        raise DamagedFile(path, f"not a CSV table: {exc}") from None
    header = rows[0]
    for i, row in enumerate(rows[1:], start=2):
        if row and len(row) != len(header):
            raise DamagedFile(path, f"line {i} has {len(row)} fields, the header {len(header)}")
    if len(rows) == 1:
        return  # no rows (no point survived): nothing is selected from it
    if columns is None:
        columns = next((c for pat, c in KEY_COLUMNS.items() if re.search(pat, path.as_posix())), ())
    missing = [c for c in columns if c not in header]
    if missing:
        raise DamagedFile(path, f"no column {', '.join(missing)}")


def check_input(path: str | os.PathLike) -> None:
    """DamagedFile when the input file *path* is damaged, by its kind (see
    the module's docstring); other kinds (code, templates, binaries,
    folders) are not checked here."""
    p = Path(path)
    if p.is_dir():
        return
    name = p.name
    if not p.exists():
        raise DamagedFile(p, "missing")
    if name.endswith(".json"):
        read_json(p)
    elif name.endswith((".csv", ".csv.gz")):
        check_table(p)
    elif name.endswith(".jsonl"):
        try:
            read_records(p)
        except IncompleteRunError as exc:
            raise DamagedFile(p, _why(str(exc), str(p))) from None


def _why(message: str, path: str) -> str:
    """*message* without the file name it starts with (the line names it)."""
    return re.sub(rf"^{re.escape(path)}(:\d+)?:\s*", "", message) or message


def _files(inputs: Any) -> list[str]:
    """The file names of a job's inputs (a Snakemake InputFiles, or a list)."""
    out: list[str] = []
    for f in inputs:
        if isinstance(f, (list, tuple)):
            out += _files(f)
        else:
            out.append(str(f))
    return out


def damage_line(exc: Exception, inputs: Sequence[str] = ()) -> str:
    """The one line for *exc*: an IntegrityError's own message, or an
    IncompleteRunError (a runner output read in the body) as the damaged
    input it names."""
    if isinstance(exc, IncompleteRunError):
        msg = str(exc)
        path = next((f for f in inputs if msg.startswith(f"{f}:")), msg.split(":", 1)[0])
        return str(DamagedFile(path, _why(msg, path)))
    return str(exc)


@contextlib.contextmanager
def job(sm: Any, unchecked: Sequence[str] = ()) -> Iterator[None]:
    """Run a job script's body (``with intermediate.job(snakemake): ...``):
    stderr goes to the job's log; every input but the named *unchecked*
    ones (raw runner output a check judges itself, marking its point
    failed) is checked first (:func:`check_input`); damaged inputs, found
    then or by the body, end the job with one line per file in the log and
    on the terminal, status 1, and no traceback."""
    if sm.log:
        sys.stderr = open(sm.log[0], "w")
    inputs = _files(sm.input)
    skip = set(_files([sm.input.get(name, []) for name in unchecked]))
    lines = []
    for f in inputs:
        if f not in skip:
            try:
                check_input(f)
            except DamagedFile as exc:  # every damaged input, each on its line
                lines.append(str(exc))
    if not lines:
        try:
            yield
        except (IntegrityError, IncompleteRunError) as exc:
            lines.append(damage_line(exc, inputs))
    if lines:
        text = "\n".join(lines)
        print(text, file=sys.stderr, flush=True)
        if sys.stderr is not sys.__stderr__:
            print(text, file=sys.__stderr__, flush=True)
        sys.exit(1)
