"""hxfuse.runner.jsonl, the one reader of runner output: records by kind, errors
that name file and line, a cut last line, and its users (io, checks,
provenance, mechanism) reporting what it found."""

import json

import pytest

from hxfuse.runner import integrity
from hxfuse.runner import jsonl
from hxfuse.runner import mechanism
from hxfuse.runner import provenance
from hxfuse.runner.checks import check_point
from hxfuse.runner.records import IncompleteRunError, read_run


def _lines(synth):
    return [json.dumps(r) for r in synth.synthetic_run(rounds=1, warmup=0)]


def _signed(path, body_lines):
    """A file whose end record's count and digest match *body_lines* (so the
    integrity check passes and the reader is what judges it)."""
    head = "".join(line + "\n" for line in body_lines).encode()
    end = {
        "record": "end",
        "status": "ok",
        "records": len(body_lines),
        "digest": f"fnv1a64:{integrity.fnv1a64(head):016x}",
    }
    path.write_bytes(head + (json.dumps(end) + "\n").encode())
    return path


def test_records_by_kind(tmp_path, synth):
    recs = synth.synthetic_run(rounds=2, warmup=1)
    p = synth.write_jsonl(tmp_path / "r.jsonl", recs)
    got = jsonl.read_records(p)
    assert got.source == str(p)
    assert got.meta == recs[0] and got.end == recs[-1]
    assert got.records == recs
    assert got.of("trial") == [r for r in recs if r["record"] == "trial"]
    assert len(got.of("verify")) == 1 and got.of("nothing") == []
    assert [n for n, _ in got.lines] == list(range(1, len(recs) + 1))
    assert jsonl.read_meta(p) == recs[0]
    # the same exception type wherever it is imported from
    assert IncompleteRunError is jsonl.IncompleteRunError


def test_a_malformed_line_names_file_and_line(tmp_path, synth):
    lines = _lines(synth)
    lines[3] = lines[3][:20]
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(lines) + "\n")
    for read in (jsonl.read_records, read_run):
        with pytest.raises(IncompleteRunError, match=rf"^{p}:4: malformed JSON \("):
            read(p)
    p.write_text("\n".join([lines[0], "", "[1, 2]", *lines[1:]]) + "\n")
    with pytest.raises(IncompleteRunError, match=rf"^{p}:3: not a runner record"):
        jsonl.read_records(p)


def test_read_meta_names_the_file(tmp_path, synth):
    lines = _lines(synth)
    p = tmp_path / "m.jsonl"
    p.write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(IncompleteRunError, match=rf"^{p}:1: first record is not 'meta'"):
        jsonl.read_meta(p)
    p.write_text(lines[0][:30] + "\n")
    with pytest.raises(IncompleteRunError, match=rf"^{p}:1: malformed JSON"):
        provenance.read_meta(p)


def test_structure(synth):
    meta, end = json.dumps(synth.meta_record()), json.dumps(synth.end_record(0))
    with pytest.raises(IncompleteRunError, match="^x: empty file"):
        jsonl.parse([], "x")
    with pytest.raises(IncompleteRunError, match="^x:1: first record is 'end', expected 'meta'"):
        jsonl.parse([end], "x")
    with pytest.raises(IncompleteRunError, match="^x:2: second 'meta' record"):
        jsonl.parse([meta, meta, end], "x")
    with pytest.raises(IncompleteRunError, match="^x:3: 'end' record after the 'end' record"):
        jsonl.parse([meta, end, end], "x")
    with pytest.raises(IncompleteRunError, match="^x: no 'end' record after line 1; the run did not finish"):
        jsonl.parse([meta], "x")


def test_a_cut_last_line(synth):
    """A run killed while writing: an error by default (the analysis must not
    use it), the records before it with partial=True (the mechanism tests
    judge such a run by the runner's exit status)."""
    lines = _lines(synth)
    cut = lines[:-1] + [lines[-1][:10]]
    with pytest.raises(IncompleteRunError, match=f"^x:{len(lines)}: malformed JSON"):
        jsonl.parse(cut, "x")
    got = jsonl.parse(cut, "x", partial=True)
    assert got.end is None and len(got.records) == len(lines) - 1
    assert jsonl.parse([], "x", partial=True).records == []
    # only the last line may be cut
    with pytest.raises(IncompleteRunError, match="^x:2: malformed JSON"):
        jsonl.parse([lines[0], lines[1][:10], *lines[2:]], "x", partial=True)


def test_the_check_names_the_malformed_line(tmp_path, synth):
    """A line the runner itself wrote malformed passes the integrity check
    (the digest covers it as written); the check fails the point naming it."""
    lines = _lines(synth)[:-1]
    lines[2] = lines[2][:25]
    p = _signed(tmp_path / "raw.jsonl", lines)
    integrity.verify_end_record(p)
    res = check_point(p, tmp_path / "npy")
    assert res["status"] == "failed" and res["integrity"] == "ok"
    assert len(res["reasons"]) == 1 and res["reasons"][0].startswith(f"{p}:3: malformed JSON (")


def test_mechanism_reports_a_malformed_output_as_a_failed_check(tmp_path, synth):
    out = tmp_path / "a.jsonl"
    runner = tmp_path / "fake-runner"
    lines = _lines(synth)
    runner.write_text("#!/bin/sh\n# --out FILE ...\nprintf '%s\\n' '" + lines[0] + "' '[1]' > \"$2\"\n")
    runner.chmod(0o755)
    with pytest.raises(mechanism.RunnerError, match=rf"runner output: {out}:2: not a runner record"):
        mechanism._run(runner, out)
    # a cut last line: the records before it, and the runner's status decides
    runner.write_text("#!/bin/sh\nprintf '%s\\n%s' '" + lines[0] + '\' \'{"record": "tri\' > "$2"\nexit 3\n')
    proc, recs = mechanism._run(runner, out)
    assert proc.returncode == 3 and recs == [json.loads(lines[0])]
    with pytest.raises(mechanism.RunnerError, match="runner exited 3"):
        mechanism._ok(proc, recs, "x")
