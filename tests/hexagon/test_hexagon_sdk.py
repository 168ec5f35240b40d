"""The Hexagon SDK targets without the SDK.

There is no Hexagon SDK, hexagon-clang or phone here.  What can still break
before a user with the SDK ever runs the build is checked against a stub SDK
tree (``kernels/hexagon/sdk_check.sh fake-sdk``) whose hexagon-clang records
its command lines:

1. the make recipes of ``TARGET=hexagon`` / ``hexagon-sim`` run to the end
   (flags file and ``print-VAR`` with the apostrophe in HX_GROUP_B, the HexKL
   library in its real ``lib/hexagon_toolv19_v73/`` layout), with the flags
   the audit asked for (``-std=gnu11``, no ``-lm``, fallbacks off); mode ap
   (the default) also builds the skel with hexagon-clang and the AP driver
   with the stub NDK's aarch64 clang, mode dsp-only and the simulator only
   hxrun;
2. the fail-fast messages name what is missing (SDK, tools >= 19 for HexKL,
   the HexKL library, a bad HX_ALLOW_FALLBACK, the NDK, a bad mode, the
   simulator asked for mode ap);
3. ``make -C kernels sdk-check`` (recipes + every device source compiled for
   v73 with zig against the project's SDK declarations) passes, and fails
   when a device source or the flags recipe is broken.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# cross-compiles and emulates (or compiles against the SDK declarations): slow
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "kernels"
FAKE = KERNELS / "hexagon/sdk_check.sh"


def _have_zig() -> bool:
    try:
        r = subprocess.run([sys.executable, "-m", "ziglang", "version"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 or shutil.which("zig") is not None


needs_zig = pytest.mark.skipif(not _have_zig(), reason="zig missing: pip install ziglang==0.17.1")


def _fake(tmp: Path, version: str = "19.0.04") -> dict:
    subprocess.run([str(FAKE), "fake-sdk", str(tmp), version], check=True)
    return {"sdk": tmp / "sdk", "tools": tmp / f"sdk/tools/HEXAGON_Tools/{version}", "hexkl": tmp / "hexkl"}


def _make(tmp: Path, *args: str, log: Path | None = None, kernels: Path = KERNELS):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp)}
    if log is not None:
        env["HX_STUB_LOG"] = str(log)
    return subprocess.run(
        ["make", "-s", "-C", str(kernels), *args], capture_output=True, text=True, env=env, timeout=300
    )


def _calls(log: Path) -> list[list[str]]:
    return [shlex.split(ln) for ln in log.read_text().splitlines() if ln.strip()]


def test_device_recipe_runs_to_the_end_with_the_apostrophe_and_the_right_flags(tmp_path):
    f = _fake(tmp_path)
    log, build = tmp_path / "cc.log", tmp_path / "build"
    r = _make(
        tmp_path,
        "TARGET=hexagon",
        f"HEXAGON_SDK_ROOT={f['sdk']}",
        f"HEXAGON_TOOLS_ROOT={f['tools']}",
        "HX_BUILD_ONLY=1",
        f"BUILD={build}",
        log=log,
    )
    assert r.returncode == 0, r.stderr
    assert "Syntax error" not in r.stderr
    flags = (build / "flags").read_text()
    # the flags file holds the make value verbatim, apostrophe escape included
    assert "engine'\"'\"'s own QuRT queue thread" in flags
    calls = _calls(log)
    compiles = [c for c in calls if "-c" in c]
    links = [c for c in calls if "-shared" in c]
    # hxrun and the skel (mode ap, the default), both loaded by the DSP's loader
    assert sorted(Path(c[c.index("-o") + 1]).name for c in links) == ["hxrun", "libhxfuse_skel.so"]
    assert all("-lm" not in c and "-G0" in c and "-fPIC" in c for c in links)
    srcs = {c[c.index("-c") + 1] for c in compiles}
    for s in (
        "hexagon/platform_qurt.c",
        "hexagon/vtcm_qurt.c",
        "hexagon/power_qurt.c",
        "hexagon/dma_hexagon.c",
        "hexagon/kernels_device.c",
        "hexagon/kernels_hvx.c",
        "hxrun/protocol.c",
    ):
        assert s in srcs, s
    assert "hexagon/kernels_hmx.c" not in srcs  # no HexKL: M on HVX
    for c in compiles:
        assert "-std=gnu11" in c and "-std=c11" not in c
        assert "-DHX_ALLOW_FALLBACK=0" in c and "-mhmx" not in c
        # the compile line hands the apostrophe to the compiler intact
        gb = [a for a in c if a.startswith("-DHX_GROUP_B=")]
        assert gb and "engine's own QuRT queue thread" in gb[0]
    # print-VAR (how the pipeline reads RUN_PREFIX) survives the apostrophe too
    r = _make(
        tmp_path,
        "TARGET=hexagon",
        f"HEXAGON_SDK_ROOT={f['sdk']}",
        f"HEXAGON_TOOLS_ROOT={f['tools']}",
        "HX_BUILD_ONLY=1",
        "print-TARGET_DEFS",
    )
    assert r.returncode == 0 and "s own QuRT queue thread" in r.stdout, r.stderr


def _ap_base(f: dict, tmp: Path) -> list[str]:
    return [
        "TARGET=hexagon",
        f"HEXAGON_SDK_ROOT={f['sdk']}",
        f"HEXAGON_TOOLS_ROOT={f['tools']}",
        "HX_BUILD_ONLY=1",
        f"BUILD={tmp / 'b'}",
    ]


def _ap_calls(tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[list[str]], list[list[str]]]:
    log, ap_log = tmp / "cc.log", tmp / "ap.log"
    for p in (log, ap_log):
        p.write_text("")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "HX_STUB_LOG": str(log), "HX_STUB_LOG_AP": str(ap_log)}
    r = subprocess.run(["make", "-s", "-C", str(KERNELS), *args], capture_output=True, text=True, env=env, timeout=300)
    return r, _calls(log), _calls(ap_log)


def test_mode_ap_builds_the_skel_with_hexagon_clang_and_the_driver_with_the_sdks_ndk(tmp_path):
    f = _fake(tmp_path)
    r, dsp, ap = _ap_calls(tmp_path, *_ap_base(f, tmp_path))
    assert r.returncode == 0, r.stderr
    b = tmp_path / "b"
    assert (b / "hxrun").is_file() and (b / "libhxfuse_skel.so").is_file() and (b / "hxrun-ap").is_file()
    # the skel: hexagon-clang, the DSP half of the split (skel.c, wire_dsp.c, the executor), no protocol
    skel = [c for c in dsp if "-o" in c and c[c.index("-o") + 1] == str(b / "libhxfuse_skel.so")]
    assert len(skel) == 1 and "-shared" in skel[0] and "-G0" in skel[0]
    skel_objs = {Path(a).relative_to(b / "obj").as_posix() for a in skel[0] if a.endswith(".o")}
    assert {"ap/skel.o", "ap/wire_dsp.o", "hxrun/exec_device.o", "hexagon/platform_qurt.o"} <= skel_objs
    assert "hxrun/protocol.o" not in skel_objs and "hxrun/main.o" not in skel_objs
    # the driver: the SDK's NDK (tools/android-ndk-*), API 31, headers only, -ldl -lm
    ndk = f["sdk"] / "tools/android-ndk-r25c/toolchains/llvm/prebuilt/linux-x86_64/bin"
    r2 = _make(tmp_path, *_ap_base(f, tmp_path), "print-AP_CC")
    assert r2.stdout.strip() == str(ndk / "aarch64-linux-android31-clang"), r2.stderr
    link = [c for c in ap if "-c" not in c]
    assert (
        len(link) == 1 and link[0][-2:] == ["-ldl", "-lm"] and link[0][link[0].index("-o") + 1] == str(b / "hxrun-ap")
    )
    assert "-lcdsprpc" not in link[0]  # dlopened on the phone
    srcs = {c[c.index("-c") + 1] for c in ap if "-c" in c}
    assert {"ap/ap_main.c", "ap/rpc_dl.c", "ap/clock_align.c", "hxrun/protocol.c", "common/platform_posix.c"} <= srcs
    assert not any(s.startswith("hexagon/") for s in srcs) and "hxrun/exec_device.c" not in srcs
    for c in ap:
        if "-c" not in c:
            continue
        assert c[c.index("-o") + 1].startswith(str(b / "obj-ap") + "/")
        for flag in ("-std=gnu11", "-O2", "-Wall", "-Wextra", f"-I{f['sdk']}/incs", '-DHX_PLATFORM_NAME="hexagon-ap"'):
            assert flag in c, flag
        assert not any(a.startswith("-m") for a in c)  # no Hexagon flags on the AP compiler
        gb = [a for a in c if a.startswith("-DHX_GROUP_B=")]
        assert gb and "one dspqueue per engine" in gb[0] and "engine's DSP thread" in gb[0]
        assert any(a.startswith("-DHX_COMPILER=") and "aarch64-linux-android31" in a for a in c)
    # hxrun keeps its dsp-only text
    hx = [c for c in dsp if "-c" in c and c[c.index("-c") + 1] == "hxrun/main.c"][0]
    assert any("dsp-only mode" in a for a in hx if a.startswith("-DHX_GROUP_B="))
    # the pipeline lists each half's files (print-SOURCES-hxrun-ap / -skel)
    r3 = _make(tmp_path, *_ap_base(f, tmp_path), "print-SOURCES-hxrun-ap")
    listed = r3.stdout.split()
    assert (
        r3.returncode == 0
        and "ap/ap_main.c" in listed
        and "ap/wire.h" in listed
        and "hexagon/platform_qurt.c" not in listed
    )
    r3 = _make(tmp_path, *_ap_base(f, tmp_path), "print-SOURCES-skel")
    assert r3.returncode == 0 and "ap/skel.c" in r3.stdout.split() and "hxrun/protocol.c" not in r3.stdout.split()


def test_mode_dsp_only_and_the_simulator_build_hxrun_alone_without_an_ndk(tmp_path):
    f = _fake(tmp_path)
    base = _ap_base(f, tmp_path)
    r, dsp, ap = _ap_calls(tmp_path, *base, "HX_HEXAGON_MODE=dsp-only", "ANDROID_NDK_ROOT=/nonexistent")
    assert r.returncode == 0, r.stderr
    assert ap == [] and not (tmp_path / "b/hxrun-ap").exists() and not (tmp_path / "b/libhxfuse_skel.so").exists()
    assert len([c for c in dsp if "-shared" in c]) == 1
    r = _make(tmp_path, *base, "HX_HEXAGON_MODE=dsp-only", "print-SOURCES-hxrun-ap")
    assert r.returncode != 0 and "no runner 'hxrun-ap'" in r.stderr
    sim = ["TARGET=hexagon-sim", *base[1:-1], f"BUILD={tmp_path / 's'}"]
    r, dsp, ap = _ap_calls(tmp_path, *sim)
    assert r.returncode == 0 and ap == [] and not (tmp_path / "s/hxrun-ap").exists(), r.stderr


def test_missing_ndk_bad_mode_and_the_simulator_in_mode_ap_are_named(tmp_path):
    f = _fake(tmp_path)
    base = _ap_base(f, tmp_path)
    shutil.rmtree(f["sdk"] / "tools/android-ndk-r25c")
    r = _make(tmp_path, *base)
    assert r.returncode != 0 and "hxrun-ap with the Android NDK, and none was found" in r.stderr, r.stderr
    assert "ANDROID_NDK_ROOT" in r.stderr and "HX_HEXAGON_MODE=dsp-only" in r.stderr
    r = _make(tmp_path, *base, f"ANDROID_NDK_ROOT={tmp_path}")
    assert r.returncode != 0 and "no Android NDK clang at" in r.stderr and "HX_ANDROID_API" in r.stderr, r.stderr
    r = _make(tmp_path, *base, "HX_HEXAGON_MODE=split")
    assert r.returncode != 0 and "HX_HEXAGON_MODE must be ap or dsp-only, not 'split'" in r.stderr, r.stderr
    r = _make(tmp_path, "TARGET=hexagon-sim", *base[1:], "HX_HEXAGON_MODE=ap")
    assert r.returncode != 0 and "builds only the dsp-only runner hxrun" in r.stderr, r.stderr
    # listing sources asks for no compiler (the pipeline's preflight names the NDK)
    r = _make(tmp_path, *base, "print-SOURCES-hxrun-ap")
    assert r.returncode == 0 and "ap/ap_main.c" in r.stdout, r.stderr


def test_hexkl_build_finds_the_real_library_layout_and_compiles_hmx(tmp_path):
    f = _fake(tmp_path)
    log = tmp_path / "cc.log"
    r = _make(
        tmp_path,
        "TARGET=hexagon-sim",
        f"HEXAGON_SDK_ROOT={f['sdk']}",
        f"HEXAGON_TOOLS_ROOT={f['tools']}",
        f"HEXKL_ROOT={f['hexkl']}",
        f"BUILD={tmp_path / 'b'}",
        log=log,
    )
    assert r.returncode == 0, r.stderr
    calls = _calls(log)
    link = [c for c in calls if "-shared" in c][0]
    assert str(f["hexkl"] / "lib/hexagon_toolv19_v73/libhexkl_micro.a") in link
    compiles = [c for c in calls if "-c" in c]
    assert any(c[c.index("-c") + 1] == "hexagon/kernels_hmx.c" for c in compiles)
    assert all("-mhmx" in c and "-DHX_WITH_HEXKL=1" in c and "-DHX_EMULATED=1" in c for c in compiles)


def test_sdk_missing_is_named_before_anything_runs(tmp_path):
    r = _make(tmp_path, "TARGET=hexagon", "HEXAGON_SDK_ROOT=")
    assert r.returncode != 0
    assert "needs the Qualcomm Hexagon SDK" in r.stderr and "HEXAGON_SDK_ROOT" in r.stderr
    r = _make(tmp_path, "TARGET=hexagon", f"HEXAGON_SDK_ROOT={tmp_path}")
    assert r.returncode != 0 and "does not look like a Hexagon SDK" in r.stderr


def test_hexkl_with_old_tools_is_refused_and_hvx_only_still_builds(tmp_path):
    f = _fake(tmp_path, "8.7.06")
    hexkl = _fake(tmp_path / "new")["hexkl"]
    base = [
        "TARGET=hexagon",
        f"HEXAGON_SDK_ROOT={f['sdk']}",
        f"HEXAGON_TOOLS_ROOT={f['tools']}",
        "HX_BUILD_ONLY=1",
        f"BUILD={tmp_path / 'b'}",
    ]
    r = _make(tmp_path, *base, f"HEXKL_ROOT={hexkl}")
    assert r.returncode != 0
    assert "version 8.7.06" in r.stderr and "Hexagon tools 19 or newer" in r.stderr, r.stderr
    r = _make(tmp_path, *base, log=tmp_path / "cc.log")
    assert r.returncode == 0, r.stderr
    # a compiler that does not say its version is refused with HexKL only
    (f["tools"] / "Tools/bin/hexagon-clang").write_text("#!/bin/sh\necho 'some tool 8.8'\n")
    r = _make(tmp_path, *base, f"HEXKL_ROOT={hexkl}")
    assert r.returncode != 0 and 'printed no "clang version N.M"' in r.stderr, r.stderr
    r = _make(tmp_path, *base, "print-CC_NAME")
    assert r.returncode == 0 and "some tool 8.8" in r.stdout, r.stderr


def test_missing_hexkl_library_and_bad_fallback_value_are_named(tmp_path):
    f = _fake(tmp_path)
    (f["hexkl"] / "lib/hexagon_toolv19_v73/libhexkl_micro.a").unlink()
    base = ["TARGET=hexagon", f"HEXAGON_SDK_ROOT={f['sdk']}", f"HEXAGON_TOOLS_ROOT={f['tools']}", "HX_BUILD_ONLY=1"]
    r = _make(tmp_path, *base, f"HEXKL_ROOT={f['hexkl']}")
    assert r.returncode != 0 and "has no lib/hexagon_toolv*_v73/libhexkl_micro.a" in r.stderr, r.stderr
    r = _make(tmp_path, *base, "HX_ALLOW_FALLBACK=yes")
    assert r.returncode != 0 and "HX_ALLOW_FALLBACK must be 0 or 1" in r.stderr, r.stderr


@needs_zig
def test_sdk_check_passes():
    r = subprocess.run(["make", "-C", str(KERNELS), "sdk-check"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "device compiles for v73" in r.stdout and "sdk-check: OK" in r.stdout
    assert "device compiles for v75" in r.stdout  # the HMX v2 power path
    assert "AP compiles for aarch64" in r.stdout
    assert "sdk-check: a planted undeclared call fails the AP compile" in r.stdout
    assert "sdk-check: a planted undeclared call fails the skel compile" in r.stdout


@needs_zig
def test_sdk_check_fails_when_the_planted_undeclared_call_would_compile(tmp_path):
    """The planted call's known answer: with dspqueue_undeclared_probe
    declared in the stand-in header, the planted compile succeeds and
    sdk-check must say its replay would not catch an undeclared call."""
    k = _copy_kernels(tmp_path)
    h = k / "hexagon/sdk_decls/dspqueue.h"
    text = h.read_text()
    h.write_text(text.replace("#endif", "AEEResult dspqueue_undeclared_probe(dspqueue_t queue);\n#endif"))
    r = subprocess.run(["make", "-C", str(k), "sdk-check"], capture_output=True, text=True, timeout=900)
    assert r.returncode != 0
    assert "a planted call to the undeclared dspqueue_undeclared_probe() compiles" in r.stderr, r.stderr[-3000:]


def _copy_kernels(tmp: Path) -> Path:
    dst = tmp / "kernels"
    shutil.copytree(KERNELS, dst, ignore=shutil.ignore_patterns("build"))
    return dst


@needs_zig
def test_sdk_check_fails_on_a_device_source_that_does_not_compile(tmp_path):
    k = _copy_kernels(tmp_path)
    with open(k / "hexagon/power_qurt.c", "a") as fh:
        fh.write("\nint hx_broken(void) { return HAP_power_set_nonexistent(0); }\n")
    r = subprocess.run(["make", "-C", str(k), "sdk-check"], capture_output=True, text=True, timeout=900)
    assert r.returncode != 0
    assert "hexagon/power_qurt.c does not compile for v73" in r.stderr, r.stderr[-3000:]


@needs_zig
def test_sdk_check_fails_on_an_ap_source_that_does_not_compile_for_aarch64(tmp_path):
    """The AP replay's known answer: an AP driver source with a call no
    header declares fails the aarch64 compile, naming the source."""
    k = _copy_kernels(tmp_path)
    with open(k / "ap/rpc_dl.c", "a") as fh:
        fh.write("\nint hx_broken_ap(void);\nint hx_broken_ap(void) { return remote_handle64_nonexistent(0); }\n")
    r = subprocess.run(["make", "-C", str(k), "sdk-check"], capture_output=True, text=True, timeout=900)
    assert r.returncode != 0
    assert "ap/rpc_dl.c does not compile for aarch64" in r.stderr, r.stderr[-3000:]
    assert "remote_handle64_nonexistent" in r.stderr


@needs_zig
def test_sdk_check_fails_on_the_old_flags_recipe(tmp_path):
    k = _copy_kernels(tmp_path)
    mk = (k / "Makefile").read_text()
    old = "@echo '$(FLAGS_LINE)' | cmp -s - $@ || echo '$(FLAGS_LINE)' > $@"
    new = mk.replace(mk[mk.index("@printf '%s\\n' $(call sh_quote,$(FLAGS_LINE))") :].split("\n")[0], old)
    assert new != mk
    (k / "Makefile").write_text(new)
    r = subprocess.run(["make", "-C", str(k), "sdk-check"], capture_output=True, text=True, timeout=900)
    assert r.returncode != 0
    assert "recipe hexagon" in r.stderr and "failed with the stub toolchain" in r.stderr, r.stderr[-3000:]


@needs_zig
def test_sdk_check_fails_when_the_acquire_timeout_is_declared_with_the_old_type(tmp_path):
    """vtcm_qurt.c asserts HAP_compute_res_acquire(attr, unsigned int
    timeout_us), so a stand-in declaration that drifts from the SDK's header
    (the old unsigned long long) fails here, and the real header checks the
    stand-in on the first SDK build."""
    k = _copy_kernels(tmp_path)
    h = k / "hexagon/sdk_decls/HAP_compute_res.h"
    text = h.read_text()
    new = text.replace("unsigned int timeout_us);", "unsigned long long timeout_us);")
    assert new != text
    h.write_text(new)
    r = subprocess.run(["make", "-C", str(k), "sdk-check"], capture_output=True, text=True, timeout=900)
    assert r.returncode != 0
    assert "hexagon/vtcm_qurt.c does not compile for v73" in r.stderr, r.stderr[-3000:]
    assert "timeout_us) expected" in r.stderr, r.stderr[-3000:]
