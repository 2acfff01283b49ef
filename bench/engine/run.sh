#!/usr/bin/env bash
# The engine's figures, from process start to HTML written (hyperfine):
#  1. a fully cached rerun of a 30-cell notebook with 10 tables (issue 2);
#  2. chains of 30, 300 and 3,000 cells (issue 38: a cached rerun at most
#     0.25 ms a cell, a cold run of 3,000 cells at most 2.5 s, linear in
#     between): cold (an empty cache each run) and cached, per cell;
# then the in-process Go benchmarks (per-cell lookup cost, HTML size, the
# chains without process start). Each figure comes with the 1-minute load
# average around it: on a busy box, rerun before quoting.
# Usage: bench/engine/run.sh   (from the repository root)
set -euo pipefail
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load1() { cut -d' ' -f1 /proc/loadavg; }
go build -o "$out/benchbook" ./cmd/benchbook
go run ./bench/engine/cmd/gen > "$out/nb.star"
"$out/benchbook" run "$out/nb.star" 2>/dev/null
hyperfine --warmup 3 --runs 30 --export-markdown "$out/hyperfine.md" "$out/benchbook run $out/nb.star"
cat "$out/hyperfine.md"
ls -l "$out/nb.html" | awk '{print "HTML size:", $5, "bytes"}'

# mean of a hyperfine JSON export, in seconds
mean() { sed -n 's/.*"mean": *\([0-9.e-]*\).*/\1/p' "$1" | head -1; }
echo
echo "| cells | cold run | cold ms/cell | cached rerun | cached ms/cell | load1 before → after |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in 30 300 3000; do
	nb="$out/chain$n.star"
	go run ./bench/engine/cmd/gen -cells "$n" > "$nb"
	cache="$out/cache$n"
	before=$(load1)
	hyperfine --runs 3 --prepare "rm -rf $cache" --export-json "$out/cold$n.json" \
		"$out/benchbook run -cache-dir $cache $nb" >/dev/null 2>&1
	"$out/benchbook" run -cache-dir "$cache" "$nb" 2>/dev/null
	hyperfine --warmup 2 --runs 10 --export-json "$out/cached$n.json" \
		"$out/benchbook run -cache-dir $cache $nb" >/dev/null 2>&1
	cold=$(mean "$out/cold$n.json") cached=$(mean "$out/cached$n.json")
	awk -v n="$n" -v c="$cold" -v h="$cached" -v b="$before" -v a="$(load1)" 'BEGIN {
		printf "| %d | %.3f s | %.3f | %.3f s | %.3f | %s → %s |\n", n, c, c*1000/n, h, h*1000/n, b, a }'
done
echo
go test -run '^$' -bench 'CachedRun|Lookup' -benchtime 50x -count 5 ./bench/engine/
go test -run '^$' -bench 'Chain' -benchtime 2x -count 2 ./bench/engine/
