#!/usr/bin/env bash
# Runs .ci/run on a fresh clone of HEAD, as the CI that judges a stop does,
# under /usr/bin/time -v, and keeps what bench/ci/table.sh reads in
# bench/ci/raw/<stamp>-ci-run.txt: the steps .ci/test printed, its 20
# slowest tests, the CPU of every waited process, and the steal time the
# host took from this VM over the run (/proc/stat). On these shared 2-core
# machines steal made one run of the same tests 9 min 0 s where the one
# before took 7 min 51 s: a run's wall time means little without it.
#
#   bench/ci/fresh.sh "what changed"      # ~8-12 min; run nothing beside it
#
# The clone and the go test -json logs stay in the printed directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
what=${1:?usage: bench/ci/fresh.sh "what changed"}
rev=$(git rev-parse --short HEAD)
stamp=$(date -u +%Y%m%dT%H%MZ)
work=$(mktemp -d /tmp/benchbook-ci.XXXXXX)
git clone -q . "$work/clone"
cpu() { awk '/^cpu / {print $9, $5}' /proc/stat; } # steal and idle, in clock ticks
read -r steal0 idle0 < <(cpu)
start=$(date -u '+%F %H:%M')
rc=0
(cd "$work/clone" && BENCHBOOK_TEST_OUT=$work/out /usr/bin/time -v .ci/run) >"$work/log" 2>&1 || rc=$?
read -r steal1 idle1 < <(cpu)
hz=$(getconf CLK_TCK)
# .ci/test's last line says what failed (steps); gotestsum's "=== FAIL:" lines, which tests
result=$(grep -E '^(all passed|FAILED)' "$work/log" | tail -1)
[ -n "$result" ] || result="exit $rc before .ci/test ended"
# .ci/run's step after .ci/test: the Kubernetes fleet on a real cluster
result="$result; $(grep -E '^k8s e2e (passed|FAILED)' "$work/log" | tail -1 || true)"
tests=$( (grep '^=== FAIL: ' "$work/log" || true) | sed 's/^=== FAIL: //; s/ ([0-9.]*s)$//' | sort -u | paste -sd';' -)
[ -z "$tests" ] || result="$result; $tests"
out=bench/ci/raw/$stamp-ci-run.txt
{
	echo "# .ci/run on a fresh clone of $rev ($what), $start UTC, $(nproc) cores; $result"
	grep -E '^== |^all passed|^FAILED|^k8s e2e|^cluster up in|^the cluster.s memory|^down .*: nothing left|^\[cluster .*(binaries|node Ready)' "$work/log"
	awk '/^== the 20 slowest/ {f = 1; next} f && /^github.com/ {print "  slowest: " $0}' "$work/log"
	echo "steal: $(((steal1 - steal0) / hz)) s of the VM's time taken by the host over the run; idle $(((idle1 - idle0) / hz)) s (/proc/stat, both cores)"
	grep -E '^\s+(Command being timed|User time|System time|Percent of CPU|Elapsed|Maximum resident|Major|Minor|Voluntary|Involuntary)' "$work/log"
} >"$out"
echo "wrote $out ($result; log and clone in $work)"
exit "$rc"
