#!/bin/sh
# Runs each fuzzer for FUZZTIME (default 10m), one at a time, and copies
# what the fuzzer found interesting into its package's seed corpus
# (testdata/fuzz), which every `go test` replays.
#   FuzzRespParser: the HTTP response parser both HTTP loops use, against
#                   net/http's ReadResponse (builtins/workload/loadgen/h1wire).
#   FuzzPGReader:   the SQL loop's PostgreSQL message framing, against
#                   pgproto3's Frontend (builtins/workload/loadgen/pgwire).
#   FuzzNotebook:   whole notebooks made of the project's own cells and
#                   mutations, run twice and rendered (runtime/nbfuzz).
# A failing input is written to testdata/fuzz by `go test` itself.
# FUZZPARALLEL (default: Go's, one worker per core) bounds the workers.
set -eu
cd "$(dirname "$0")/../.."
t=${FUZZTIME:-10m}
par=${FUZZPARALLEL:+-parallel $FUZZPARALLEL}
for f in ${FUZZERS:-FuzzRespParser FuzzPGReader FuzzNotebook}; do
	case $f in
	FuzzNotebook) pkg=runtime/nbfuzz ;;
	FuzzRespParser) pkg=builtins/workload/loadgen/h1wire ;;
	*) pkg=builtins/workload/loadgen/pgwire ;;
	esac
	cache=$(go env GOCACHE)/fuzz/github.com/benchbook/benchbook/$pkg
	echo "== $f for $t"
	# shellcheck disable=SC2086
	go test "./$pkg" -run '^$' -fuzz "^$f\$" -fuzztime "$t" $par 2>&1 | tee "bench/fuzz/$f.log" | tail -3
	if [ -d "$cache/$f" ]; then
		mkdir -p "$pkg/testdata/fuzz/$f"
		cp -n "$cache/$f"/* "$pkg/testdata/fuzz/$f/" 2>/dev/null || true
	fi
done
