#!/usr/bin/env bash
# Repeats the CPU guards (guard_test.go) to see the distribution of their
# ratios: the bounds there were set from such runs on a busy and a quiet
# box. One line per run: the load, each arm's CPU per request per round,
# the ratio of medians of benchbook and of the slowed build to the peer.
#
#   bench/workload/guard.sh [runs]                 the closed loop against wrk
#   WRK2=/path/to/wrk2 bench/workload/guard.sh 10  the open loop against wrk2 too
#
# BENCHBOOK_GUARD_ROUNDS and BENCHBOOK_GUARD_DURATION change the rounds
# (default 6 of 2 s). Exit status is not the guard's: every run is shown.
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-10}
tests=TestHTTPClosedCPUGuard
[ -n "${WRK2:-}" ] && tests="$tests|TestHTTPOpenCPUGuard"
for i in $(seq "$runs"); do
	go test -count=1 -run "^($tests)\$" -v ./bench/workload 2>&1 | grep -E 'guard_test.go:[0-9]+: .*rounds of' | sed "s/^ *guard_test.go:[0-9]*: /run $i: /"
done
