# Input functions and settings of the fixed-vs-searched rules (search.smk).
# Each search's plan (its candidates, their runner arguments and the
# confirmation's) is fixed here, before any job runs (hxfuse/search/space.py).
import json as _json

import hxfuse.search.space as hxsearchspace

SEARCH_PLANS = {
    (t, n): hxsearchspace.plan(config, n, t)
    for n in hxsearchspace.searches(config)
    for t in hxsearchspace.search_targets(config)
}
SEARCH_DIR = "results/{target}/search/{search}"


wildcard_constraints:
    search="[A-Za-z][A-Za-z0-9_-]*",
    cand="c[0-9]+|fixed",


def search_plan(wc):
    try:
        return SEARCH_PLANS[(wc.target, wc.search)]
    except KeyError:
        raise ValueError(
            f"hxfuse: no search {wc.search!r} on target {wc.target} in the config "
            f"(searches: {', '.join(sorted(hxsearchspace.searches(config))) or 'none'})"
        )


def search_candidate(wc):
    """A candidate of the plan, or the fixed default's reference run (`fixed`)."""
    for c in [*search_plan(wc)["candidates"], search_plan(wc)["fixed"]]:
        if c["id"] == wc.cand:
            return c
    raise ValueError(f"hxfuse: search {wc.search} has no candidate {wc.cand}")


def search_files(wc, kind):
    """Every candidate's raw file, .npy directory or provenance sidecar, in
    plan order, then the fixed default's reference run."""
    d = SEARCH_DIR.format(target=wc.target, search=wc.search)
    ext = {"raw": "raw/{}.jsonl", "npy": "npy/{}", "provenance": "raw/{}.provenance.json"}[kind]
    return [f"{d}/{ext.format(c['id'])}" for c in [*search_plan(wc)["candidates"], search_plan(wc)["fixed"]]]


def search_run_info(wc):
    c = search_candidate(wc)
    return {
        "target": wc.target,
        "sweep": hxsearchspace.SWEEP_PREFIX + wc.search,
        "workload": search_plan(wc)["workload"],
        "point": c["id"],
        "replicate": 0,
        "params": c["params"],
        "point_hash": c["hash"],
        "search_values": c["values"],
    }


def search_plan_light(wc):
    """The plan without the confirmation's arguments (the selection's params:
    changing the confirmation must not rerun the selection)."""
    p = {k: v for k, v in search_plan(wc).items() if k != "confirm"}
    p["candidates"] = [{k: v for k, v in c.items() if k != "confirm_args"} for c in p["candidates"]]
    p["fixed"] = {k: v for k, v in p["fixed"].items() if k != "confirm_args"}
    return p


def search_json_of(wc):
    """The selection's output, through the checkpoint (the confirmation's
    arguments depend on which candidate it chose).  ancient(): a rerun of the
    selection that chooses the same candidate (e.g. edited analysis code)
    does not rerun the confirmation; a different choice does (params)."""
    return ancient(checkpoints.search_select.get(target=wc.target, search=wc.search).output.json)


def search_best(wc):
    """The chosen candidate with its confirmation arguments (None: none passed)."""
    path = checkpoints.search_select.get(target=wc.target, search=wc.search).output.json
    best = _json.loads(Path(path).read_text()).get("best")
    if not best:
        return None
    c = {x["id"]: x for x in search_plan(wc)["candidates"]}[best["id"]]
    return {"id": c["id"], "values": c["values"], "params": c["params"], "confirm_args": c["confirm_args"]}


def search_outputs():
    """Every search's result, figure and the LaTeX table (rule `searches`)."""
    out = []
    for t, n in SEARCH_PLANS:
        out += [f"results/{t}/search/{n}/result.json"]
        out += [f"results/{t}/figures/search_{n}.{ext}" for ext in ("pdf", "png")]
    if out:
        out.append("paper/generated/search_table.tex")
    return out
