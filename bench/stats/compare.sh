#!/usr/bin/env bash
# benchstat beside benchbook's compare on the same 32 seeded cases: keeps
# every input and output under bench/stats/raw/<time>/ and regenerates the
# table in bench/stats/RESULTS.md from those files alone.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/stats/raw/$(date -u +%Y%m%dT%H%M%SZ)
go run ./bench/stats -out "$out"
{
  sed '/^<!-- table -->$/q' bench/stats/RESULTS.md
  echo
  echo "From \`$out\` (benchstat of golang.org/x/perf $(go list -m -f '{{.Version}}' golang.org/x/perf)):"
  echo
  go run ./bench/stats -table "$out"
} > bench/stats/RESULTS.md.new
mv bench/stats/RESULTS.md.new bench/stats/RESULTS.md
echo "wrote bench/stats/RESULTS.md from $out"
