#!/usr/bin/env bash
# Wheels of what the pipeline needs that an H200 machine of the kind
# tests/gpu/device_check.sh runs on lacks (it has no package index): Snakemake
# and its dependencies, at constraints.txt's versions, for Python 3.12 on
# x86-64 Linux.  Run on a machine with a package index, from the repository
# root; carry the .whl/ folder it writes (ignored by git) to the GPU machine:
#
#   bash tests/gpu/fetch_wheels.sh
#
# device_check.sh installs them with pip --no-index into /tmp/site.
set -euo pipefail
cd "$(dirname "$0")/../.."
# already on that machine (docs/gpu.md, "Running it"): not carried
HAVE=" numpy pandas matplotlib seaborn jinja2 markupsafe pyyaml packaging contourpy cycler fonttools kiwisolver
 pillow pyparsing python-dateutil six tzdata pytz attrs certifi charset-normalizer idna requests urllib3 psutil
 platformdirs typing-extensions pygments rich markdown-it-py mdurl tabulate filelock fsspec pytest pluggy iniconfig
 hypothesis sortedcontainers click wrapt onnx onnxruntime protobuf flatbuffers ml-dtypes
 black clang-format ruff ziglang snakefmt toml pathspec mypy-extensions snakemake-executor-plugin-slurm
 snakemake-executor-plugin-slurm-jobstep "
# (the last two lines: CI's tools and the Slurm plugin, which the GPU check does not use)
mkdir -p .whl
exclude=$(git rev-parse --git-common-dir)/info/exclude
grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >>"$exclude"
want=()
while IFS= read -r line; do
    case "$line" in '#'* | '') continue ;; esac
    name=${line%%==*}
    lname=$(echo "$name" | tr 'A-Z_.' 'a-z--')
    case "$HAVE" in *" $lname "*) continue ;; esac
    want+=("$line")
done <constraints.txt
echo "fetching ${#want[@]} wheels for Python 3.12"
for spec in "${want[@]}"; do
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        --platform manylinux1_x86_64 --platform any -d .whl "$spec" || echo "no wheel for $spec (skipped)"
done
du -sh .whl
