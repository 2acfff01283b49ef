#!/usr/bin/env bash
# What each long package of the race pass costs on its own: wall time, CPU
# (user and system) and page faults of the package's test binary and every
# process it starts (postgres, browsers, targets), each package alone in a
# cgroup of its own, built as .ci/test's race pass builds it (-trimpath). The race pass
# runs three packages at a time on two cores with the CPU saturated, so its
# wall time is about the sum of these CPU seconds over two; this says where
# they go. Containers' processes belong to dockerd's cgroup and are not
# counted.
#
#   sudo bench/ci/cost.sh [package ...]     (from the repository root; root
#                                             for the cgroups)
#
# Raw lines go to bench/ci/raw/<UTC stamp>.txt with the load average before
# each package; bench/ci/table.sh makes the table of bench/ci/RESULTS.md
# from them.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "cost.sh: needs root (it makes cgroups)" >&2; exit 2; }
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(cmd/benchbook builtins/backend/statetest/property builtins/backend/postgres builtins/workload
		builtins/backend/statetest builtins/backend/process builtins/workload/fleet builtins/internal/profile
		runtime runtime/record builtins/backend/container stdlib)
fi
stamp=$(date -u +%Y%m%dT%H%MZ)
raw=bench/ci/raw/$stamp.txt
mkdir -p bench/ci/raw
# The binaries are built with -trimpath, as .ci/test builds them (the
# version test then expects no revision); they live under a dir named
# go-build, as go test's do.
work=$(mktemp -d -t go-build-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT

# cgroup v2 (one hierarchy: cpu.stat, memory.stat) or v1 (cpuacct, memory).
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	v=2
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control || echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
else
	v=1
fi
mkgroup() { # name -> the dirs to join
	if [ $v = 2 ]; then mkdir -p "/sys/fs/cgroup/$1" && echo "/sys/fs/cgroup/$1"
	else mkdir -p "/sys/fs/cgroup/cpuacct/$1" "/sys/fs/cgroup/memory/$1" && echo "/sys/fs/cgroup/cpuacct/$1 /sys/fs/cgroup/memory/$1"; fi
}
readgroup() { # name -> "user_s sys_s faults"
	if [ $v = 2 ]; then
		awk '/^user_usec/{u=$2/1e6} /^system_usec/{s=$2/1e6} END{printf "%.1f %.1f ", u, s}' "/sys/fs/cgroup/$1/cpu.stat"
		awk '/^pgfault /{print $2}' "/sys/fs/cgroup/$1/memory.stat"
	else
		hz=$(getconf CLK_TCK)
		awk -v hz="$hz" '/^user/{u=$2/hz} /^system/{s=$2/hz} END{printf "%.1f %.1f ", u, s}' "/sys/fs/cgroup/cpuacct/$1/cpuacct.stat"
		awk '/^total_pgfault /{print $2}' "/sys/fs/cgroup/memory/$1/memory.stat"
	fi
}
rmgroup() {
	if [ $v = 2 ]; then rmdir "/sys/fs/cgroup/$1"; else rmdir "/sys/fs/cgroup/cpuacct/$1" "/sys/fs/cgroup/memory/$1"; fi
}

{
	echo "# bench/ci/cost.sh $(git rev-parse --short HEAD) $(date -u +%FT%TZ) $(nproc) cores, $(go version | cut -d' ' -f3), cgroup v$v"
	echo "# package wall_s user_s sys_s page_faults exit load_before"
} >"$raw"
for p in "${pkgs[@]}"; do
	bin=$work/$(echo "$p" | tr / _).test
	go test -trimpath -race -vet=off -ldflags=-w -c -o "$bin" "./$p"
	[ -x "$bin" ] || continue # no test files
	g=benchbook-cost-$$-$(echo "$p" | tr / _)
	dirs=$(mkgroup "$g")
	load=$(cut -d' ' -f1 /proc/loadavg)
	t0=$(date +%s.%N)
	set +e
	(
		for d in $dirs; do echo "$BASHPID" >"$d/cgroup.procs"; done
		cd "$p" && CI=${CI:-true} exec "$bin" -test.count=1 -test.timeout=30m >"$work/out" 2>&1
	)
	rc=$?
	set -e
	t1=$(date +%s.%N)
	line="$p $(echo "$t1 - $t0" | bc | xargs printf '%.1f') $(readgroup "$g") $rc $load"
	echo "$line" | tee -a "$raw"
	[ $rc = 0 ] || tail -20 "$work/out"
	sleep 1 # stragglers (a postgres shutting down) leave the group
	rmgroup "$g" 2>/dev/null || true
done
echo "raw: $raw; table: bench/ci/table.sh $raw"
