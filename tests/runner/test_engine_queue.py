"""The engine queue's full-queue contract (kernels/common/engine.h): with the
engine held busy, HX_QUEUE_CAP pushes succeed, the next returns -1 without
queueing the job, and once the engine drains every queued job has run once
and a push succeeds again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COMMON = REPO / "kernels" / "common"

PROGRAM = r"""
#include <stdio.h>
#include "engine.h"

static volatile unsigned release, started, ran;
static void hold(hx_job *job, hx_engine *e) {
    (void)job, (void)e;
    __atomic_store_n(&started, 1u, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&release, __ATOMIC_ACQUIRE)) hx_cpu_relax();
}
static void count(hx_job *job, hx_engine *e) {
    (void)job, (void)e;
    __atomic_fetch_add(&ran, 1u, __ATOMIC_SEQ_CST);
}

int main(void) {
    static hx_engine e;
    hx_wait_policy w = {HX_WAIT_SPIN_BLOCK, 20000};
    char err[128];
    if (hx_engine_start(&e, "q", -1, &w, err, sizeof err)) return 10;
    hx_job first = {hold}, job = {count};
    if (hx_engine_push(&e, &first)) return 11;
    while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE)) hx_cpu_relax();
    for (unsigned i = 0; i < HX_QUEUE_CAP; i++)
        if (hx_engine_push(&e, &job)) return 12;
    if (hx_engine_push(&e, &job) != -1) return 13;
    __atomic_store_n(&release, 1u, __ATOMIC_RELEASE);
    while (__atomic_load_n(&ran, __ATOMIC_ACQUIRE) < HX_QUEUE_CAP) hx_cpu_relax();
    if (hx_engine_push(&e, &job)) return 14;
    while (__atomic_load_n(&ran, __ATOMIC_ACQUIRE) < HX_QUEUE_CAP + 1) hx_cpu_relax();
    hx_engine_stop(&e);
    printf("%u\n", ran);
    return ran == HX_QUEUE_CAP + 1 ? 0 : 15;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_a_full_queue_refuses_the_job_and_loses_none(tmp_path):
    src = tmp_path / "queue.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "queue"
    posix = ["platform_posix.c", "platform_posix_clock.c", "platform_posix_thread.c", "platform_posix_machine.c"]
    # release.c: the cross-platform state the POSIX layer reports (hx_failure)
    parts = ["engine.c", "event.c", "json.c", "release.c", *posix]
    cmd = ["cc", "-O1", "-std=c11", "-D_GNU_SOURCE", "-pthread", f"-I{COMMON}", str(src)]
    subprocess.run([*cmd, *(str(COMMON / p) for p in parts), "-o", str(exe), "-lm"], check=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
