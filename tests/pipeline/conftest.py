"""The finished tiny run the pipeline tests share (session scope): one `all`
on the tiny config, about a minute and a half on 2 cores.  Tests read it, or
copy it before they change anything (the report tests build their reports
in it; the damaged-intermediate tests damage a copy)."""

import copy
import shutil

import pytest

from pipeline_util import TINY, snakemake, write_config


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    if not shutil.which("make") or not shutil.which("cc"):
        pytest.skip("needs make and a C compiler: apt-get install build-essential")
    wd = tmp_path_factory.mktemp("tiny_run")
    write_config(wd, copy.deepcopy(TINY))
    res = snakemake(wd, "all")
    assert res.returncode == 0, res.stderr[-4000:]
    return wd
