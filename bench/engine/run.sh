#!/usr/bin/env bash
# Fully cached rerun of a 30-cell notebook with 10 tables, from process
# start to HTML written, timed with hyperfine; plus the in-process Go
# benchmarks (per-cell lookup cost, HTML size).
# Usage: bench/engine/run.sh   (from the repository root)
set -euo pipefail
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/benchbook" ./cmd/benchbook
go run ./bench/engine/cmd/gen > "$out/nb.star"
"$out/benchbook" run "$out/nb.star" 2>/dev/null
hyperfine --warmup 3 --runs 30 --export-markdown "$out/hyperfine.md" "$out/benchbook run $out/nb.star"
cat "$out/hyperfine.md"
ls -l "$out/nb.html" | awk '{print "HTML size:", $5, "bytes"}'
go test -run '^$' -bench . -benchtime 50x -count 5 ./bench/engine/
