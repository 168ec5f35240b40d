"""hxfuse.runner.checks: the numpy checksum port, the references and whole-point checks."""

import json
import shutil
import subprocess

import numpy as np
import pytest

from hxfuse.runner import checks
from hxfuse.runner import integrity
from pipeline_util import REPO

MASK = (1 << 64) - 1


def checksum_reference(data: bytes) -> int:
    """Literal transcription of kernels/common/checksum.c in plain Python ints."""
    h = 0
    n = len(data)
    words = n // 8
    for i in range(words):
        w = int.from_bytes(data[8 * i : 8 * i + 8], "little")
        h = (h + ((w ^ 0x9E3779B97F4A7C15) * ((((i + 1) * 0xBF58476D1CE4E5B9) & MASK) | 1))) & MASK
    if n % 8:
        w = int.from_bytes(data[8 * words :] + b"\0" * (8 - n % 8), "little")
        h = (h + ((w ^ 0x9E3779B97F4A7C15) * ((((words + 1) * 0xBF58476D1CE4E5B9) & MASK) | 1))) & MASK
    return h


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 64, 1001])
def test_checksum_matches_the_c_algorithm(n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()
    assert checks.hx_checksum(data) == checksum_reference(data)


def test_checksum_is_position_weighted():
    a = np.arange(32, dtype=np.uint64)
    b = a.copy()
    b[[3, 4]] = b[[4, 3]]
    assert checks.hx_checksum(a) != checks.hx_checksum(b)


def test_task_checksum_weights_outputs():
    y, s = np.ones(16, np.float32), np.zeros(4, np.float32)
    expect = (checks.hx_checksum(y) + 3 * checks.hx_checksum(s)) & MASK
    assert checks.task_checksum([y, s]) == expect


def test_i16_activation_reference_exact():
    x = np.array([[-32768, -4097, -4096, -1, 0, 1, 4095, 4096, 32767]], dtype=np.int16)
    y = checks.hswish_passes_i16(x, 1)
    g = np.clip(x.astype(np.int64) + 4096, 0, 8192)
    assert np.array_equal(y, ((x.astype(np.int64) * g) >> 13).astype(np.int16))
    assert y[0, 0] == 0 and y[0, -1] == 32767


def meta(passes=1, row_bytes=8):
    return {"tasks": {"V": {"passes": passes}, "D": {"row_bytes": row_bytes}}}


def test_check_outputs_fp32_within_tolerance_and_outside():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((8, 32)).astype(np.float32)
    B = rng.standard_normal((32, 4)).astype(np.float32)
    C = (A @ B).astype(np.float32)
    X = rng.standard_normal((4, 16)).astype(np.float32)
    Y = checks.silu_passes_f32(X, 2).astype(np.float32)
    arrays = {"M_A": A, "M_B": B, "M_C": C, "V_X": X, "V_Y": Y, "V_rowsum": Y.sum(axis=1), "V_rowmax": Y.max(axis=1)}
    reasons, detail = checks.check_outputs(meta(passes=2), arrays)
    assert reasons == [] and detail["M.C"]["mismatches"] == 0
    bad = dict(arrays, M_C=C.copy())
    bad["M_C"][3, 2] += 0.01
    reasons, _ = checks.check_outputs(meta(passes=2), bad)
    assert len(reasons) == 1 and "M.C: 1 of 32 elements outside tolerance" in reasons[0]
    reasons, _ = checks.check_outputs(meta(passes=1), arrays)  # wrong pass count
    assert any(r.startswith("V.y") for r in reasons)


def test_check_outputs_integers_exact():
    rng = np.random.default_rng(1)
    A = rng.integers(0, 256, (4, 16), dtype=np.uint8)
    B = rng.integers(-128, 128, (16, 3), dtype=np.int8)
    C = A.astype(np.int32) @ B.astype(np.int32)
    src = rng.integers(0, 256, (5, 16), dtype=np.uint8)
    dst = np.zeros((5, 8), np.uint8)
    dst[:, :8] = src[:, :8]
    arrays = {"M_A": A, "M_B": B, "M_C": C, "D_src": src, "D_dst": dst}
    assert checks.check_outputs(meta(row_bytes=8), arrays)[0] == []
    C2 = C.copy()
    C2[0, 0] += 1
    dst2 = dst.copy()
    dst2[4, 7] ^= 1
    reasons, _ = checks.check_outputs(meta(row_bytes=8), dict(arrays, M_C=C2, D_dst=dst2))
    assert any("M.C: 1 of 12 elements differ" in r for r in reasons)
    assert any("D.dst: 1 of 40 elements differ" in r and "(4, 7)" in r for r in reasons)


# --------------------------------------------------------------------------
# on real runner output


@pytest.fixture(scope="module")
def runner():
    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("needs make and a C compiler: apt-get install build-essential")
    subprocess.run(["make", "-C", str(REPO / "kernels"), "-j2"], check=True, capture_output=True)
    return REPO / "kernels" / "build" / "host" / "hxrun"


def run_point(runner, tmp_path, *args):
    out = tmp_path / "t.jsonl"
    npy = tmp_path / "npy"
    subprocess.run(
        [
            str(runner),
            "--out",
            str(out),
            "--npy-dir",
            str(npy),
            "--warmup",
            "1",
            "--rounds",
            "3",
            "--m-shape",
            "32,32,32",
            "--v-shape",
            "16,128",
            "--d-shape",
            "32,256",
            *args,
        ],
        check=True,
        capture_output=True,
    )
    return out, npy


@pytest.mark.parametrize("workload,precision", [("mvd", "fp32"), ("mv", "u8i8"), ("md", "fp32")])
def test_real_runner_output_passes(runner, tmp_path, workload, precision):
    out, npy = run_point(runner, tmp_path, "--workloads", workload, "--precision", precision)
    res = checks.check_point(out, npy)
    assert res["status"] == "ok", res["reasons"]
    wl = res["checksums"][workload]
    assert wl["runner"] == wl["numpy"] and set(wl["runner"]) == set(workload.upper())
    assert res["trial_checksums"]["checked"] > 0 and res["trial_checksums"]["mismatches"] == 0


def test_corrupted_output_fails(runner, tmp_path):
    out, npy = run_point(runner, tmp_path, "--workloads", "mvd", "--precision", "u8i8")
    verify = next(json.loads(l) for l in out.read_text().splitlines() if '"verify"' in l)
    path = npy / verify["files"]["V_Y"]
    y = np.load(path)
    y[0, 0] ^= 1
    np.save(path, y)
    res = checks.check_point(out, npy)
    assert res["status"] == "failed"
    assert any("V.y: 1 of" in r for r in res["reasons"])
    assert any("task V checksum" in r for r in res["reasons"])


def _sidecar(tmp_path, out, npy):
    """The run wrapper's provenance sidecar, as far as the check reads it."""
    side = tmp_path / "t.provenance.json"
    side.write_text(json.dumps({"raw_sha256": integrity.raw_hashes(out, npy)}))
    return side


def test_the_sidecar_hashes_pass_untouched_output(runner, tmp_path):
    out, npy = run_point(runner, tmp_path, "--workloads", "mvd")
    res = checks.check_point(out, npy, provenance=_sidecar(tmp_path, out, npy))
    assert res["status"] == "ok" and res["sidecar_sha256"] == "ok", res["reasons"]


def test_a_planted_wrong_output_fails_its_point_naming_it(runner, tmp_path):
    """The check is the last reader of the verification round's arrays (the
    workflow deletes them after it): a wrong output planted after the run is
    named twice, by its SHA-256 against the sidecar, and, with the sidecar
    made to agree (as if the runner itself had written it), by the numpy
    reference."""
    out, npy = run_point(runner, tmp_path, "--workloads", "mvd")
    side = _sidecar(tmp_path, out, npy)
    verify = next(json.loads(l) for l in out.read_text().splitlines() if '"verify"' in l)
    path = npy / verify["files"]["M_C"]
    c = np.load(path)
    c[3, 5] += 1.0
    np.save(path, c)
    res = checks.check_point(out, npy, provenance=side)
    assert res["status"] == "failed" and res["sidecar_sha256"] == "failed"
    assert any(f"{path}: SHA-256 differs from its provenance sidecar" in r for r in res["reasons"]), res["reasons"]
    resealed = _sidecar(tmp_path, out, npy)
    res = checks.check_point(out, npy, provenance=resealed)
    assert res["status"] == "failed" and res["sidecar_sha256"] == "ok"
    assert any("M.C: 1 of" in r and "(3, 5)" in r for r in res["reasons"]), res["reasons"]
    # a missing array is named too, never skipped
    path.unlink()
    res = checks.check_point(out, npy, provenance=resealed)
    assert any(f"{path}: missing (the provenance sidecar lists it)" in r for r in res["reasons"]), res["reasons"]
    assert any("cannot load M_C" in r for r in res["reasons"]), res["reasons"]


def test_tampered_trial_checksum_fails(runner, tmp_path):
    out, npy = run_point(runner, tmp_path, "--workloads", "mv")
    lines = out.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["record"] == "trial" and not rec["empty"] and not rec["warmup"]:
            rec["tasks"][0]["checksum"] = "0000000000000000"
            lines[i] = json.dumps(rec)
            break
    # as if the runner itself had written the bad checksum: reseal the end
    # record (records, digest) so that the integrity check passes
    body = "".join(ln + "\n" for ln in lines[:-1])
    end = json.loads(lines[-1])
    end["digest"] = f"fnv1a64:{integrity.fnv1a64(body.encode()):016x}"
    out.write_text(body + json.dumps(end) + "\n")
    res = checks.check_point(out, npy)
    assert res["integrity"] == "ok"
    assert res["status"] == "failed"
    assert res["trial_checksums"]["mismatches"] == 1


def test_incomplete_output_fails(runner, tmp_path):
    out, npy = run_point(runner, tmp_path, "--workloads", "mv")
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:-1]) + "\n")  # drop the end record
    res = checks.check_point(out, npy)
    assert res["status"] == "failed" and "no end record" in res["reasons"][0], res["reasons"]
    assert str(out) in res["reasons"][0]


def test_flipped_timing_digit_fails_naming_the_file(runner, tmp_path):
    """A one-digit change in a trial's timing field (nothing else) makes the
    check fail naming the file: the end record's digest no longer matches.
    At 50ee96f this passed silently into the trials table."""
    out, npy = run_point(runner, tmp_path, "--workloads", "mv")
    text = out.read_text()
    i = text.index('"end":', text.index('"record":"trial"')) + len('"end":')
    digit = text[i + 3]
    out.write_text(text[: i + 3] + ("1" if digit != "1" else "2") + text[i + 4 :])
    res = checks.check_point(out, npy)
    assert res["status"] == "failed" and res["integrity"] == "failed"
    assert f"{out}: digest of the records" in res["reasons"][0], res["reasons"]
    # the untouched file passes
    out.write_text(text)
    assert checks.check_point(out, npy)["status"] == "ok"


def _reseal(out, lines):
    """Rewrite a raw file as if the runner had written *lines* (records
    without the end record): recompute the end record's digest."""
    body = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines)
    end = json.loads(out.read_text().splitlines()[-1])
    end["digest"] = f"fnv1a64:{integrity.fnv1a64(body.encode()):016x}"
    out.write_text(body + json.dumps(end) + "\n")


def _strip_files(out, workload, names=None):
    recs = [json.loads(ln) for ln in out.read_text().splitlines()[:-1]]
    for r in recs:
        if r["record"] == "verify" and r["workload"] == workload:
            if names is None:
                del r["files"]
            else:
                for n in names:
                    del r["files"][n]
    _reseal(out, recs)


@pytest.mark.parametrize("workload", ["mv", "md"])
def test_verify_record_without_npy_files_fails(runner, tmp_path, workload):
    """Every workload's verify record must list its .npy files: a checksum
    the runner merely claims is no evidence.  The first workload of a
    two-workload run was accepted without any numeric check before."""
    out, npy = run_point(runner, tmp_path, "--workloads", "mv,md", "--precision", "u8i8")
    assert checks.check_point(out, npy)["status"] == "ok"
    _strip_files(out, workload)
    res = checks.check_point(out, npy)
    assert res["integrity"] == "ok"
    assert res["status"] == "failed"
    assert f"{workload}: verify record lists no .npy files" in res["reasons"][0], res["reasons"]


def test_verify_record_missing_one_input_fails(runner, tmp_path):
    out, npy = run_point(runner, tmp_path, "--workloads", "mvd", "--precision", "u8i8")
    _strip_files(out, "mvd", ["M_A"])
    res = checks.check_point(out, npy)
    assert res["status"] == "failed"
    assert "mvd: verify record lists no M_A for task M" in res["reasons"], res["reasons"]
    # the other tasks are still compared numerically
    assert set(res["outputs"]["mvd"]) >= {"V.y", "D.dst"} and "M.C" not in res["outputs"]["mvd"]
