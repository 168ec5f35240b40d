"""The hxfuse interface's IDL (kernels/ap/hxfuse.idl) against the method
table the hand-written stub and skel use (HX_WIRE_METHODS, kernels/ap/wire.h):
same methods, same ids, same scalars words as the Hexagon SDK's qaic would
generate from the IDL.  qaic is not available here; its packing rule (one
leading in buffer "primIn" with the in scalars and every sequence's length,
one in buffer per in sequence, one out buffer "primROut" for rout scalars,
one out buffer per rout sequence; ids from 2 in declaration order after
remote_handle64's open and close) is checked first against a stub qaic did
generate, quic/fastrpc's dspqueue_rpc (src/dspqueue/dspqueue_rpc_stub.c)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
K = REPO / "kernels"

SCALARS = {"octet", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "long", "AEEResult"}


def methods(idl: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The interface's methods in declaration order: name and (direction, type) per argument."""
    body = re.search(r"interface\s+\w+\s*:\s*remote_handle64\s*\{(.*)\};", idl, re.S).group(1)
    body = re.sub(r"//[^\n]*", "", body)
    out = []
    for name, args in re.findall(r"\w+\s+(\w+)\s*\(([^)]*)\)\s*;", body):
        params = []
        for a in filter(None, (x.strip() for x in args.split(","))):
            direction, rest = a.split(None, 1)
            params.append((direction, rest.rsplit(None, 1)[0]))
        out.append((name, params))
    return out


def qaic_shape(params: list[tuple[str, str]]) -> tuple[int, int]:
    """(in buffers, out buffers) of one method's scalars word, by qaic's rule."""
    seq = [(d, t) for d, t in params if t.startswith(("sequence<", "string"))]
    scal = [(d, t) for d, t in params if (d, t) not in seq]
    assert all(t in SCALARS for _, t in scal), params
    prim_in = any(d == "in" for d, _ in scal) or bool(seq)
    prim_rout = any(d == "rout" for d, _ in scal)
    n_in = int(prim_in) + sum(d == "in" for d, _ in seq)
    n_out = int(prim_rout) + sum(d == "rout" for d, _ in seq)
    return n_in, n_out


def test_the_rule_matches_a_stub_qaic_generated() -> None:
    """dspqueue_rpc (quic/fastrpc inc/dspqueue_rpc.h, its stub's method table:
    REMOTE_SCALARS_MAKEX(0, mid, in, out, 0, 0) per method)."""
    idl = """interface dspqueue_rpc : remote_handle64 {
        AEEResult init_process_state(in int32 process_state_fd);
        AEEResult create_queue(in uint32 id, in int32 queue_fd, in uint32 count, rout uint64 queue_id);
        AEEResult destroy_queue(in uint64 queue_id);
        AEEResult is_imported(in uint64 queue_id, rout int32 imported);
        AEEResult wait_signal(rout int32 signal);
        AEEResult cancel_wait_signal();
        AEEResult signal();
    };"""
    got = [(n, qaic_shape(p)) for n, p in methods(idl)]
    assert got == [
        ("init_process_state", (1, 0)),
        ("create_queue", (1, 1)),
        ("destroy_queue", (1, 0)),
        ("is_imported", (1, 1)),
        ("wait_signal", (0, 1)),
        ("cancel_wait_signal", (0, 0)),
        ("signal", (0, 0)),
    ]
    # remote_handle64's own open: in string uri -> primIn (its length) + the string, out handle
    assert qaic_shape([("in", "string")]) == (2, 0)


PRINT_TABLE = r"""
#include <stdio.h>
#include "wire.h"
int main(void) {
    static const hx_wire_method t[HX_WIRE_NMETHODS] = HX_WIRE_METHODS;
    printf("[");
    for (int i = 0; i < HX_WIRE_NMETHODS; i++)
        printf("%s[\"%s\", %d, %d, %d, %d, %d]", i ? ", " : "", t[i].name, t[i].id, t[i].in_bufs, t[i].out_bufs,
               t[i].in_handles, t[i].out_handles);
    printf("]\n");
    printf("%d %d %d %d %d %d\n", HX_METHOD_OPEN, HX_METHOD_CLOSE, HX_METHOD_SETUP, HX_METHOD_START,
           HX_METHOD_CONTROL, HX_METHOD_STOP);
    return 0;
}
"""


@pytest.mark.skipif(not shutil.which("gcc"), reason="needs gcc")
def test_the_idl_and_the_hand_written_method_table_agree(tmp_path: Path) -> None:
    src = tmp_path / "table.c"
    src.write_text(PRINT_TABLE)
    exe = tmp_path / "table"
    inc = ["-I", str(K / "ap"), "-I", str(K / "common"), "-I", str(K / "hexagon/sdk_decls")]
    subprocess.run(["gcc", "-std=gnu11", *inc, str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    table = json.loads(out[0])
    assert [int(x) for x in out[1].split()] == [0, 1, 2, 3, 4, 5]

    declared = methods((K / "ap/hxfuse.idl").read_text())
    want = [["open", 0, 2, 0, 0, 1], ["close", 1, 0, 0, 1, 0]]
    for i, (name, params) in enumerate(declared):
        assert all(t == "sequence<octet>" for _, t in params), (name, params)
        want.append([name, 2 + i, *qaic_shape(params), 0, 0])
    assert table == want
