"""hxfuse: analysis of horizontal-fusion measurements (groups A-D, see
README.md, docs/metrics.md and docs/columns.md).

The modules are pure functions over tidy pandas tables; only :mod:`hxfuse.runner.records`
touches files.
"""

__version__ = "0.1.0"
