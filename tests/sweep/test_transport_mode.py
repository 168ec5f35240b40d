"""How the host reached the engines: summary.json's transport_modes and the
paper's setup row (hxfuse.sweep.pipeline, hxfuse.paper.sections)."""

from __future__ import annotations

import pandas as pd

from hxfuse.paper import sections
from hxfuse.sweep import pipeline


def _prov(*envs):
    return {f"p{i}/rep0": {"runner_env": e} for i, e in enumerate(envs)}


def test_run_mode_comes_from_meta_transport_else_from_the_target():
    ap = {"transport": {"mode": "ap", "stand_in": False}}
    stand_in = {"transport": {"mode": "ap", "stand_in": True}}
    assert pipeline.transport_mode(ap, hexagon_target=True) == "ap"
    assert pipeline.transport_mode(stand_in, hexagon_target=False) == "ap-stand-in"
    # no transport record: the runner ran in one process, or wholly on the cDSP
    assert pipeline.transport_mode({}, hexagon_target=True) == "dsp-only"
    assert pipeline.transport_mode({"transport": None}, hexagon_target=False) == "in-process"


def test_modes_are_counted_per_replicate_with_their_meaning():
    modes = pipeline.transport_modes(_prov({"transport": {"mode": "ap"}}, {}, {}), hexagon_target=True)
    assert set(modes) == {"ap", "dsp-only"}
    assert modes["ap"]["replicates"] == 1 and modes["dsp-only"]["replicates"] == 2
    # dsp-only says what it cannot answer
    assert "only C against D" in modes["dsp-only"]["text"]


def test_setup_table_names_the_boundary_of_every_mode():
    doc = {
        "target": "hexagon",
        "transport_modes": pipeline.transport_modes(_prov({}, {"transport": {"mode": "ap"}}), hexagon_target=True),
    }
    tex = sections.setup_tex({"hexagon": pd.DataFrame()}, {"hexagon": doc})
    rows = [line for line in tex.splitlines() if line.startswith("host--engine boundary")]
    assert len(rows) == 2
    assert any("dsp-only (1 runs)" in r for r in rows) and any("ap (1 runs)" in r and "dspqueue" in r for r in rows)
