#!/usr/bin/env bash
# Two builds of the load generator, ABBA: the closed-loop CPU guard
# (guard_test.go's TestHTTPClosedCPUGuard, against wrk, each build's
# -tags slowloop build as its self-check and the other build as its
# reference arm, all in the same seconds) and loadgen's Go benchmarks, in
# the order A B B A per round. For a change that must not change the cost
# of a request (a move of code between packages, say).
#
#   bench/workload/abba.sh A_DIR B_DIR [rounds]
#
# Each DIR holds one build: wlbench (go build ./bench/workload), wlbench-slow
# (the same with -tags slowloop), loadgen.test (go test -c
# ./builtins/workload/loadgen) and, from the split of HTTP/1 into its own
# package on, h1wire.test (go test -c ./builtins/workload/loadgen/h1wire:
# BenchmarkRespParser moved there), made from a checkout of that commit, e.g.
#   git worktree add /tmp/a <commit> && (cd /tmp/a && go build -o $A/wlbench ./bench/workload && ...)
# and a file rev naming the commit. Every run's whole output goes to
# bench/workload/raw/<UTC time>[-LABEL]/ with the 1-minute load average
# before it; nothing is aggregated here.
set -uo pipefail
cd "$(dirname "$0")/../.."
A=$1 B=$2 rounds=${3:-2}
raw=bench/workload/raw/$(date -u +%Y%m%dT%H%M%SZ)${LABEL:+-$LABEL}
mkdir -p "$raw"
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
go test -c -o "$bins/guard.test" ./bench/workload || exit 1
{
	echo "A: $A ($(cat "$A/rev" 2>/dev/null)), B: $B ($(cat "$B/rev" 2>/dev/null)), $rounds rounds of A B B A"
	echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores, $(uname -sr), $(go version | cut -d' ' -f3)"
} >"$raw/meta.txt"
benches='^Benchmark(Record|RecordTagged|ProgressLine|HTTPRoundTrip|HTTPRoundTripRaw|HTTPRoundTripRawMix|RespParser)$'
run() { # run ROUND STEP NAME DIR OTHER
	local out=$raw/r$1-$2-$3
	echo "# load $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%T)" >"$out-guard.txt"
	(cd bench/workload && BENCHBOOK_GUARD_BIN=$4/wlbench BENCHBOOK_GUARD_SLOW_BIN=$4/wlbench-slow BENCHBOOK_GUARD_REF_BIN=$5/wlbench \
		"$bins/guard.test" -test.count=1 -test.run '^TestHTTPClosedCPUGuard$' -test.v) >>"$out-guard.txt" 2>&1
	echo "# load $(cut -d' ' -f1-3 /proc/loadavg) at $(date -u +%T)" >"$out-bench.txt"
	(cd builtins/workload/loadgen && "$4/loadgen.test" -test.run '^$' -test.bench "$benches" -test.benchtime 1s -test.benchmem) >>"$out-bench.txt" 2>&1
	if [ -x "$4/h1wire.test" ]; then
		(cd builtins/workload/loadgen/h1wire && "$4/h1wire.test" -test.run '^$' -test.bench "$benches" -test.benchtime 1s -test.benchmem) >>"$out-bench.txt" 2>&1
	fi
}
for i in $(seq "$rounds"); do
	run "$i" 1 A "$A" "$B"
	run "$i" 2 B "$B" "$A"
	run "$i" 3 B "$B" "$A"
	run "$i" 4 A "$A" "$B"
done
echo "$raw"
