#!/bin/sh
# Reruns bench/mongo: client CPU per operation of benchbook's Mongo loop
# (loadgen, what workload.mongo runs) against the official Go driver used
# plainly, same find, same clients, same server (FerretDB over SQLite, built
# from the nested module builtins/workload/mongotest/ferretserver, pinned to
# the last CPU; the client pinned to CPU 0), in ABBA rounds. Raw JSON lines
# go to bench/mongo/raw/cpu-<ts>.jsonl; bench/mongo/table turns every raw
# file into bench/mongo/TABLE.md.
#
#   ROUNDS=4 CLIENTS=4 DURATION=10s DOCS=10 bench/mongo/run.sh
#   URI=mongodb://host:27017/bench bench/mongo/run.sh    # against a real MongoDB
set -eu
cd "$(dirname "$0")/../.."
go build -o /tmp/benchbook-mongo-cpu ./bench/mongo/cpu
last=$(($(nproc) - 1))
uri=${URI:-}
if [ -z "$uri" ]; then
	(cd builtins/workload/mongotest/ferretserver && go build -o /tmp/benchbook-ferretserver .)
	data=$(mktemp -d)
	out=$(mktemp)
	taskset -c "$last" /tmp/benchbook-ferretserver -dir "$data" >"$out" 2>/dev/null &
	srv=$!
	trap 'kill $srv 2>/dev/null; rm -rf "$data" "$out"' EXIT
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -s "$out" ] && break
		sleep 0.5
	done
	uri="$(head -1 "$out")bench"
fi
ts=$(date -u +%Y%m%dT%H%M)
raw="bench/mongo/raw/cpu-$ts.jsonl"
/tmp/benchbook-mongo-cpu -uri "$uri" -seed -docs "${DOCS:-10}"
for round in $(seq 1 "${ROUNDS:-4}"); do
	for arm in plain loop loop plain; do
		taskset -c 0 /tmp/benchbook-mongo-cpu -uri "$uri" -docs "${DOCS:-10}" -arm "$arm" -round "$round" \
			-clients "${CLIENTS:-4}" -duration "${DURATION:-10s}" | tee -a "$raw"
	done
done
go run ./bench/mongo/table bench/mongo/raw/*.jsonl >bench/mongo/TABLE.md
cat bench/mongo/TABLE.md
