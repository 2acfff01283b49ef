#!/usr/bin/env bash
# Issue 47's simulations (bench/stats/rounding): keeps the raw counts under
# bench/stats/raw/rounding-<time>/ and regenerates their section of
# bench/stats/RESULTS.md from those counts alone. TRIALS studies a cell
# (default 2000).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/stats/raw/rounding-$(date -u +%Y%m%dT%H%M%SZ)
go run -trimpath ./bench/stats/rounding -trials "${TRIALS:-2000}" -out "$out"
go run -trimpath ./bench/stats/rounding -table "$out" -write bench/stats/RESULTS.md
echo "wrote bench/stats/RESULTS.md's issue 47 section from $out"
