#!/bin/sh
# Runs each fuzzer of the load generator for FUZZTIME (default 10m), one at
# a time, and copies what the fuzzer found interesting into the seed corpus
# (builtins/workload/loadgen/testdata/fuzz), which every `go test` replays.
#   FuzzRespParser: the HTTP response parser both HTTP loops use, against
#                   net/http's ReadResponse.
#   FuzzPGReader:   the SQL loop's PostgreSQL message framing, against
#                   pgproto3's Frontend.
# A failing input is written to testdata/fuzz by `go test` itself.
set -eu
cd "$(dirname "$0")/../.."
t=${FUZZTIME:-10m}
pkg=./builtins/workload/loadgen
cache=$(go env GOCACHE)/fuzz/github.com/benchbook/benchbook/builtins/workload/loadgen
for f in ${FUZZERS:-FuzzRespParser FuzzPGReader}; do
	echo "== $f for $t"
	go test "$pkg" -run '^$' -fuzz "^$f\$" -fuzztime "$t" 2>&1 | tee "bench/fuzz/$f.log" | tail -3
	if [ -d "$cache/$f" ]; then
		mkdir -p "$pkg/testdata/fuzz/$f"
		cp -n "$cache/$f"/* "$pkg/testdata/fuzz/$f/" 2>/dev/null || true
	fi
done
