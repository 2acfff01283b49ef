#!/usr/bin/env bash
# What perf sampling costs the target: its CPU per request with and without
# profile.StartPerf attached, in ABBA rounds, every run's figures kept under
# bench/profile/raw/<time>/ and the table in bench/profile/RESULTS.md made
# from those files alone, once for each way perf finds the target (-p on
# its pids, -a -G on a cgroup of its own). Run it on a quiet box:
# ROUNDS=8 bench/profile/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf"; exit 1; }
stamp=$(date -u +%Y%m%dT%H%M%SZ)
for by in pids cgroup; do
  go run ./builtins/internal/profile/overhead -out "bench/profile/raw/$stamp-$by" -by "$by" \
    -rounds "${ROUNDS:-4}" -requests "${REQUESTS:-3000}" -hz "${HZ:-499}"
done
{
  sed '/^<!-- table -->$/q' bench/profile/RESULTS.md
  for by in pids cgroup; do
    echo
    echo "From \`bench/profile/raw/$stamp-$by\`:"
    echo
    go run ./builtins/internal/profile/overhead -table "bench/profile/raw/$stamp-$by"
  done
} > bench/profile/RESULTS.md.new
mv bench/profile/RESULTS.md.new bench/profile/RESULTS.md
echo "wrote bench/profile/RESULTS.md from bench/profile/raw/$stamp-*"
