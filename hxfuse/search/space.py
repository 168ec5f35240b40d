"""Fixed vs searched: a search's declared space, its candidates and their runner arguments.

A *search* (``searches.<name>`` in a study file or a --configfile; schema in
``workflow/schemas/config.schema.yaml``) declares

- ``space``: point parameter -> list of values (every runner option is a
  point parameter, ``hxfuse.config.params.POINT_KEYS``; ``calibrate`` is not, it
  replaces the tasks).  A candidate takes one value of each, over ``base``;
- ``fixed``: the fixed default configuration (overrides of ``base``);
- ``budget``: how many candidates are evaluated (one runner invocation of
  group D each, ``budget.rounds`` measured rounds) and ``seed``.

The candidates are fixed before any job runs: the whole space when it fits
the budget (exhaustive, in the space's canonical order), otherwise
``budget.candidates`` distinct configurations drawn with a seeded
``random.Random(seed).sample`` over the space's index range (mixed radix, the
space's last parameter fastest), so the same seed always evaluates the same
candidates and every candidate is its own cached target.

Validation (:func:`search_problems`, called by
``hxfuse.config.validate.check_semantics``): the schema has already refused an
unknown parameter or a value the runner would refuse; here a value listed
twice, and every candidate (all of them up to :data:`MAX_CHECKED`, otherwise
every sampled one) and the fixed default go through the same semantic checks
as a sweep point (scratch plan, V workers against V's rows, placements naming
threads that exist, cores this machine has), each problem naming the search
and the candidate.  Nothing runs before all of that passes.

Standard library and ``hxfuse.config``'s params, points and semantics only: the search's run jobs take their
arguments from here at planning time.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
from typing import Any

from hxfuse.config import targets as hxtargets
from hxfuse.config.params import POINT_KEYS, target_settings
from hxfuse.config.points import Point, runner_args
from hxfuse.config.points import canonical as canonical_bytes
from hxfuse.config.semantics import point_problems

SPACE_KEYS = tuple(k for k in POINT_KEYS if k != "calibrate")
# spaces up to this size are checked candidate by candidate before any job;
# larger ones: every sampled candidate
MAX_CHECKED = 4096
# at most this many problem lines per search (the rest are counted)
MAX_PROBLEMS = 12
SWEEP_PREFIX = "search-"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def space_keys(space: dict) -> list[str]:
    """The space's parameters in the canonical order (that of POINT_KEYS),
    whatever order the file lists them in."""
    return [k for k in SPACE_KEYS if k in space]


def space_size(space: dict) -> int:
    n = 1
    for k in space_keys(space):
        n *= len(space[k])
    return n


def combo_at(space: dict, index: int) -> dict:
    """The configuration with this index in the space's canonical order
    (mixed radix, the last parameter fastest)."""
    keys = space_keys(space)
    if not 0 <= index < space_size(space):
        raise IndexError(f"index {index} outside the space of {space_size(space)} configurations")
    out = {}
    for k in reversed(keys):
        index, r = divmod(index, len(space[k]))
        out[k] = copy.deepcopy(space[k][r])
    return {k: out[k] for k in keys}


def choose(space: dict, budget: int, seed: int) -> list[int]:
    """Indices of the candidates a search evaluates: every configuration when
    the space has at most *budget*, else *budget* distinct ones drawn with
    the seed (sorted).  Deterministic for (space, budget, seed)."""
    size = space_size(space)
    if size <= budget:
        return list(range(size))
    return sorted(random.Random(seed).sample(range(size), budget))


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{v}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "x".join(map(str, value))
    return "null" if value is None else str(value)


def describe(values: dict) -> str:
    """A candidate's values in one line: ``affinity=spread v_workers=2``."""
    return " ".join(f"{k}={_short(v)}" for k, v in values.items()) or "(base)"


def searches(config: dict) -> dict:
    return config.get("searches") or {}


def search_targets(config: dict) -> list[str]:
    """Targets a search runs on: the configured ones with real timings
    (an emulated target's timings are not performance)."""
    return [t for t in config.get("targets", []) if not hxtargets.is_emulated(t)]


def params_of(config: dict, name: str, values: dict, target: str) -> dict:
    """Point parameters of a candidate (or of the fixed default, *values* =
    its ``fixed``): defaults < the search's base < values <
    target_settings.<target>.params."""
    s = searches(config)[name]
    p = {k: copy.deepcopy(config["defaults"][k]) for k in POINT_KEYS}
    p.update(copy.deepcopy(s.get("base") or {}))
    p.update(copy.deepcopy(values))
    p.update(copy.deepcopy(target_settings(config, target).get("params") or {}))
    return p


def _runner_args(
    config: dict,
    name: str,
    target: str,
    cid: str,
    params: dict,
    *,
    rounds: int,
    warmup: int,
    seed: int,
    groups: list[str],
) -> list[str]:
    s = searches(config)[name]
    cfg = dict(config)
    cfg["run"] = {
        **config["run"],
        "rounds": rounds,
        "warmup": warmup,
        "seed": seed,
        "groups": list(groups),
        "replicates": 1,
    }
    ts = copy.deepcopy(config.get("target_settings") or {})
    if isinstance(ts.get(target), dict):
        ts[target].pop("run", None)  # the search's own rounds, warm-up and groups
    cfg["target_settings"] = ts
    p = Point(target, SWEEP_PREFIX + name, s["workload"], cid, 0.0, cid, params)
    return runner_args(cfg, p, 0)


def args_hash(target: str, args: list[str]) -> str:
    """What one search run depends on, hashed as hxfuse.config.points.point_hash
    hashes a replicate's (its provenance sidecar records it)."""
    return hashlib.sha256(canonical_bytes({"target": target, "args": args})).hexdigest()[:12]


def plan(config: dict, name: str, target: str) -> dict:
    """Everything a search's jobs need, fixed before any job runs: the
    candidates (id, index, values, label, params, the search's runner
    arguments: group D only, ``budget.rounds``, the search's seed) and, for
    the candidates and the fixed default, the confirmation's arguments per
    pair k (groups A, C, D, ``confirm.rounds``, seed + 1 + k: both sides of a
    pair see the same inputs)."""
    s = searches(config)[name]
    space, budget, conf, seed = s["space"], s["budget"], s["confirm"], int(s["seed"])

    def confirm_args(cid, params):
        return [
            _runner_args(
                config,
                name,
                target,
                cid,
                params,
                rounds=conf["rounds"],
                warmup=conf["warmup"],
                seed=seed + 1 + k,
                groups=["A", "C", "D"],
            )
            for k in range(conf["pairs"])
        ]

    cands = []
    for j, idx in enumerate(choose(space, budget["candidates"], seed)):
        values = combo_at(space, idx)
        cid = f"c{j}"
        params = params_of(config, name, values, target)
        args = _runner_args(
            config, name, target, cid, params, rounds=budget["rounds"], warmup=budget["warmup"], seed=seed, groups=["D"]
        )
        cands.append(
            {
                "id": cid,
                "index": idx,
                "values": values,
                "label": describe(values),
                "params": params,
                "args": args,
                "hash": args_hash(target, args),
                "confirm_args": confirm_args(cid, params),
            }
        )
    fixed_values = copy.deepcopy(s.get("fixed") or {})
    fparams = params_of(config, name, fixed_values, target)
    fargs = _runner_args(
        config,
        name,
        target,
        "fixed",
        fparams,
        rounds=budget["rounds"],
        warmup=budget["warmup"],
        seed=seed,
        groups=["D"],
    )
    # the fixed default's own coordinates in the space, where it lies in it
    in_space = {k: fparams[k] for k in space_keys(space)}
    member = all(canonical(in_space[k]) in {canonical(v) for v in space[k]} for k in in_space)
    return {
        "name": name,
        "target": target,
        "title": s.get("title", name),
        "workload": s["workload"],
        "space": {k: space[k] for k in space_keys(space)},
        "space_size": space_size(space),
        "exhaustive": space_size(space) <= budget["candidates"],
        "budget": dict(budget),
        "confirm": dict(conf),
        "seed": seed,
        "candidates": cands,
        # the fixed default is measured like a candidate too (a reference:
        # outside the budget, never the best found), so the search's table
        # shows where it stands
        "fixed": {
            "id": "fixed",
            "index": -1,
            "values": fixed_values,
            "params": fparams,
            "label": "fixed: " + describe(in_space),
            "in_space": member,
            "space_values": in_space,
            "args": fargs,
            "hash": args_hash(target, fargs),
            "confirm_args": confirm_args("fixed", fparams),
        },
    }


def search_problems(config: dict) -> list[str]:
    """What is wrong with the configured searches, one line per problem
    naming the search and the candidate (empty: nothing).  The schema has
    already refused unknown parameters and values the runner refuses."""
    out: list[str] = []
    all_s = searches(config)
    if all_s and not search_targets(config):
        out.append(
            "config.searches: no target with real timings to search on (emulated targets' timings are not performance)"
        )
    for name, s in all_s.items():
        key = f"config.searches.{name}"
        space = s["space"]
        mine: list[str] = []
        for k in space_keys(space):
            seen: dict[str, int] = {}
            for i, v in enumerate(space[k]):
                c = canonical(v)
                if c in seen:
                    mine.append(f"{key}.space.{k}[{i}]: {v!r} is listed twice (also [{seen[c]}])")
                seen[c] = i
        if mine:
            out += mine
            continue
        size = space_size(space)
        idx = range(size) if size <= MAX_CHECKED else choose(space, s["budget"]["candidates"], int(s["seed"]))
        combos = [combo_at(space, i) for i in idx]
        pts = [{"name": "fixed", "x": 0, **(s.get("fixed") or {})}]
        pts += [{"name": f"c{j}", "x": j + 1, **v} for j, v in enumerate(combos)]
        probe = dict(config)
        sname = "_search_check"
        probe["sweeps"] = {sname: {"workloads": [s["workload"]], "base": s.get("base") or {}, "points": pts}}
        where = {0: f"{key}.fixed."}
        where.update({j + 1: f"{key}.space, candidate ({describe(v)}): " for j, v in enumerate(combos)})
        pat = re.compile(rf"^config\.sweeps\.{sname}\.points\[(\d+)\]\.")
        for target in search_targets(config):
            for msg in point_problems(probe, target):
                line = pat.sub(lambda m, w=where: w[int(m.group(1))], msg)
                if line not in mine:
                    mine.append(line)
        if len(mine) > MAX_PROBLEMS:
            mine = mine[:MAX_PROBLEMS] + [f"{key}: ... and {len(mine) - MAX_PROBLEMS} more problem(s) of this search"]
        out += mine
    return out


def search_summary(config: dict) -> list[str]:
    """Lines describing each search of a validated config (python -m hxfuse.config)."""
    out = []
    for name, s in searches(config).items():
        size, n = space_size(s["space"]), min(space_size(s["space"]), s["budget"]["candidates"])
        how = "the whole space" if size <= s["budget"]["candidates"] else f"drawn with seed {s['seed']}"
        out.append(
            f"search {name} ({s['workload']}, targets {', '.join(search_targets(config))}): "
            f"{n} of {size} configurations ({how}), {s['budget']['rounds']} rounds of group D "
            f"each, then {s['confirm']['pairs']} interleaved pairs of the best and the fixed "
            f"default ({s['confirm']['rounds']} rounds of A, C, D each)"
        )
    return out
