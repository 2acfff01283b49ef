#!/usr/bin/env bash
# What tracking a live resource's state costs (issue 12): snapshot and
# restore of a cluster with a 200k-row and a 2M-row table, data dir copy
# against CREATE DATABASE ... TEMPLATE; the state property test with more
# steps; and the cached rerun of the 30-cell notebook (bench/engine).
# Usage: bench/state/run.sh   (from the repository root); raw outputs go to
# bench/state/raw/.
set -euo pipefail
raw=bench/state/raw
mkdir -p "$raw"
BENCHBOOK_BENCH_STATE=1 go test -count=1 -timeout 60m -run TestStateCost -v ./bench/state/ | tee "$raw/snapshot-restore.txt"
BENCHBOOK_STATE_STEPS=${STEPS:-300} go test -count=1 -timeout 120m -run TestStateProperty -v ./builtins/backend/statetest/property/ | grep -v '^\s*\(▶\|hit\|ran\|live\|↺\)' | tee "$raw/property.txt"
bench/engine/run.sh | tee "$raw/cached-rerun.txt"
