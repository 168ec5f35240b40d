"""serve_figures: latency CDFs per policy; p99, short-task p99 and miss rate
against the arrival rate and against the pairing window (hxfuse.serve.plots)."""

import pandas as pd

from hxfuse import intermediate
from hxfuse.serve import plots as serve_plots

sm = snakemake  # noqa: F821
outs = {name: [o for o in sm.output if f"/{name}." in o] for name in ("latency_cdf", "vs_rate", "vs_window")}
with intermediate.job(sm):
    requests = pd.read_csv(sm.input.requests)
    summary = pd.read_csv(sm.input.summary)
    serve_plots.latency_cdf(requests, outs["latency_cdf"])
    serve_plots.versus(summary, "rate", "arrival rate (requests/s)", outs["vs_rate"])
    serve_plots.versus(summary, "window_us", "pairing window w (us)", outs["vs_window"])
