#!/usr/bin/env bash
# The inputs walk of issue 47 in its long form: TestInputsProperty
# (builtins/backend/statetest/property/inputs_test.go) with STEPS steps
# (default 220), each comparing every cell of an incremental run with a
# fresh run from an empty cache. With a commit as argument, the same walk
# (this tree's test file and the statetest helpers it calls) runs against
# that commit's code instead, in a temporary copy: what the walk finds
# where the fixes are missing.
# SEED (default 47) picks another walk.
# Usage: [STEPS=N] [SEED=N] bench/state/inputs.sh [COMMIT]   (from the
# repository root); the output goes to
# bench/state/raw/inputs-walk[-COMMIT][-seedN].txt.
set -euo pipefail
raw=bench/state/raw
mkdir -p "$raw"
steps=${STEPS:-220}
seed=${SEED:-47}
test=builtins/backend/statetest/property/inputs_test.go
out="$raw/inputs-walk.txt"
dir=.
if [ $# -gt 0 ]; then
	out="$raw/inputs-walk-$1.txt"
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	git archive "$1" | tar -x -C "$dir"
	cp "$test" "$dir/$test"
	cp builtins/backend/statetest/statetest.go "$dir/builtins/backend/statetest/"
fi
[ "$seed" = 47 ] || out="${out%.txt}-seed$seed.txt"
commit=$(git rev-parse --short "${1:-HEAD}")
[ $# -gt 0 ] || git diff --quiet HEAD -- . ":!bench" || commit="$commit + uncommitted changes"
{
	echo "# inputs walk: $steps steps, seed $seed, code at $commit, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	(cd "$dir" && BENCHBOOK_INPUT_STEPS=$steps BENCHBOOK_INPUT_SEED=$seed go test -trimpath -count=1 -timeout 60m -run TestInputsProperty -v ./builtins/backend/statetest/property/ 2>&1) || true
} | tee "$out"
