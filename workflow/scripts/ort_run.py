"""ort_run: one ONNX Runtime invocation of a point (hxfuse.external.ort), its log kept."""

import sys

from hxfuse.external.ort import main

sm = snakemake  # noqa: F821
with open(sm.log[0], "w") as log:
    sys.stdout = sys.stderr = log
    rc = main(
        [
            *map(str, sm.params.args),
            "--out",
            sm.output.jsonl,
            "--match-runner",
            sm.input.runner,
            "--order-seed",
            str(sm.params.order_seed),
            "--label",
            f"replicate={sm.wildcards.rep}",
            "--label",
            f"point={sm.params.point_id}",
        ]
    )
sys.exit(rc)
