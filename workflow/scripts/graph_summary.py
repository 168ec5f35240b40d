"""graph_summary: trial table, ready profiles and per-point summary of the
graph points (hxfuse.graph.stats, hxfuse.graph.profile).  Raw files whose
SHA-256 differs from their provenance sidecar are refused, as for the sweep
points."""

import json
import re

import pandas as pd

from hxfuse import intermediate
from hxfuse.graph import profile as graphprofile
from hxfuse.graph import stats as graphstats
from hxfuse.runner import integrity

sm = snakemake  # noqa: F821
points = sm.params.points
# the raw files are judged against their sidecars' SHA-256 (refused, named)
with intermediate.job(sm, unchecked=["raw"]):
    graph_of = {p["name"]: intermediate.read_json_object(f) for p, f in zip(points, sm.input.graphs)}
    tables, checks, bad, load = [], {}, [], {}
    # the JSON Lines only: the .npy files were graph_check's (it compared
    # their SHA-256) and are deleted after it
    for raw, side in zip(sm.input.raw, sm.input.provenance):
        bad += integrity.sha256_problems(intermediate.read_json_object(side).get("raw_sha256"), raw, None)
    if bad:
        raise integrity.IntegrityError(
            "hxfuse: graph summary refused: raw files differ from their provenance "
            "sidecars (rerun those replicates with snakemake -f):\n  " + "\n  ".join(bad)
        )
    for raw, chk in zip(sm.input.raw, sm.input.checks):
        name, rep = re.search(r"/graph/raw/([^/]+)/rep(\d+)\.jsonl$", raw).groups()
        checks.setdefault(name, []).append(intermediate.read_json_object(chk))
        recs = graphstats.read_records(raw)
        load.setdefault(name, []).append(graphstats.machine_load(recs))
        tables.append(graphstats.trial_table(recs, name, int(rep)))
trials = pd.concat(tables, ignore_index=True)
profiles = {n: graphprofile.profile_summary(g) for n, g in graph_of.items()}
summary = graphstats.summarize(trials, points, checks, profiles, sm.params.analysis, load)
summary.to_csv(sm.output.summary, index=False)
trials.to_csv(sm.output.trials, index=False)
pd.concat([graphprofile.ready_profile(g).assign(point=n) for n, g in graph_of.items()]).to_csv(
    sm.output.profile, index=False
)
doc = {
    "config_hash": sm.params.config_hash,
    "points": [p["name"] for p in points],
    "failed_points": {r["point"]: r["failed_reasons"] for _, r in summary.iterrows() if r["failed"]},
    "analysis": sm.params.analysis,
}
with open(sm.output.summary_json, "w") as fh:
    json.dump(doc, fh, indent=1, sort_keys=True)
