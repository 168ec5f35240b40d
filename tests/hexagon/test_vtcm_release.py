"""The device's answer to the resource manager's release request
(kernels/hexagon/vtcm_qurt.c), run on the host against a stub SDK
(kernels/hexagon/test_vtcm_release.c): the callback only records the
request, the context is released once at the boundary of the trial it came
in, within the 5 ms the SDK asks, and the teardown does not release or free
it again.  Untested on hardware: the stub plays the resource manager."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HEX = Path(__file__).resolve().parents[2] / "kernels" / "hexagon"


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
@pytest.mark.parametrize("hexkl", ["0", "1"])
def test_a_release_request_is_answered_at_the_next_trial_boundary(tmp_path, hexkl):
    exe = tmp_path / "test_vtcm_release"
    cc = [
        "cc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", f"-DHX_WITH_HEXKL={hexkl}",
        f"-I{HEX / 'sdk_decls'}", str(HEX / "test_vtcm_release.c"), str(HEX / "vtcm_qurt.c"),
        str(HEX.parent / "common" / "release.c"), "-o", str(exe),
    ]  # fmt: skip
    subprocess.run(cc, check=True, capture_output=True, text=True, timeout=120)
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
