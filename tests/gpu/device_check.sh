#!/usr/bin/env bash
# The GPU checks, on a machine with an NVIDIA GPU (docs/gpu.md, "Running it"):
#
#   bash tests/gpu/device_check.sh            # from the repository root
#
# 1. build hxrun-cuda for the GPU found (make -C kernels TARGET=gpu);
# 2. the runner's mechanism: a calibrated run (busy-waits of known length on
#    the device clock) of A-D with B as streams and as a graph: launches are
#    asynchronous, C's barrier holds, D's roles overlap and beat C, the host
#    sees a short task end before the long one (tests/gpu/gpu_mechanism.py);
# 3. a real-work run at config/gpu.yaml's similar point: every output checked
#    against numpy (hxfuse.runner.checks), the alone times printed (to retune
#    the study's sizes);
# 4. the default GPU study through the pipeline (snakemake all --configfile
#    config/gpu.yaml): checks, verdicts, timelines, the LaTeX table.
#
# Budget: under 8 minutes on one H200 (steps 1-3 about 2, step 4 the rest;
# UNTESTED ON A GPU so far: these are estimates).  Set HXFUSE_GPU_CHECK_SKIP_PIPELINE=1
# to stop after step 3.
#
# What it needs there: nvcc (the machine's CUDA toolkit is preferred: it
# matches its driver; else NVCC=..., else the PyPI nvcc), make, a C compiler,
# Python >= 3.11 with numpy, pandas, matplotlib, seaborn, jinja2, pyyaml, and
# for step 4 Snakemake and its dependencies.  A machine without a package
# index gets those as wheels: on a machine with one, run
#   bash tests/gpu/fetch_wheels.sh      (writes .whl/, ~30 MB, ignored by git)
# and carry .whl/ along; this script installs them into /tmp/site.
#
# Outputs: $OUT (if set) or results/gpu-check/: the runs, the mechanism
# verdicts, the pipeline's verdicts, summary and LaTeX table, and a log.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
DEST=${OUT:-$REPO/results/gpu-check}
mkdir -p "$DEST"
LOG=$DEST/device_check.log
exec > >(tee "$LOG") 2>&1
export PYTHONUNBUFFERED=1
START=$(date +%s)
FAILED=()
step() { echo; echo "=== [$(($(date +%s) - START)) s] $*"; }
fail() { echo "FAILED: $*"; FAILED+=("$*"); }

step "machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,memory.total --format=csv ||
    fail "nvidia-smi: no GPU or no driver"
python3 --version

# Python: the repository's package, and carried wheels if any
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl ||
        fail "installing the carried wheels (.whl/)"
    export PYTHONPATH=$REPO:/tmp/site
    export PATH=/tmp/site/bin:$PATH
else
    export PYTHONPATH=$REPO
fi
python3 -c "import numpy, pandas, yaml" || fail "python3 lacks numpy, pandas or pyyaml"

# nvcc: NVCC, else the machine's toolkit, else the PyPI one
if [ -z "${NVCC:-}" ]; then
    for c in nvcc /usr/local/cuda/bin/nvcc; do
        if command -v "$c" >/dev/null 2>&1; then NVCC=$(command -v "$c"); break; fi
    done
fi
if [ -z "${NVCC:-}" ]; then
    NVCC=$(python3 -c "from hxfuse.config.gpu import pip_nvcc; print(pip_nvcc() or '')")
fi
[ -n "$NVCC" ] || { fail "no nvcc: install the CUDA toolkit or pip install nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl"; exit 1; }
export NVCC
"$NVCC" --version | tail -n 2

step "1. build (make -C kernels TARGET=gpu)"
make -C kernels TARGET=gpu NVCC="$NVCC" -j"$(nproc)" >"$DEST/build.log" 2>&1 || { tail -30 "$DEST/build.log"; fail "build"; exit 1; }
RUNNER=$REPO/kernels/build/gpu/hxrun
grep -m1 nvcc "$DEST/build.log" | cut -c1-200

step "2. mechanism: calibrated runs (M=400, V=300, D=200 us on the device clock)"
CAL=(--workloads mvd --calibrate M=400,V=300,D=200 --warmup 3 --rounds 20 --checkpoints 8 --seed 7)
for mode in streams graph; do
    out=$DEST/mechanism_$mode.jsonl
    if timeout 120 "$RUNNER" --out "$out" "${CAL[@]}" --b-mode "$mode" --label check=mechanism; then
        python3 tests/gpu/gpu_mechanism.py "$out" --calibrated || fail "mechanism checks (B as $mode)"
    else
        fail "calibrated run (B as $mode) exited $?"
    fi
done
# the clock alignment the timestamps rest on
python3 - "$DEST/mechanism_streams.jsonl" <<'EOF' || true
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
meta, end = recs[0], recs[-1]
print("gpu:", json.dumps(meta.get("gpu")))
print("clock:", json.dumps(meta.get("clock")))
print("alignment at end:", json.dumps(end.get("gpu")))
EOF

step "3. real work at the similar point: outputs against numpy"
REAL=(--workloads mv,md,mvd --m-shape 1024,1024,1024 --v-variant ddr --v-shape 2048,4096 --v-passes 4
      --d-shape 2048,8192 --d-desc-rows 32 --d-repeat 4 --warmup 2 --rounds 5 --affinity spread)
out=$DEST/real.jsonl
rm -rf "$DEST/real_npy"
if timeout 300 "$RUNNER" --out "$out" --npy-dir "$DEST/real_npy" "${REAL[@]}"; then
    python3 tests/gpu/gpu_mechanism.py "$out" || fail "real-work run: checksums or launches"
    python3 - "$out" "$DEST/real_npy" <<'EOF' || fail "numpy check of the real-work run"
import json, statistics, sys
from pathlib import Path
from hxfuse.runner.checks import check_point
res = check_point(Path(sys.argv[1]), Path(sys.argv[2]))
print("check:", res["status"], res.get("reasons", [])[:5])
recs = [json.loads(l) for l in open(sys.argv[1])]
alone = {}
for r in recs:
    if r.get("record") == "trial" and r["group"] == "alone" and not r["warmup"]:
        t = r["tasks"][0]
        alone.setdefault(t["task"], []).append((t["end"] - t["begin"]) / 1e3)
print("alone medians (us):", {k: round(statistics.median(v), 1) for k, v in alone.items()})
for g in "ABCD":
    ms = [r["makespan_ns"] / 1e3 for r in recs if r.get("record") == "trial" and r["group"] == g
          and r["workload"] == "mvd" and not r["warmup"] and not r["empty"]]
    if ms:
        print(f"mvd group {g}: median makespan {statistics.median(ms):.1f} us over {len(ms)} trials")
sys.exit(0 if res["status"] == "ok" else 1)
EOF
else
    fail "real-work run exited $?"
fi
rm -rf "$DEST/real_npy"

if [ "${HXFUSE_GPU_CHECK_SKIP_PIPELINE:-0}" = 1 ]; then
    step "4. pipeline skipped (HXFUSE_GPU_CHECK_SKIP_PIPELINE=1)"
elif ! python3 -c "import snakemake" 2>/dev/null; then
    step "4. pipeline"
    fail "Snakemake is not installed: on a machine with a package index run bash tests/gpu/fetch_wheels.sh and carry .whl/"
else
    step "4. the default GPU study through the pipeline (config/gpu.yaml)"
    rm -rf results/gpu results/gpu-graph
    if timeout 420 python3 -m snakemake --cores "$(nproc)" all --configfile config/gpu.yaml --keep-going \
        >"$DEST/snakemake.log" 2>&1; then
        echo "snakemake: ok"
    else
        tail -40 "$DEST/snakemake.log"
        fail "snakemake all --configfile config/gpu.yaml"
    fi
    for t in gpu gpu-graph; do
        for f in summary.json verdicts.csv; do
            [ -s "results/$t/$f" ] || fail "results/$t/$f missing"
        done
        [ -s "results/$t/verdicts.csv" ] && { echo "--- results/$t/verdicts.csv"; cut -c1-200 "results/$t/verdicts.csv"; }
        ls results/$t/figures/timeline/*/*/*.png >/dev/null 2>&1 || fail "results/$t: no timeline figures"
    done
    [ -s paper/generated/results_table.tex ] || fail "paper/generated/results_table.tex missing"
    # what comes back: at most 8 files (the device tool's limit)
    tar czf "$DEST/results.tgz" results/gpu/summary.json results/gpu/verdicts.csv results/gpu-graph/summary.json \
        results/gpu-graph/verdicts.csv paper/generated/results_table.tex paper/generated/evidence_table.tex \
        results/gpu/figures/timeline results/gpu-graph/figures/timeline 2>/dev/null || true
fi

step "done in $(($(date +%s) - START)) s"
rm -f "$DEST"/*.jsonl.tmp
gzip -f "$DEST"/mechanism_*.jsonl "$DEST"/real.jsonl 2>/dev/null || true
if [ "${#FAILED[@]}" -gt 0 ]; then
    printf 'FAILED: %s\n' "${FAILED[@]}"
    exit 1
fi
echo "all GPU checks passed"
