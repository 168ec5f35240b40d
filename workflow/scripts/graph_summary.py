"""graph_summary: trial table, ready profiles and per-point summary of the
graph points (hxfuse.graph.stats, hxfuse.graph.profile).  Raw files whose
SHA-256 differs from their provenance sidecar are refused, as for the sweep
points."""

import json
import re
import sys

import pandas as pd

from hxfuse.graph import profile as graphprofile
from hxfuse.graph import stats as graphstats
from hxfuse.runner import integrity

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
points = sm.params.points
graph_of = {p["name"]: json.load(open(f)) for p, f in zip(points, sm.input.graphs)}
tables, checks, bad, load = [], {}, [], {}
for raw, chk, side, npy in zip(sm.input.raw, sm.input.checks, sm.input.provenance, sm.input.npy):
    bad += integrity.sha256_problems(json.load(open(side)).get("raw_sha256"), raw, npy)
    name, rep = re.search(r"/graph/raw/([^/]+)/rep(\d+)\.jsonl$", raw).groups()
    c = json.load(open(chk))
    checks.setdefault(name, []).append(c)
    recs = graphstats.read_records(raw)
    load.setdefault(name, []).append(graphstats.machine_load(recs))
    tables.append(graphstats.trial_table(recs, name, int(rep)))
if bad:
    raise integrity.IntegrityError(
        "hxfuse: graph summary refused: raw files differ from their provenance "
        "sidecars (rerun those replicates with snakemake -f):\n  " + "\n  ".join(bad)
    )
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
