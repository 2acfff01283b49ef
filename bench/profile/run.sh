#!/usr/bin/env bash
# What perf sampling costs the target, in the target's own CPU, with and
# without profile.StartPerf attached, in ABBA rounds: the hot server under
# HTTP load (perf on its pids, -p, at each rate in HZS; and by a cgroup of
# its own, -a -G), and a CPU-bound work that never switches context. Every
# run's figures stay under bench/profile/raw/<time>-<case>/ and the tables
# in bench/profile/RESULTS.md are made from those files alone.
# Run it on a quiet box: ROUNDS=8 bench/profile/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf"; exit 1; }
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rounds=${ROUNDS:-4}
requests=${REQUESTS:-3000}
drv() { go run ./builtins/internal/profile/overhead "$@"; }
cases=()
for hz in ${HZS:-99 499 1999}; do
  drv -out "bench/profile/raw/$stamp-pids-$hz" -by pids -hz "$hz" -rounds "$rounds" -requests "$requests"
  cases+=("$stamp-pids-$hz")
done
drv -out "bench/profile/raw/$stamp-cgroup-499" -by cgroup -hz 499 -rounds "$rounds" -requests "$requests"
cases+=("$stamp-cgroup-499")
drv -out "bench/profile/raw/$stamp-work-499" -work "${WORK:-100000}" -hz 499 -rounds "$rounds"
cases+=("$stamp-work-499")
{
  sed '/^<!-- table -->$/q' bench/profile/RESULTS.md
  for c in "${cases[@]}"; do
    echo
    echo "From \`bench/profile/raw/$c\`:"
    echo
    drv -table "bench/profile/raw/$c"
  done
} > bench/profile/RESULTS.md.new
mv bench/profile/RESULTS.md.new bench/profile/RESULTS.md
echo "wrote bench/profile/RESULTS.md from bench/profile/raw/$stamp-*"
