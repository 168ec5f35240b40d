"""serve_summary: per-replay metrics of every serve point and their medians
with bootstrap intervals (hxfuse.serve.stats).  Raw files whose SHA-256
differs from their provenance sidecar are refused, as for the sweep points."""

import json

import pandas as pd

from hxfuse import intermediate
from hxfuse.serve import stats as serve

sm = snakemake  # noqa: F821
points = {p["name"]: p for p in sm.params.points}
# the raw files are judged against their sidecars' SHA-256 (refused, named)
with intermediate.job(sm, unchecked=["raws"]):
    # the JSON Lines only: the .npy files were serve_check's (it compared
    # their SHA-256) and are deleted after it
    serve.verify_sidecars(sm.input.raws, sm.input.provenance, [None] * len(sm.input.raws))
    reqs, envs = [], []
    for check, raw in zip(sm.input.checks, sm.input.raws):
        c = intermediate.read_json_object(check)
        if not c["ok"]:  # the check job fails first; never summarise a failed run
            raise SystemExit(f"hxfuse: {check}: failed check, not summarised")
        recs = serve.read_records(raw)
        t = serve.request_table(recs, replicate=c["replicate"])
        p = points[c["point"]]
        reqs.append(t.assign(point=p["name"], rate=p["rate"], window_us=p["window_us"]))
        env = serve.run_environment(recs)
        envs.append({"point": p["name"], "replicate": c["replicate"], **env, "loaded": serve.is_loaded(env)})
env = pd.DataFrame(envs)
# a point is loaded when any of its runs was: its numbers are then read with care
loaded = env.groupby("point")["loaded"].any()
requests = pd.concat(reqs, ignore_index=True)
replays = pd.concat(
    [
        serve.replay_metrics(g).assign(point=k[0], rate=k[1], window_us=k[2])
        for k, g in requests.groupby(["point", "rate", "window_us"], sort=True)
    ],
    ignore_index=True,
)
summary = serve.summarize(replays, n_resamples=sm.params.bootstrap, level=sm.params.ci)
summary["loaded"] = summary["point"].map(loaded).astype(bool)
requests.to_csv(sm.output.requests, index=False)
replays.to_csv(sm.output.replays, index=False)
summary.to_csv(sm.output.summary, index=False)
with open(sm.output.json, "w") as fh:
    json.dump(
        {
            "points": sm.params.points,
            "replicates": sm.params.replicates,
            "replays": int(len(replays)),
            "requests": int(len(requests)),
            "environment": env.to_dict(orient="records"),
            "loaded_points": sorted(p for p, v in loaded.items() if v),
            "summary": summary.to_dict(orient="records"),
        },
        fh,
        indent=1,
    )
