"""external_point: D (hxrun) against ONNX Runtime's groups for one point (hxfuse.external.compare)."""

import sys

from hxfuse import intermediate
from hxfuse.external.compare import main

sm = snakemake  # noqa: F821
with intermediate.job(sm):
    sys.stdout = sys.stderr  # the comparison's report goes to the log too
    rc = main(
        [
            "--ort",
            *sm.input.ort,
            "--runner",
            *sm.input.runner,
            "--out",
            sm.output.csv,
            "--min-effect",
            str(sm.params.min_effect),
            "--bootstrap",
            str(sm.params.bootstrap),
            "--label",
            f"sweep={sm.wildcards.sweep}",
            "--label",
            f"point={sm.wildcards.point}",
        ]
    )
sys.exit(rc)
