"""search_result: regret of the fixed default with its paired interval, and the verdict (hxfuse.search.compare)."""

import sys

from hxfuse import intermediate
from hxfuse.search import compare as search

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    doc = search.write_result(
        sm.input.search,
        sm.input.confirm,
        sm.output.json,
        rtol=sm.params.tolerance["f32_rtol"],
        atol=sm.params.tolerance["f32_atol"],
        analysis=sm.params.analysis,
    )
    c = doc["confirmation"]
    print(f"regret {c['regret']}: {c['verdict_text']}", file=sys.stderr)
