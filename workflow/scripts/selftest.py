"""selftest: hxrun --selftest on one target; see hxfuse.runner.selftest."""

import sys
from pathlib import Path

from hxfuse.runner import selftest

sm = snakemake  # noqa: F821
out = Path(sm.output[0])
work = out.with_name(out.name + ".work")
rc, err = selftest.run(
    sm.wildcards.target, sm.input.runner, sm.params.prefix, sm.params.env, work, float(sm.resources.timeout_s)
)
Path(sm.log[0]).write_text(err)
steps, summary = selftest.read_ladder(work)
msg = selftest.verdict(sm.wildcards.target, steps, summary, rc, work)
if msg:
    # the ladder stays in the .work file (Snakemake removes a failed job's output)
    print(msg, file=sys.stderr)
    sys.exit(1)
work.replace(out)
