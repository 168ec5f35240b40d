"""mechanism: run the mechanism checks on the host runner, record them as data."""

import json
import sys
from pathlib import Path

from hxfuse.runner import mechanism

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
doc = mechanism.run_checks(snakemake.input.runner)  # noqa: F821
for c in doc["checks"]:
    print(f"{c['result']:8s} {c['key']}: {c['shown']}", file=sys.stderr)
# a failed check is a result the paper reports, not a pipeline error
Path(snakemake.output[0]).write_text(json.dumps(doc, indent=1) + "\n")  # noqa: F821
