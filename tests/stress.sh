#!/usr/bin/env bash
# Stress check of the timing- and scheduler-dependent tests (pytest marker
# `timing`, registered in pyproject.toml): runs them N times in a row on the
# machine as it is, then N times more with a busy loop pinned to one core,
# and prints each test's passes, skips and failures in both conditions.
#
#   tests/stress.sh [N] [pytest arguments...]     # N defaults to 20
#   LOAD_CORE=1 tests/stress.sh 5 tests/runner    # the load on core 1, runner tests only
#
# A skip is a test saying that the machine could not give its premise (two
# free cores, an antagonist that really ran, ...): not a pass, not a failure.
# The script fails (exit 1) when a test failed in more than 1 of 20 runs
# (5%) in either condition, the bar a timing-sensitive test must clear
# before it lands.  Run it before changing such a test; record the last
# result in docs/timings.md with the machine named.  It takes N times the
# marked tests' time, twice (about a minute per run of all of them on a
# 2-core VM): on a machine that others load too, the "quiet" condition is
# not quiet, so say what else ran.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-20}
if [ $# -gt 0 ]; then shift; fi
case "$N" in '' | *[!0-9]* | 0)
    echo "stress.sh: N must be a positive integer, got '$N'" >&2
    exit 2
    ;;
esac
LOAD_CORE=${LOAD_CORE:-0}
if ! python3 -c "import os, sys; sys.exit(0 if $LOAD_CORE in os.sched_getaffinity(0) else 1)" 2>/dev/null; then
    echo "stress.sh: LOAD_CORE=$LOAD_CORE is not a core this process may use" >&2
    exit 2
fi
out=${STRESS_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/hxfuse-stress.XXXXXX")}
mkdir -p "$out"

load_pid=""
stop_load() {
    if [ -n "$load_pid" ]; then
        kill "$load_pid" 2>/dev/null || true
        wait "$load_pid" 2>/dev/null || true
        load_pid=""
    fi
}
trap stop_load EXIT INT TERM

rounds() { # label, then the pytest arguments
    local label=$1 i
    shift
    for i in $(seq 1 "$N"); do
        # a base temporary directory of its own: pytest's default one is
        # shared by every session of the user, and others' prune it
        python3 -m pytest -m timing -p no:cacheprovider -q -o addopts="" --basetemp="$out/tmp" \
            --junitxml="$out/$label-$i.xml" "$@" >"$out/$label-$i.log" 2>&1 || true
        rm -rf "$out/tmp"
        echo "stress.sh: $label run $i of $N done" >&2
    done
}

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
echo "machine: ${model:-unknown CPU}, $(nproc) cores online, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: $N per condition; logs and JUnit files: $out"

rounds quiet "$@"
# A busy loop on one core: what another job on a shared machine does.
python3 -c "import os, sys; os.sched_setaffinity(0, {int(sys.argv[1])})
while True: pass" "$LOAD_CORE" &
load_pid=$!
rounds loaded "$@"
stop_load

python3 - "$out" "$N" <<'EOF'
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

out, n = Path(sys.argv[1]), int(sys.argv[2])
tally = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))  # test -> label -> pass, skip, fail
bad_runs = []
for label in ("quiet", "loaded"):
    for i in range(1, n + 1):
        f = out / f"{label}-{i}.xml"
        if not f.exists():
            bad_runs.append(f"{label} run {i}: pytest wrote no report (see {label}-{i}.log)")
            continue
        cases = list(ET.parse(f).getroot().iter("testcase"))
        if not cases:
            bad_runs.append(f"{label} run {i}: no test selected (see {label}-{i}.log)")
        for case in cases:
            name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
            kinds = {c.tag for c in case}
            k = 2 if kinds & {"failure", "error"} else 1 if "skipped" in kinds else 0
            tally[name][label][k] += 1
width = max([len(t) for t in tally] + [4])
print(f"{'test':<{width}}  quiet pass/skip/fail  loaded pass/skip/fail")
failing = []
for test in sorted(tally):
    cells = []
    for label in ("quiet", "loaded"):
        p, s, f = tally[test][label]
        cells.append(f"{p:>4}/{s}/{f}".ljust(20))
        if f * 20 > p + s + f:
            failing.append(f"{test} ({label}: {f} of {p + s + f} runs failed)")
    print(f"{test:<{width}}  {cells[0]}  {cells[1]}")
for line in bad_runs:
    print("stress.sh:", line)
for line in failing:
    print("stress.sh: FAILS MORE THAN 1 IN 20:", line)
sys.exit(1 if failing or bad_runs else 0)
EOF
