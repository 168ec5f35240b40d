"""Loading the configuration: YAML files and studies.

Studies: the sweeps are chosen as a whole, never merged.  ``config.yaml``
has no ``sweeps``; ``study: NAME`` loads ``config/studies/NAME.yaml`` (or a
path to a YAML file), and a ``--configfile`` may give ``sweeps`` directly
instead.  Giving both is an error; giving neither loads the default study.
:func:`resolve_study` does this before validation
(``hxfuse.config.validate``); YAML errors in files the project reads itself
name the file and line (:func:`load_yaml`).

:class:`ConfigError` is the one error of a bad configuration: its message
names every offending key, and the Snakefile prints it and stops before any
job.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
STUDIES_DIR = REPO_ROOT / "config" / "studies"
DEFAULT_STUDY = "default"


class ConfigError(ValueError):
    """The configuration is invalid; the message names every offending key."""


def load_yaml(path: Path | str) -> Any:
    """A YAML file, or ConfigError naming the file and line of a syntax error
    (yaml's own message names neither when the file came through Snakemake)."""
    try:
        with open(path) as fh:
            return yaml.safe_load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        what = " ".join(x for x in (exc.context, exc.problem) if x)
        raise ConfigError(f"{where}: YAML syntax error: {what}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: YAML error: {exc}") from None


def study_path(study: str, cwd: Path | str | None = None) -> Path:
    """The file of a study: a name (letters, digits, _ or -) is
    config/studies/<name>.yaml of this checkout; anything else is a path,
    relative to the working directory."""
    if re.fullmatch(r"[A-Za-z0-9_-]+", study):
        return STUDIES_DIR / f"{study}.yaml"
    path = Path(study)
    return path if path.is_absolute() else Path(cwd or os.getcwd()) / path


STUDY_KEYS = ("description", "include", "sweeps", "searches")


def resolve_study(config: dict, cwd: Path | str | None = None) -> dict:
    """Put the study's sweeps into *config* (in place) and return it.

    ``sweeps`` given directly (a --configfile) is the study; otherwise
    ``study`` (default: the default study) names the file to load.  Both at
    once is an error: a study is replaced whole, never merged.  The loaded
    file's name is kept in ``study_file`` for the messages of validate()."""
    if not isinstance(config, dict):
        return config
    has_sweeps, study = "sweeps" in config, config.get("study")
    if has_sweeps and study is not None:
        raise ConfigError(
            "invalid configuration:\n  config.study and config.sweeps: give one "
            "(a study file replaces the sweeps whole; remove `study` to use the "
            "sweeps given here, or `sweeps` to use the study)"
        )
    if has_sweeps:
        config["study"] = None
        return config
    study = DEFAULT_STUDY if study is None else study
    if not isinstance(study, str) or not study:
        raise ConfigError(
            f"invalid configuration:\n  config.study: {study!r} is not a study name or a path to a YAML file"
        )
    path = study_path(study, cwd)
    if not path.is_file():
        avail = ", ".join(sorted(q.stem for q in STUDIES_DIR.glob("*.yaml")))
        raise ConfigError(
            f"invalid configuration:\n  config.study: no study file {path} (studies in {STUDIES_DIR}: {avail})"
        )
    sweeps, files = _study_sweeps(path, cwd, ())
    config["study"] = study
    config["sweeps"] = sweeps
    # a study file's own `searches` (fixed vs searched, hxfuse.search.space)
    # join those given directly; a name given by both is an error
    own = (load_yaml(path) or {}).get("searches") or {}
    given = config.get("searches") or {}
    if not isinstance(own, dict):
        raise ConfigError(f"invalid configuration:\n  {path}: searches: a mapping name -> search")
    both = sorted(set(own) & set(given)) if isinstance(given, dict) else []
    if both:
        raise ConfigError(
            f"invalid configuration:\n  {path}: search(es) {', '.join(map(repr, both))} "
            "given by both the study and the config (search names must differ)"
        )
    if own:
        config["searches"] = {**given, **own}
        if not given:
            config["_searches_file"] = str(path)
    # the file named in messages: the study itself, or where each sweep came
    # from when it includes others
    config["_study_file"] = str(path) if len(files) == 1 else f"{path} (with {', '.join(files[1:])})"
    return config


def _study_sweeps(path: Path, cwd, seen: tuple) -> tuple[dict, list[str]]:
    """The sweeps of a study file: those of every study it `include`s (in
    order), then its own.  A sweep name given twice, an include cycle or a
    missing file is an error naming the file."""
    if path in seen:
        raise ConfigError(
            f"invalid configuration:\n  {path}: includes itself ({' -> '.join(map(str, seen + (path,)))})"
        )
    if not path.is_file():
        avail = ", ".join(sorted(q.stem for q in STUDIES_DIR.glob("*.yaml")))
        raise ConfigError(
            f"invalid configuration:\n  {seen[-1] if seen else 'config.study'}: "
            f"no study file {path} (studies in {STUDIES_DIR}: {avail})"
        )
    doc = load_yaml(path)
    if not isinstance(doc, dict) or not ("sweeps" in doc or "include" in doc):
        raise ConfigError(
            f"invalid configuration:\n  {path}: a study file is a mapping with "
            "`sweeps` and/or `include` (and optionally `description`)"
        )
    extra = sorted(set(doc) - set(STUDY_KEYS))
    if extra:
        raise ConfigError(
            f"invalid configuration:\n  {path}: unknown key(s) "
            f"{', '.join(map(repr, extra))} (allowed: {', '.join(STUDY_KEYS)})"
        )
    inc = doc.get("include") or []
    if not isinstance(inc, list) or not all(isinstance(x, str) and x for x in inc):
        raise ConfigError(f"invalid configuration:\n  {path}: include: a list of study names or paths")
    sweeps: dict = {}
    origin: dict[str, Path] = {}
    files = [str(path)]
    for name in inc:
        sub_path = study_path(name, path.parent if not re.fullmatch(r"[A-Za-z0-9_-]+", name) else cwd)
        sub, sub_files = _study_sweeps(sub_path, cwd, seen + (path,))
        files += sub_files
        for k, v in sub.items():
            if k in sweeps:
                raise ConfigError(
                    f"invalid configuration:\n  {path}: sweep {k!r} is given by "
                    f"both {origin[k]} and {sub_path} (sweep names must differ)"
                )
            sweeps[k], origin[k] = v, sub_path
    own = doc.get("sweeps")
    if own is not None and not isinstance(own, dict):
        raise ConfigError(f"invalid configuration:\n  {path}: sweeps: a mapping name -> sweep")
    for k, v in (own or {}).items():
        if k in sweeps:
            raise ConfigError(
                f"invalid configuration:\n  {path}: sweep {k!r} is given by "
                f"both {origin[k]} and {path} (sweep names must differ)"
            )
        sweeps[k], origin[k] = v, path
    return sweeps, files
