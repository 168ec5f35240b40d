"""serve_trace: the seeded arrival trace of one serve point and replicate."""

import sys

from hxfuse.serve.trace import make_trace, write_trace

sm = snakemake  # noqa: F821
sys.stderr = open(sm.log[0], "w")
write_trace(make_trace(**sm.params.trace), sm.output[0])
