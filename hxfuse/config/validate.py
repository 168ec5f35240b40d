"""Validating the pipeline's configuration: the one entry point.

The Snakefile (workflow/rules/common.smk) calls :func:`validate` once,
before any job is scheduled.  It

1. refuses a schema whose bounds differ from what the runner accepts
   (``hxfuse.config.schema.schema_limit_problems``) and keys that moved;
2. loads the study (``hxfuse.config.load.resolve_study``): the sweeps, and
   a study file's searches;
3. validates the config against ``workflow/schemas/config.schema.yaml``
   (JSON Schema 2020-12, every object closed) and fills the defaults,
   raising :class:`~hxfuse.config.load.ConfigError` with one line per
   problem naming the key (``config.run.rounds: 0 is less than the minimum
   of 1``);
4. runs :func:`check_semantics` for what a schema cannot say
   (``hxfuse.config.semantics``, and every candidate of every search:
   ``hxfuse.search.space``).

The points the config expands into: ``hxfuse.config.points``; what each
target needs on this machine, checked after validation:
``hxfuse.config.preflight``.
"""

from __future__ import annotations

import re

from hxfuse.config.load import ConfigError, resolve_study
from hxfuse.config.schema import MOVED_KEYS, default_filling_validator, describe, load_schema, schema_limit_problems
from hxfuse.config.semantics import farm_problems, run_problems, sweep_problems
from hxfuse.search.space import search_problems


def check_semantics(config: dict) -> list[str]:
    """Problems a JSON schema cannot express.  Returns messages naming keys."""
    # fixed vs searched: every candidate of every search space as well
    return sweep_problems(config) + farm_problems(config) + search_problems(config) + run_problems(config)


def validate(config: dict, schema: dict | None = None) -> dict:
    """Validate *config* in place (filling defaults) and return it.

    Raises ConfigError listing every schema violation, then every semantic one.
    """
    if not isinstance(config, dict):
        raise ConfigError("config: must be a mapping (is config.yaml empty?)")
    schema = schema or load_schema()
    drift = schema_limit_problems(schema)
    if drift:
        raise ConfigError("the schema and the runner disagree:\n  " + "\n  ".join(drift))
    moved = [
        f"config.{'.'.join(k)}: {why}"
        for k, why in MOVED_KEYS.items()
        if isinstance(config.get(k[0]), dict) and k[1] in config[k[0]]
    ]
    if moved:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(moved))
    resolve_study(config)
    study_file = config.pop("_study_file", None)
    searches_file = config.pop("_searches_file", None)

    def name_study(lines: list[str]) -> list[str]:
        # problems inside a study file name that file, not config.sweeps
        if searches_file:
            lines = [re.sub(r"^config\.searches\b", f"{searches_file}: searches", ln) for ln in lines]
        if not study_file:
            return lines
        return [re.sub(r"^config\.sweeps\b", f"{study_file}: sweeps", ln) for ln in lines]

    validator = default_filling_validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = name_study(sorted({describe(e) for e in errors}))
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    problems = name_study(check_semantics(config))
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    return config
