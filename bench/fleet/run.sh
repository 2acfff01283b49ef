#!/bin/sh
# Reruns bench/fleet's figures: the agent overhead (2 local agents vs one
# process for the same total load, whole-process CPU, ABBA rounds; raw
# lines kept under bench/fleet/raw/) and the merge cost of 64 agents.
set -eu
cd "$(dirname "$0")/../.."
go build -o /tmp/benchbook-fleet-overhead ./bench/fleet/overhead
ts=$(date -u +%Y%m%dT%H%M)
/tmp/benchbook-fleet-overhead -rounds "${ROUNDS:-3}" -rate "${RATE:-2000}" -duration "${DURATION:-10s}" \
	| tee "bench/fleet/raw/overhead-$ts.jsonl"
go test -run '^$' -bench Merge64 -benchmem -count 5 ./builtins/workload/fleet/ | tee "bench/fleet/raw/merge-$ts.txt"
