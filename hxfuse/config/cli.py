"""``python3 -m hxfuse.config [FILE ...]``: check a config before running it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hxfuse.config.load import ConfigError, load_yaml
from hxfuse.config.params import replicates
from hxfuse.config.points import points
from hxfuse.config.validate import validate
from hxfuse.search.space import search_summary


def _deep_merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def main(argv: list[str] | None = None) -> int:
    """python -m hxfuse.config [FILE ...]: validate config.yaml with FILEs
    merged over it, as `snakemake --configfile FILE ...` would, and print the
    points; a YAML error names the file and line (Snakemake's own message for
    a --configfile names neither)."""
    ap = argparse.ArgumentParser(prog="python -m hxfuse.config", description=main.__doc__)
    ap.add_argument("files", nargs="*", help="--configfile files, merged over --base in order")
    ap.add_argument("--base", default="config.yaml", help="the Snakefile's config (default: %(default)s)")
    a = ap.parse_args(argv)
    try:
        cfg = load_yaml(a.base) if Path(a.base).is_file() else {}
        for f in a.files:
            cfg = _deep_merge(cfg or {}, load_yaml(f) or {})
        validate(cfg)
    except ConfigError as err:
        print(f"hxfuse: {err}", file=sys.stderr)
        return 1
    pts = points(cfg)
    print(
        f"study {cfg.get('study') or '(sweeps given directly)'}: {len(pts)} points, "
        f"{sum(replicates(cfg, p.target) for p in pts)} runner jobs"
    )
    for p in pts:
        print(f"  {p.target}/{p.id}")
    for line in search_summary(cfg):
        print(line)
    return 0
