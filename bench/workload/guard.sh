#!/usr/bin/env bash
# Repeats the CPU guards (guard_test.go) to see the distribution of their
# ratios: the bounds there were set from such runs. One line per run: the
# load, each arm's CPU per request per round, benchbook's ratio of medians
# to the peer, and the slowed build's ratio to benchbook per round.
#
#   bench/workload/guard.sh [runs]                 the closed loop against wrk
#   WRK2=/path/to/wrk2 bench/workload/guard.sh 10  the open loop against wrk2 too
#
# BENCHBOOK_GUARD_ROUNDS and BENCHBOOK_GUARD_DURATION change the rounds
# (default 6 of 2 s). The builds are made once, before the runs;
# GUARD_BIN=/path puts another build in the current one's place (a build
# slowed on purpose, to see the guard trip). Exit status is not the
# guard's: every run is shown.
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-10}
tests=TestHTTPClosedCPUGuard
[ -n "${WRK2:-}" ] && tests="$tests|TestHTTPOpenCPUGuard"
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
go build -o "$bins/wlbench" ./bench/workload || exit 1
go build -tags slowloop -o "$bins/wlbench-slow" ./bench/workload || exit 1
bench/workload/build_ref.sh "$bins/wlbench-ref" || exit 1
go test -c -o "$bins/guard.test" ./bench/workload || exit 1
export BENCHBOOK_GUARD_BIN=${GUARD_BIN:-$bins/wlbench} BENCHBOOK_GUARD_SLOW_BIN=$bins/wlbench-slow BENCHBOOK_GUARD_REF_BIN=$bins/wlbench-ref
for i in $(seq "$runs"); do
	(cd bench/workload && "$bins/guard.test" -test.count=1 -test.run "^($tests)\$" -test.v 2>&1) |
		grep -E 'guard_test.go:[0-9]+: .*(rounds of|per round)' | sed "s/^ *guard_test.go:[0-9]*: /run $i: /"
done
