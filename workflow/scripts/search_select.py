"""search_select: check every candidate, tabulate its D medians, choose the best (hxfuse.search.compare)."""

import sys

from hxfuse import intermediate
from hxfuse.search import compare as search

sm = snakemake  # noqa: F821
with intermediate.job(sm, unchecked=["raw"]):
    doc = search.write_search(
        sm.params.plan,
        sm.input.raw,
        sm.input.npy,
        sm.input.provenance,
        sm.output.json,
        sm.output.csv,
        rtol=sm.params.tolerance["f32_rtol"],
        atol=sm.params.tolerance["f32_atol"],
        analysis=sm.params.analysis,
    )
    best = doc["best"]
    print(
        f"search {doc['name']}: {doc['cost']['candidates']} candidates, best "
        f"{best['id'] + ' ' + best['label'] if best else 'none (every candidate failed its check)'}",
        file=sys.stderr,
    )
