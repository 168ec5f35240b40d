"""search_confirm: the best found and the fixed default in interleaved pairs (hxfuse.search.confirm)."""

import sys

from hxfuse.search.confirm import run_confirmation

sm = snakemake  # noqa: F821
sys.exit(
    run_confirmation(
        runner=sm.input.runner,
        prefix=sm.params.prefix,
        env=sm.params.env,
        timeout_s=float(sm.resources.timeout_s),
        fixed_args=sm.params.fixed_args,
        best=sm.params.best,
        point=sm.params.point,
        out_dir=sm.output[0],
        log=sm.log[0],
    )
)
