"""graph_summary: trial table, ready profiles and per-point summary of the
graph points (hxfuse.graphstats, hxfuse.graphs)."""
import json
import re
import sys

import pandas as pd

from hxfuse import graphprofile, graphstats

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
points = sm.params.points
graph_of = {p["name"]: json.load(open(f)) for p, f in zip(points, sm.input.graphs)}
tables, checks = [], {}
for raw, chk in zip(sm.input.raw, sm.input.checks):
    name, rep = re.search(r"/graph/raw/([^/]+)/rep(\d+)\.jsonl$", raw).groups()
    c = json.load(open(chk))
    checks.setdefault(name, []).append(c)
    tables.append(graphstats.trial_table(graphstats.read_records(raw), name, int(rep)))
trials = pd.concat(tables, ignore_index=True)
profiles = {n: graphprofile.profile_summary(g) for n, g in graph_of.items()}
summary = graphstats.summarise(trials, points, checks, profiles, sm.params.analysis)
summary.to_csv(sm.output.summary, index=False)
trials.to_csv(sm.output.trials, index=False)
pd.concat([graphprofile.ready_profile(g).assign(point=n) for n, g in graph_of.items()]).to_csv(
    sm.output.profile, index=False)
doc = {"config_hash": sm.params.config_hash, "points": [p["name"] for p in points],
       "failed_points": {r["point"]: r["failed_reasons"] for _, r in summary.iterrows() if r["failed"]},
       "analysis": sm.params.analysis}
with open(sm.output.summary_json, "w") as fh:
    json.dump(doc, fh, indent=1, sort_keys=True)
