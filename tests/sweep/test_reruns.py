"""The summary counts the replicates the run job ran again (their sidecars'
``reruns``, hxfuse.runner.quiet), on every row of the point, and the
verdict page shows them beside the disturbed replicates left."""

import pandas as pd

from hxfuse.sweep import pipeline, report


def test_reruns_are_summed_per_point_from_the_sidecars():
    s = pd.DataFrame({"point_id": ["s/mv/a", "s/mv/a", "s/mv/b"], "group": ["A", "D", "D"]})
    prov = {"s/mv/a/rep0": {"reruns": 2}, "s/mv/a/rep1": {"reruns": 1}, "s/mv/b/rep0": {}, "s/mv/b/rep1": {"reruns": 0}}
    out = pipeline.add_reruns(s, prov)
    assert list(out["reruns"]) == [3, 3, 0]


def test_verdict_page_shows_disturbed_and_reruns():
    d = {
        "target": "host",
        "point_id": "s/mvd/a",
        "workload": "mvd",
        "group": "D",
        "x": 1.0,
        "replicates_disturbed": 1,
        "reruns": 4,
        "sensitivity": "with the disturbed replicate 2: D<C+overlap (same row)",
    }
    rows = report.verdict_rows(pd.DataFrame([d]))
    assert rows.iloc[0]["disturbed / reruns"] == "1 / 4"
    assert rows.iloc[0]["with disturbed replicates"].startswith("with the disturbed replicate 2")
