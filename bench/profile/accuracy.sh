#!/usr/bin/env bash
# What a profile's samples stand for: samples × period (the CPU a profile
# reports, and divides by the requests) against the target's CPU in /proc
# (utime + stime, and the threads' schedstat run time) over the same
# window, for the hot server under HTTP load and a CPU-bound loop, on the
# box as it is and with HOGS CPU-bound processes beside the target, at
# each rate in HZS. Every run stays under bench/profile/raw/<time>-accuracy-<hz>/
# and the section of bench/profile/RESULTS.md between its markers is made
# from those files alone.
#   ROUNDS=6 HZS="499 99" bench/profile/accuracy.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf"; exit 1; }
stamp=$(date -u +%Y%m%dT%H%M%SZ)
drv() { go run -trimpath ./builtins/internal/profile/overhead "$@"; }
for hz in ${HZS:-499 99}; do
  drv -accuracy -out "bench/profile/raw/$stamp-accuracy-$hz" -hz "$hz" -rounds "${ROUNDS:-6}" \
    -requests "${REQUESTS:-8000}" -hogs "${HOGS:-2}"
done
# the section: every accuracy set kept under raw/, oldest first
{
  for d in bench/profile/raw/*-accuracy-*; do
    echo
    echo "From \`$d\`:"
    echo
    drv -table "$d"
  done
} > bench/profile/accuracy.md.new
awk -v body=bench/profile/accuracy.md.new '
  /^<!-- accuracy -->$/ { print; while ((getline l < body) > 0) print l; skip = 1; next }
  /^<!-- \/accuracy -->$/ { skip = 0 }
  !skip' bench/profile/RESULTS.md > bench/profile/RESULTS.md.new
rm bench/profile/accuracy.md.new
mv bench/profile/RESULTS.md.new bench/profile/RESULTS.md
echo "wrote the accuracy section of bench/profile/RESULTS.md from bench/profile/raw/*-accuracy-*"
