#!/usr/bin/env bash
# Issue 47's simulations (bench/stats/issue47): keeps the raw counts under
# bench/stats/raw/issue47-<time>/ and regenerates their section of
# bench/stats/RESULTS.md from those counts alone. TRIALS studies a cell
# (default 2000).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/stats/raw/issue47-$(date -u +%Y%m%dT%H%M%SZ)
go run -trimpath ./bench/stats/issue47 -trials "${TRIALS:-2000}" -out "$out"
go run -trimpath ./bench/stats/issue47 -table "$out" -write bench/stats/RESULTS.md
echo "wrote bench/stats/RESULTS.md's issue 47 section from $out"
