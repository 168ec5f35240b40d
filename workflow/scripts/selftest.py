"""selftest (and selftest_ap): the runner's --selftest on one target; see
hxfuse.runner.selftest.  On the phone in mode ap, hxrun's ladder is the
DSP's (run_main_on_hexagon, dsp-only) and the log says so; hxrun-ap's is the
boundary's (rule selftest_ap)."""

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
runner = Path(sm.input.runner).name
if json.loads(Path(sm.input.manifest).read_text()).get("mode") == "ap" and runner == "hxrun":
    note = (
        f"hxfuse: target {sm.wildcards.target} is in mode ap: this ladder is the DSP's, hxrun --selftest "
        "in dsp-only mode (run_main_on_hexagon); the boundary's is hxrun-ap --selftest (rule selftest_ap), "
        "and the measurements run hxrun-ap\n"
    )
    print(note, end="", file=sys.stderr)
    err = note + err
Path(sm.log[0]).write_text(err)
steps, summary = selftest.read_ladder(work)
# the message names the ladder when it is not hxrun's
msg = selftest.verdict(sm.wildcards.target + ("" if runner == "hxrun" else f" ({runner})"), steps, summary, rc, work)
if msg:
    # the ladder stays in the .work file (Snakemake removes a failed job's output)
    print(msg, file=sys.stderr)
    sys.exit(1)
work.replace(out)
