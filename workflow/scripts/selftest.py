"""selftest: hxrun --selftest on one target; see hxfuse.runner.selftest.
On the phone in mode ap it is still hxrun's ladder, in dsp-only mode (the AP
driver has no self-test yet), and the log says so."""

import json
import sys
from pathlib import Path

from hxfuse.runner import selftest

sm = snakemake  # noqa: F821
out = Path(sm.output[0])
work = out.with_name(out.name + ".work")
rc, err = selftest.run(
    sm.wildcards.target, sm.input.runner, sm.params.prefix, sm.params.env, work, float(sm.resources.timeout_s)
)
if json.loads(Path(sm.input.manifest).read_text()).get("mode") == "ap":
    note = (
        f"hxfuse: target {sm.wildcards.target} is in mode ap, but the AP driver hxrun-ap has no "
        "self-test yet: this ladder is hxrun --selftest in dsp-only mode (run_main_on_hexagon); "
        "the measurements run hxrun-ap\n"
    )
    print(note, end="", file=sys.stderr)
    err = note + err
Path(sm.log[0]).write_text(err)
steps, summary = selftest.read_ladder(work)
msg = selftest.verdict(sm.wildcards.target, steps, summary, rc, work)
if msg:
    # the ladder stays in the .work file (Snakemake removes a failed job's output)
    print(msg, file=sys.stderr)
    sys.exit(1)
work.replace(out)
