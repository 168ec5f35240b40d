"""hx_json into memory (hx_json_begin_buf) and raw values (hx_json_raw):
what the DSP skel uses to describe itself across the AP-DSP boundary, and
the AP driver to write that description into its own records."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from runner_util import REPO

COMMON = REPO / "kernels" / "common"
PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include "json.h"
int main(int argc, char **argv) {
    size_t cap = (size_t)atoi(argv[1]);
    char buf[4096];
    hx_json m;
    hx_json_begin_buf(&m, buf, cap);
    hx_json_str(&m, "target", "q\"uoted");
    hx_json_u64(&m, "n", 42);
    hx_json_obj(&m, "clock");
    hx_json_null(&m, "core_cycles_per_us");
    hx_json_close(&m, '}');
    hx_json_end(&m);
    /* the text goes into a record of a real stream, digest and all */
    hx_json j;
    hx_json_begin(&j, stdout);
    hx_json_str(&j, "record", "meta");
    hx_json_raw(&j, "device", buf);
    hx_json_bool(&j, "truncated", m.truncated);
    hx_json_i64(&j, "len", (long long)m.len);
    hx_json_end(&j);
    return 0;
}
"""


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("jsonmem")
    src, exe = d / "t.c", d / "t"
    src.write_text(PROGRAM.replace("#include <string.h>", "#include <string.h>\n#include <stdlib.h>"))
    cc = ["cc", "-std=gnu11", "-Wall", "-Werror", f"-I{COMMON}", str(src), str(COMMON / "json.c"), "-o", str(exe)]
    subprocess.run([*cc, "-lm"], check=True)
    return exe


def test_an_object_built_in_memory_is_a_value_of_another_record(prog):
    out = subprocess.run([str(prog), "4096"], capture_output=True, text=True, check=True).stdout
    rec = json.loads(out)
    assert rec["device"] == {"target": 'q"uoted', "n": 42, "clock": {"core_cycles_per_us": None}}
    assert rec["truncated"] is False and out.count("\n") == 1


def test_a_buffer_too_small_is_cut_and_says_so(prog):
    out = subprocess.run([str(prog), "16"], capture_output=True, text=True, check=True).stdout
    # the record is the caller's to refuse: it knows the text is cut
    assert '"truncated":true' in out and '"len":15' in out
