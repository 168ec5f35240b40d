"""The host backend's per-ISA kernel variants (kernels/common/kernels_host*.c)
against the scalar reference, on every variant this CPU executes.

A C driver links the variant tables directly (not through the run-time
choice) and checks, for shapes that are not multiples of any panel size:
  - fp32 GEMM: whole runs within the checks' fp32 tolerance of the reference
    (|C - ref| <= 1e-4 * (|A| @ |B|) + 1e-6 sqrt(k)), and the AVX2 and AVX-512
    variants bit-identical to each other (one FMA chain per element);
  - run_rows over splits at odd rows (not panel multiples): each split's rows
    bit-identical to the whole run and no other row written, for the default
    and two explicit k-blocks;
  - u8 x i8 GEMM: whole runs and each run_rows split exactly the reference's;
  - V stream: y, rowsum and rowmax bit-identical to the generic kernel's (y
    also to the reference), on rows whose output is not vector-aligned.
The runner's choice (meta.kernels, HXFUSE_HOST_ISA honoured or refused) is
checked through hxrun itself.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMMON = REPO / "kernels" / "common"
HXRUN = REPO / "kernels" / "build" / "host" / "hxrun"

X86 = platform.machine() in ("x86_64", "AMD64")
pytestmark = [
    pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler"),
    pytest.mark.skipif(not X86, reason="the ISA variants are x86-64 only"),
]

DRIVER = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_host.h"

static unsigned long long st = 88172645463325252ull;
static float rnd(void) { st ^= st << 13, st ^= st >> 7, st ^= st << 17; return (float)(st % 2001) / 1000.0f - 1.0f; }
static int fails;
#define FAIL(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), fails++)

/* A variant's table with the generic entries it does not replace. */
static hx_kernels full(const hx_kernels *v) {
    hx_kernels t = hx_kernels_host_generic;
    if (v->gemm_f32_run_rows) {
        t.gemm_f32_prep_bytes = v->gemm_f32_prep_bytes, t.gemm_f32_prepare = v->gemm_f32_prepare;
        t.gemm_f32_run = v->gemm_f32_run, t.gemm_f32_run_kc = v->gemm_f32_run_kc;
        t.gemm_f32_run_rows = v->gemm_f32_run_rows, t.gemm_rows_align = v->gemm_rows_align;
    }
    if (v->gemm_u8i8_run_rows) {
        t.gemm_u8i8_prep_bytes = v->gemm_u8i8_prep_bytes, t.gemm_u8i8_prepare = v->gemm_u8i8_prepare;
        t.gemm_u8i8_run = v->gemm_u8i8_run, t.gemm_u8i8_run_kc = v->gemm_u8i8_run_kc;
        t.gemm_u8i8_run_rows = v->gemm_u8i8_run_rows;
    }
    if (v->vec_stream_f32) t.vec_stream_f32 = v->vec_stream_f32;
    t.name = v->name;
    return t;
}

/* Whole run vs reference within tolerance; run_rows over odd splits (or
 * panel-aligned ones for a variant that needs them) bit-identical to the
 * whole run.  Returns the whole-run C (for the cross-variant comparison). */
static float *gemm(const hx_kernels *k, int m, int n, int kk, int kc, int odd) {
    float *A = malloc(sizeof(float) * m * kk), *B = malloc(sizeof(float) * kk * n);
    float *C = malloc(sizeof(float) * m * n), *R = malloc(sizeof(float) * m * n), *S = malloc(sizeof(float) * m * n);
    st = 88172645463325252ull + m * 131 + n * 7 + kk;
    for (int i = 0; i < m * kk; i++) A[i] = rnd();
    for (int i = 0; i < kk * n; i++) B[i] = rnd();
    void *p = malloc(k->gemm_f32_prep_bytes(m, n, kk)), *pr = malloc(hx_kernels_ref.gemm_f32_prep_bytes(m, n, kk));
    k->gemm_f32_prepare(A, B, m, n, kk, p);
    hx_kernels_ref.gemm_f32_prepare(A, B, m, n, kk, pr);
    if (kc > 0) k->gemm_f32_run_kc(p, C, m, n, kk, kc);
    else k->gemm_f32_run(p, C, m, n, kk);
    hx_kernels_ref.gemm_f32_run(pr, R, m, n, kk);
    for (int i = 0; i < m && fails < 20; i++)
        for (int j = 0; j < n; j++) {
            double scale = 0;
            for (int q = 0; q < kk; q++) scale += fabs((double)A[i * kk + q] * B[q * n + j]);
            if (fabs((double)C[i * n + j] - R[i * n + j]) > 1e-4 * scale + 1e-6 * sqrt(kk))
                FAIL("%s %dx%dx%d kc %d: C[%d][%d] %g vs reference %g", k->name, m, n, kk, kc, i, j, C[i * n + j],
                     R[i * n + j]);
        }
    /* rows split at 0, 1, 8, 23, m/2+3, m (clipped, ascending), or at panel multiples */
    int cut[8], nc = 0, want[] = {0, 1, 8, 23, m / 2 + 3, m};
    for (int i = 0; i < 6; i++) {
        int c = want[i] < m ? want[i] : m;
        if (!odd && c != m) c -= c % k->gemm_rows_align;
        if (nc == 0 || c > cut[nc - 1]) cut[nc++] = c;
    }
    /* each split alone: its rows as the whole run's, every other row untouched
     * (workers run splits of one C concurrently) */
    for (int i = 0; i + 1 < nc; i++) {
        memset(S, 0xFF, sizeof(float) * m * n);
        k->gemm_f32_run_rows(p, S, m, n, kk, kc, cut[i], cut[i + 1]);
        size_t a = (size_t)cut[i] * n, b = (size_t)cut[i + 1] * n;
        unsigned char ff[4] = {0xFF, 0xFF, 0xFF, 0xFF};
        int outside = 0;
        for (size_t e = 0; e < (size_t)m * n; e++)
            if ((e < a || e >= b) && memcmp(S + e, ff, 4)) outside = 1;
        if (memcmp(S + a, C + a, (b - a) * sizeof(float)) || outside)
            FAIL("%s %dx%dx%d kc %d: run_rows [%d, %d) %s", k->name, m, n, kk, kc, cut[i], cut[i + 1],
                 outside ? "wrote rows outside its range" : "differs from the whole run");
    }
    free(A), free(B), free(R), free(S), free(p), free(pr);
    return C;
}

/* u8 x i8: exact, whole runs and each split (extremes 255 and -128 included). */
static void gemm_u8(const hx_kernels *k, int m, int n, int kk, int kc, int odd) {
    uint8_t *A = malloc((size_t)m * kk);
    int8_t *B = malloc((size_t)kk * n);
    int32_t *C = malloc(4 * (size_t)m * n), *R = malloc(4 * (size_t)m * n), *S = malloc(4 * (size_t)m * n);
    for (int i = 0; i < m * kk; i++) A[i] = i % 7 == 0 ? 255 : (uint8_t)(rnd() * 127 + 128);
    for (int i = 0; i < kk * n; i++) B[i] = i % 5 == 0 ? -128 : (int8_t)(rnd() * 127);
    void *p = malloc(k->gemm_u8i8_prep_bytes(m, n, kk)), *pr = malloc(hx_kernels_ref.gemm_u8i8_prep_bytes(m, n, kk));
    k->gemm_u8i8_prepare(A, B, m, n, kk, p);
    hx_kernels_ref.gemm_u8i8_prepare(A, B, m, n, kk, pr);
    if (kc > 0) k->gemm_u8i8_run_kc(p, C, m, n, kk, kc);
    else k->gemm_u8i8_run(p, C, m, n, kk);
    hx_kernels_ref.gemm_u8i8_run(pr, R, m, n, kk);
    if (memcmp(C, R, 4 * (size_t)m * n))
        FAIL("%s u8i8 %dx%dx%d kc %d: differs from the reference", k->name, m, n, kk, kc);
    int cut[8], nc = 0, want[] = {0, 1, 8, 23, m / 2 + 3, m};
    for (int i = 0; i < 6; i++) {
        int c = want[i] < m ? want[i] : m;
        if (!odd && c != m) c -= c % k->gemm_rows_align;
        if (nc == 0 || c > cut[nc - 1]) cut[nc++] = c;
    }
    for (int i = 0; i + 1 < nc; i++) {
        memset(S, 0x5A, 4 * (size_t)m * n);
        k->gemm_u8i8_run_rows(p, S, m, n, kk, kc, cut[i], cut[i + 1]);
        size_t a = (size_t)cut[i] * n, b = (size_t)cut[i + 1] * n;
        int outside = 0;
        for (size_t e = 0; e < (size_t)m * n; e++)
            if ((e < a || e >= b) && S[e] != 0x5A5A5A5A) outside = 1;
        if (memcmp(S + a, R + a, (b - a) * 4) || outside)
            FAIL("%s u8i8 %dx%dx%d kc %d: run_rows [%d, %d) %s", k->name, m, n, kk, kc, cut[i], cut[i + 1],
                 outside ? "wrote rows outside its range" : "differs from the reference");
    }
    free(A), free(B), free(C), free(R), free(S), free(p), free(pr);
}

/* Bit-identical, except that any NaN equals any NaN: the payload of a sum
 * of two NaNs depends on the operand order, which a compiler may swap. */
static int same(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(a + i, b + i, 4) && !(isnan(a[i]) && isnan(b[i]))) return 0;
    return 1;
}

static void stream(const hx_kernels *k, int rows, int cols, int shift) {
    size_t n = (size_t)rows * cols + 16;
    float *x = malloc(n * 4), *y = aligned_alloc(64, n * 4 + 64), *yg = malloc(n * 4), *yr = malloc(n * 4);
    float s[3][64], mx[3][64];
    /* with the edge values of the clamp (NaN must pass through as in the reference) */
    static const float edge[] = {NAN, -3.0f, -0.0f, 3.0f, -INFINITY};
    for (size_t i = 0; i < n; i++) x[i] = i % 97 == 5 ? edge[(i / 97) % 5] : 7.0f * rnd();
    k->vec_stream_f32(x, y + shift, s[0], mx[0], cols, 2, 0, rows);
    hx_kernels_host_generic.vec_stream_f32(x, yg, s[1], mx[1], cols, 2, 0, rows);
    hx_kernels_ref.vec_stream_f32(x, yr, s[2], mx[2], cols, 2, 0, rows);
    if (!same(y + shift, yg, (size_t)rows * cols) || !same(yg, yr, (size_t)rows * cols))
        FAIL("%s stream %dx%d+%d: y differs", k->name, rows, cols, shift);
    if (!same(s[0], s[1], rows) || !same(mx[0], mx[1], rows))
        FAIL("%s stream %dx%d+%d: rowsum/rowmax differ from the generic kernel's", k->name, rows, cols, shift);
    free(x), free(y), free(yg), free(yr);
}

int main(int argc, char **argv) {
    static const int shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {14, 32, 8}, {29, 47, 301}, {300, 300, 300}};
    float *first[5][3] = {{0}};
    for (int a = 1; a < argc; a++) {
        const hx_kernels *v = !strcmp(argv[a], "avx512") ? &hx_kernels_host_avx512
                              : !strcmp(argv[a], "avx2") ? &hx_kernels_host_avx2 : &hx_kernels_host_generic;
        hx_kernels k = full(v);
        int odd = v != &hx_kernels_host_generic; /* the generic kernel needs panel-aligned r0 */
        for (int s = 0; s < 5; s++)
            for (int c = 0; c < 3; c++) {
                int kc = c == 0 ? 0 : c == 1 ? 8 : 64;
                float *C = gemm(&k, shapes[s][0], shapes[s][1], shapes[s][2], kc, odd);
                size_t bytes = sizeof(float) * shapes[s][0] * shapes[s][1];
                if (odd && first[s][c] && memcmp(first[s][c], C, bytes))
                    FAIL("%s %dx%dx%d kc %d: differs from the other ISA variant", k.name, shapes[s][0],
                         shapes[s][1], shapes[s][2], kc);
                if (odd && !first[s][c]) first[s][c] = C;
                else free(C);
                gemm_u8(&k, shapes[s][0], shapes[s][1], shapes[s][2], kc, odd);
            }
        stream(&k, 3, 37, 0), stream(&k, 5, 1000, 3), stream(&k, 4, 4096, 8), stream(&k, 2, 5, 1);
        printf("%s ok\n", k.name);
    }
    return fails ? 1 : 0;
}
"""

# What `-dumpmachine` x86-64 builds use (targets/host.mk).
ISA_FLAGS = {
    "kernels_host_avx2.c": ["-mavx2", "-mfma", "-mno-avx512f"],
    "kernels_host_avx512.c": ["-mavx2", "-mfma", "-mavx512f", "-mavx512vl", "-mavx512bw", "-mavx512dq"],
}


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def runnable() -> list[str]:
    f = cpu_flags()
    out = ["generic"]
    if {"avx2", "fma"} <= f:
        out.append("avx2")
    if {"avx512f", "avx512vl", "avx512bw", "avx512dq", "fma"} <= f:
        out.append("avx512")
    return out


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("variants")
    (d / "driver.c").write_text(DRIVER)
    objs = []
    for src in ["kernels_host.c", "kernels_ref.c", *ISA_FLAGS]:
        obj = d / (src + ".o")
        cmd = ["cc", "-O2", "-march=x86-64-v2", "-std=c11", "-D_GNU_SOURCE", *ISA_FLAGS.get(src, [])]
        subprocess.run([*cmd, f"-I{COMMON}", "-c", str(COMMON / src), "-o", str(obj)], check=True)
        objs.append(str(obj))
    exe = d / "driver"
    cmd = ["cc", "-O1", "-std=c11", "-D_GNU_SOURCE", f"-I{COMMON}", str(d / "driver.c"), *objs, "-lm", "-o", str(exe)]
    subprocess.run(cmd, check=True)
    return exe


def test_every_runnable_variant_matches_the_reference(driver):
    isas = runnable()
    proc = subprocess.run([str(driver), *isas], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = ["host-simd" if isa == "generic" else f"host-{isa}" for isa in isas]
    assert proc.stdout.split() == [w for name in names for w in (name, "ok")]


@pytest.fixture(scope="module")
def hxrun() -> Path:
    subprocess.run(["make", "-s", "-C", str(REPO / "kernels"), "TARGET=host"], check=True)
    return HXRUN


def run_meta(hxrun: Path, tmp_path: Path, isa: str | None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin"}
    if isa is not None:
        env["HXFUSE_HOST_ISA"] = isa
    args = ["--out", str(tmp_path / "o.jsonl"), "--rounds", "1", "--warmup", "0", "--workloads", "mv"]
    args += ["--m-shape", "17,33,65", "--v-shape", "8,64", "--d-shape", "8,64", "--affinity", "none"]
    return subprocess.run([str(hxrun), *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("isa", ["auto", "avx2", "avx512", "generic"])
def test_the_runner_records_the_variant_it_ran(hxrun, tmp_path, isa):
    if isa not in ("auto", *runnable()):
        pytest.skip(f"this CPU cannot execute {isa}")
    proc = run_meta(hxrun, tmp_path, isa)
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((tmp_path / "o.jsonl").read_text().splitlines()[0])
    best = runnable()[-1]
    want = {"auto": best, "avx2": "avx2", "avx512": "avx512", "generic": "generic"}[isa]
    assert meta["kernels"] == ("host-simd" if want == "generic" else f"host-{want}")
    assert meta["kernels_choice"] == ("auto" if isa == "auto" else f"HXFUSE_HOST_ISA={isa}")


def test_a_forced_variant_the_cpu_lacks_or_an_unknown_one_is_refused(hxrun, tmp_path):
    missing = [isa for isa in ("avx2", "avx512") if isa not in runnable()]
    for isa in [*missing, "avx1024"]:
        proc = run_meta(hxrun, tmp_path, isa)
        assert proc.returncode == 2, (isa, proc.returncode)
        assert f"HXFUSE_HOST_ISA={isa}" in proc.stderr and "use auto, avx512, avx2 or generic" in proc.stderr
        assert not (tmp_path / "o.jsonl").exists()


# The CPUs emulated for the refusal test: what the run-time choice should
# pick on each, and a variant it must refuse there.
EMULATED = {"Haswell-v4": ("host-avx2", "avx512"), "Nehalem": ("host-simd", "avx2")}


@pytest.fixture(scope="module")
def portable_hxrun(tmp_path_factory) -> Path:
    """hxrun built for the x86-64-v2 baseline (the variant files keep their
    own ISA flags), so that it runs on an emulated CPU without AVX."""
    build = tmp_path_factory.mktemp("v2build")
    cflags = "-O2 -march=x86-64-v2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -pthread"
    make = ["make", "-s", "-j2", "-C", str(REPO / "kernels"), f"BUILD={build}", f"CFLAGS={cflags}"]
    subprocess.run(make, check=True, capture_output=True)
    return build / "hxrun"


@pytest.mark.skipif(shutil.which("qemu-x86_64") is None, reason="needs qemu-x86_64 (Debian qemu-user)")
@pytest.mark.parametrize("cpu", sorted(EMULATED))
def test_an_emulated_older_cpu_gets_its_variant_and_refuses_a_wider_one(portable_hxrun, tmp_path, cpu):
    """On an emulated Haswell the AVX2 variant runs (no AVX-512 instruction
    in it: that would be SIGILL), on Nehalem the generic one, each with the
    checksums (fp32 and u8i8) of the same variant forced natively; forcing a
    variant the emulated CPU lacks fails with exit 2 before any output."""
    best, lacking = EMULATED[cpu]
    qemu = ["qemu-x86_64", "-cpu", cpu, str(portable_hxrun)]
    args = ["--out", str(tmp_path / "o.jsonl"), "--rounds", "1", "--warmup", "0", "--workloads", "mv"]
    args += ["--m-shape", "17,33,65", "--v-variant", "stream", "--v-shape", "8,64", "--d-shape", "8,64"]
    for precision in ("fp32", "u8i8"):
        ok = subprocess.run([*qemu, *args, "--precision", precision], capture_output=True, text=True, timeout=300)
        assert ok.returncode == 0, ok.stderr[-2000:]
        recs = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
        assert recs[0]["kernels"] == best
        # the emulated CPU's checksums are the native run's of the same variant
        native_isa = "generic" if best == "host-simd" else best.removeprefix("host-")
        env = {"PATH": "/usr/bin:/bin", "HXFUSE_HOST_ISA": native_isa}
        nat = subprocess.run([str(portable_hxrun), *args, "--precision", precision], env=env, timeout=120)
        assert nat.returncode == 0
        native = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
        verify = [[r["checksums"] for r in rs if r["record"] == "verify"] for rs in (recs, native)]
        assert verify[0] == verify[1], precision
        (tmp_path / "o.jsonl").unlink()
    env = {"PATH": "/usr/bin:/bin", "HXFUSE_HOST_ISA": lacking}
    bad = subprocess.run([*qemu, *args], env=env, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2, bad.stderr[-2000:]
    assert f"HXFUSE_HOST_ISA={lacking}: this CPU lacks" in bad.stderr
    assert not (tmp_path / "o.jsonl").exists()
