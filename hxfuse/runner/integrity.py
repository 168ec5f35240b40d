"""Integrity of raw runner output: nothing changed since the runner wrote it.

Two layers, so that a changed byte anywhere is caught before it becomes a
number in a table:

1. The runner ends each JSON Lines file with an ``end`` record carrying
   ``records`` (how many records precede it) and ``digest``
   (``fnv1a64:<16 hex>``, FNV-1a 64 of every byte before the end record,
   newlines included; kernels/common/json.c).  :func:`verify_end_record`
   recomputes both; the run wrapper refuses an output that fails, and the
   ``check`` step marks the point failed naming the file.
2. The run wrapper stores the SHA-256 of every raw file (the JSON Lines and
   each ``.npy``) in the provenance sidecar (``raw_sha256``).  The check
   step recomputes them all (:func:`sidecar_problems`) and marks a point
   whose files differ failed; aggregation recomputes the JSON Lines' and
   refuses a mismatch.  The ``.npy`` files are the check's alone: the
   workflow deletes them once the check has read them (``temp()``; Snakemake's
   ``--notemp`` keeps them), so only the hashes outlive it, in the sidecar.

Standard library only: the run wrapper imports this module, and a change to
the analysis code must never rerun a measurement.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


class IntegrityError(ValueError):
    """A raw file differs from what the runner wrote (the message names it)."""


def fnv1a64(data: bytes, h: int = FNV_OFFSET) -> int:
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & _MASK
    return h


def verify_end_record(path: str | os.PathLike) -> dict:
    """The end record of *path* after checking its record count and digest.

    Raises IntegrityError naming the file when the end record is missing or
    malformed, or when the bytes before it do not match its ``records`` or
    ``digest``."""
    path = Path(path)
    data = path.read_bytes()
    body = data[:-1] if data.endswith(b"\n") else data
    cut = body.rfind(b"\n") + 1
    try:
        end = json.loads(body[cut:])
    except ValueError:
        raise IntegrityError(
            f"{path}: the last line is not a JSON record (output truncated or changed after the runner wrote it)"
        ) from None
    if not isinstance(end, dict) or end.get("record") != "end":
        raise IntegrityError(f"{path}: no end record (the runner did not finish, or the file was changed)")
    if "digest" not in end or "records" not in end:
        raise IntegrityError(
            f"{path}: the end record has no digest/records (a runner older "
            "than the integrity check wrote it: rerun the point)"
        )
    head = data[:cut]
    n = head.count(b"\n")
    if n != end["records"]:
        raise IntegrityError(
            f"{path}: {n} records before the end record, the runner wrote {end['records']} (file changed after the run)"
        )
    algo, _, want = str(end["digest"]).partition(":")
    if algo != "fnv1a64":
        raise IntegrityError(f"{path}: unknown digest {end['digest']!r}")
    got = f"{fnv1a64(head):016x}"  # ~0.1 s per MB
    if got != want:
        raise IntegrityError(
            f"{path}: digest of the records is fnv1a64:{got}, the runner "
            f"wrote {end['digest']} (file changed after the run)"
        )
    return end


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def raw_hashes(jsonl: str | os.PathLike, npy_dir: str | os.PathLike | None) -> dict[str, str]:
    """SHA-256 of every raw file of one replicate: ``{"jsonl": ..., "npy/<name>": ...}``."""
    out = {"jsonl": sha256_file(jsonl)}
    if npy_dir and Path(npy_dir).is_dir():
        for f in sorted(Path(npy_dir).rglob("*")):
            if f.is_file():
                out["npy/" + f.relative_to(npy_dir).as_posix()] = sha256_file(f)
    return out


def sha256_problems(
    stored: dict | None, jsonl: str | os.PathLike, npy_dir: str | os.PathLike | None = None
) -> list[str]:
    """Files whose SHA-256 differs from the provenance sidecar's ``raw_sha256``
    (empty: all match).  A sidecar without hashes is a problem too."""
    if not stored:
        return [f"{jsonl}: its provenance sidecar has no raw_sha256 (rerun the point)"]
    problems = []
    for key, want in sorted(stored.items()):
        if key == "jsonl":
            f = Path(jsonl)
        elif npy_dir is not None and key.startswith("npy/"):
            f = Path(npy_dir) / key[4:]
        else:
            continue
        if not f.is_file():
            problems.append(f"{f}: missing (the provenance sidecar lists it)")
        elif sha256_file(f) != want:
            problems.append(f"{f}: SHA-256 differs from its provenance sidecar (file changed after the run)")
    return problems


def sidecar_problems(
    provenance: str | os.PathLike, jsonl: str | os.PathLike, npy_dir: str | os.PathLike | None
) -> list[str]:
    """:func:`sha256_problems` of one replicate against its provenance sidecar
    file, every ``.npy`` it lists included; an unreadable sidecar is a problem."""
    try:
        stored = json.loads(Path(provenance).read_text()).get("raw_sha256")
    except (OSError, ValueError, AttributeError) as exc:
        return [f"{provenance}: provenance sidecar unreadable ({exc})"]
    return sha256_problems(stored, jsonl, npy_dir)
