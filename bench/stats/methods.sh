#!/usr/bin/env bash
# The methods simulation (bench/stats/methods): keeps the raw counts under
# bench/stats/raw/methods-<time>/ and regenerates bench/stats/METHODS.md
# from those counts alone. TRIALS studies a cell (default 2000).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/stats/raw/methods-$(date -u +%Y%m%dT%H%M%SZ)
go run ./bench/stats/methods -trials "${TRIALS:-2000}" -out "$out"
go run ./bench/stats/methods -table "$out" > bench/stats/METHODS.md.new
mv bench/stats/METHODS.md.new bench/stats/METHODS.md
echo "wrote bench/stats/METHODS.md from $out"
