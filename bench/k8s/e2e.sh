#!/usr/bin/env bash
# The Kubernetes fleet on a real cluster, end to end (.ci/run's last step):
#
#   1. build the cluster's binaries (cluster.sh build: minutes the first
#      time on a machine, seconds after);
#   2. cluster.sh up, then on it TestRealCluster (fleet/kube) and the
#      notebook tests of cmd/benchbook's kubernetes build (merged counts
#      and p99 against the target's and the agents' own, a pod killed
#      mid-run, nothing left in the cluster);
#   3. cluster.sh down, and a check that it left nothing: no process, mount,
#      cgroup, bridge or state directory of the cluster, the kernel settings
#      as they were;
#   4. up again after that down (it must start from nothing) and
#      TestRealCluster once more, then down and the same check.
#
# The last line gives the wall time and the build's share. Exit status 0
# only if every step passed; a test that skips fails it (no cluster here
# means something above failed).
set -uo pipefail
cd "$(dirname "$0")/../.."
k8s=bench/k8s
state=${BENCHBOOK_K8S_STATE:-/run/benchbook-k8s}
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
t0=$(date +%s)
failed=()
step() { echo; echo "== k8s e2e: $* ($(($(date +%s) - t0)) s in)"; }

sysctls() { for s in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops; do printf '%s=%s ' "$s" "$(cat /proc/sys/$s)"; done; }
before=$(sysctls)
# hostfiles: what the kubelet and CNI write outside the state directory.
hostfiles() { ls -d /var/lib/cni /var/lib/cni/results/* /var/log/containers /var/log/containers/* /var/log/pods /run/netns/* 2>/dev/null; }
hostbefore=$(hostfiles)

# left: what of a cluster is still on this machine, one line each.
left() {
	local f c
	for f in /proc/[0-9]*/cmdline; do
		c=$({ tr '\0' ' ' <"$f"; } 2>/dev/null) || continue
		case $c in *"$state"*) echo "process ${f//[^0-9]/}: ${c:0:160}" ;; esac
	done
	awk -v s="$state" 'index($5, s) == 1 {print "mount " $5}' /proc/self/mountinfo
	for h in /sys/fs/cgroup/*/benchbook-k8s; do [ -d "$h" ] && echo "cgroup $h"; done
	ip link show bbk8s0 >/dev/null 2>&1 && echo "bridge bbk8s0"
	[ -e "$state" ] && echo "state directory $state"
	[ "$(sysctls)" = "$before" ] || echo "kernel settings $(sysctls), were $before"
	diff <(echo "$hostbefore") <(hostfiles) | sed -n 's/^> /host file /p'
	iptables-save 2>/dev/null | grep -q KUBE && echo "iptables chains KUBE-*"
}

# mem: the cluster's memory in MiB: the resident memory of its processes
# (those whose command line names the state directory: etcd, the control
# plane, containerd, the shims) and of its containers (their cgroups' rss).
mem() {
	local f kb=0 c v
	for f in /proc/[0-9]*/cmdline; do
		case $({ tr '\0' ' ' <"$f"; } 2>/dev/null) in *"$state"*)
			v=$(awk '/^VmRSS/ {print $2}' "${f%cmdline}status" 2>/dev/null)
			kb=$((kb + ${v:-0})) ;;
		esac
	done
	c=$(awk '/^total_rss / {print $2}' /sys/fs/cgroup/memory/benchbook-k8s/memory.stat 2>/dev/null || echo 0)
	echo $(((kb * 1024 + ${c:-0}) >> 20))
}

down_and_check() {
	$k8s/cluster.sh down || failed+=("down $1")
	local l
	l=$(left)
	if [ -n "$l" ]; then
		echo "left after down:"; echo "$l"; failed+=("down $1 left something")
	else
		echo "down $1: nothing left (processes, mounts, cgroups, bridge, state, kernel settings, CNI cache, log links, iptables)"
	fi
}

# gotest NAME PACKAGES...: go test -v of the tests named, failing on a skip.
gotest() {
	local run=$1 out
	shift
	out=$(mktemp)
	go test -tags kubernetes -count=1 -timeout 10m -v -run "$run" "$@" 2>&1 | tee "$out" | grep -v '^=== '
	local rc=${PIPESTATUS[0]}
	if grep -q -- '--- SKIP' "$out"; then echo "a test skipped: the cluster is not reachable"; rc=1; fi
	rm -f "$out"
	return "$rc"
}

# A cluster some earlier run left up would be reused by nothing: take it down.
[ -e "$state" ] && $k8s/cluster.sh down

step "build"
b0=$(date +%s)
$k8s/cluster.sh build || failed+=(build)
build=$(($(date +%s) - b0))

if [ ${#failed[@]} -eq 0 ]; then
	step "up"
	u0=$(date +%s)
	if env=$($k8s/cluster.sh up); then
		up=$(($(date +%s) - u0))
		eval "$env"
		echo "$env"
		echo "cluster up in $up s (the build check included), $(mem) MiB of memory"
		step "tests on the cluster"
		# The node's memory, sampled through the tests; its peak is reported.
		(peak=0; while [ -e "$state" ]; do m=$(mem); [ "$m" -gt "$peak" ] && peak=$m && echo "$peak" >"$state.peak"; sleep 2; done) &
		sampler=$!
		gotest '^(TestRealCluster|TestKubernetesNotebook|TestKubernetesNotebookPodKilled)$' \
			./builtins/workload/fleet/kube ./cmd/benchbook || failed+=("tests")
		kill "$sampler" 2>/dev/null
		echo "the cluster's memory peaked at $(cat "$state.peak" 2>/dev/null) MiB during the tests (sampled every 2 s)"
		rm -f "$state.peak"
	else
		failed+=(up)
	fi
	step "down"
	down_and_check first

	step "up again after down"
	if env=$($k8s/cluster.sh up); then
		eval "$env"
		gotest '^TestRealCluster$' ./builtins/workload/fleet/kube || failed+=("second up's test")
	else
		failed+=("second up")
	fi
	step "down again"
	down_and_check second
fi

total=$(($(date +%s) - t0))
echo
echo "k8s e2e: ${total} s wall, of which the build ${build} s ($((100 * build / (total > 0 ? total : 1)))%)"
if [ ${#failed[@]} -gt 0 ]; then
	echo "k8s e2e FAILED: ${failed[*]}"
	exit 1
fi
echo "k8s e2e passed"
