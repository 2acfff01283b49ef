#!/usr/bin/env bash
# Issue 49's capacity searches against a target of known capacity, beside
# plain sweeps of the same range: keeps the raw records under
# bench/capacity/raw/<time>/ and regenerates bench/capacity/RESULTS.md's
# tables from every raw directory there, oldest first. SEARCHES per study (default 20), SWEEPS of each
# kind (default 3), STUDY=zero-think|think for one.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/capacity/raw/$(date -u +%Y%m%dT%H%M%SZ)
bin=$(mktemp -d)/capbench
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -trimpath -o "$bin" ./bench/capacity
"$bin" -out "$out" -searches "${SEARCHES:-20}" -sweeps "${SWEEPS:-3}" ${STUDY:+-study "$STUDY"}
# Every run kept, oldest first: a busy box's beside a quiet one's.
dirs=$(ls -d bench/capacity/raw/*/ | sed 's#/$##' | paste -sd,)
"$bin" -table "$dirs" -write bench/capacity/RESULTS.md
echo "wrote bench/capacity/RESULTS.md from $dirs"
