#!/usr/bin/env bash
# The warm-cache property at length: N random edits (default 5000) of a
# notebook, each followed by a run on the accumulated cache and a run on an
# empty one, which must show the same outputs (CI runs 200).
# Usage: bench/engine/soundness.sh [N]   (from the repository root)
set -euo pipefail
BENCHBOOK_EDITS=${1:-5000} go test -count=1 -v -timeout 2h -run 'TestWarmCacheEqualsEmptyCache$' ./runtime/ | grep -E 'edits|FAIL|ok'
