#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, on loopback only, for
# benchbook's Kubernetes fleet tests (bench/k8s/README.md):
#
#   eval "$(bench/k8s/cluster.sh up)"   # prints export KUBECONFIG=... BENCHBOOK_AGENT_IMAGE=...
#   bench/k8s/cluster.sh env            # the same lines again, for a cluster that is up
#   bench/k8s/cluster.sh down           # stops it and removes everything up made
#   bench/k8s/cluster.sh build          # only builds the binaries (up does it too)
#
# up builds kube-apiserver, kube-controller-manager, kube-scheduler and the
# kubelet with `go build` from the k8s.io/kubernetes module pinned in
# bench/k8s/go.mod (~1,500 CPU-s the first time, run under nice; the
# binaries are kept outside the repository, beside the Go build cache, so a
# second up only checks them), builds the pause and agent images
# (image.sh) and imports them into a containerd of its own, then starts
# etcd, the control plane, that containerd and a kubelet, every one
# listening on 127.0.0.1 only, and waits for the node to be Ready.
#
# down stops every process it started (by PID, after checking the PID is
# still that process) and the containers' shims and processes, unmounts
# what containerd and the kubelet mounted, removes the cgroups, the CNI
# bridge, the kubelet's log links, the state directory, and sets back the
# kernel settings the kubelet changed. It is safe to run when nothing is up.
#
# Needs (Debian): etcd-server containerd runc containernetworking-plugins
# iproute2 openssl curl, and root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

version=v1.37.2
state=${BENCHBOOK_K8S_STATE:-/run/benchbook-k8s}
bin=${BENCHBOOK_K8S_BIN:-$(dirname "$(go env GOCACHE)")/benchbook-k8s/$version}
# Loopback ports, below the ephemeral range (32768-60999) that tests' own
# listeners draw from.
etcd_port=12379 etcd_peer=12380 api_port=16443 kubelet_port=11250
bridge=bbk8s0 net=benchbook-k8s subnet=10.244.77.0/24
cgroot=benchbook-k8s
# What the kubelet sets (pkg/kubelet/cm: setupKernelTunables): saved by up,
# set back by down.
sysctls="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes"
# Host directories the kubelet or CNI create when missing: removed by down
# when up found them missing and they are empty again.
hostdirs="/var/log/containers /var/lib/cni/results /var/lib/cni /run/containerd/s /run/containerd"

pki=$state/pki
sock=$state/containerd/containerd.sock
t0=$(date +%s.%N)
say() { printf '[cluster %5.1fs] %s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')" "$*" >&2; }
die() { say "$*"; exit 1; }

# ours PID: the process is alive and is one of ours (its command line
# names the state directory), so a PID reused by another process is never
# signalled.
ours() { [ -r "/proc/$1/cmdline" ] && tr '\0' '\n' <"/proc/$1/cmdline" | grep -qF "$state"; }

start() { # name command...: runs it in its own session, its PID kept
	local name=$1
	shift
	setsid "$@" >"$state/log/$name.log" 2>&1 </dev/null &
	echo $! >"$state/pid/$name"
}

# wait_for what seconds command...: until the command succeeds; fails with
# the logs' tails if a process of ours died meanwhile or time ran out.
wait_for() {
	local what=$1 secs=$2 end
	shift 2
	end=$(($(date +%s) + secs))
	until "$@" >/dev/null 2>&1; do
		for f in "$state"/pid/*; do
			ours "$(cat "$f")" || { tail -30 "$state/log/$(basename "$f").log" >&2; die "$(basename "$f") exited while waiting for $what"; }
		done
		[ "$(date +%s)" -lt "$end" ] || { tail -n 20 "$state"/log/*.log >&2; die "no $what after ${secs}s"; }
		sleep 0.2
	done
	say "$what"
}

node_ready() { api /api/v1/nodes/localhost | tr -d ' \n' | grep -q '"type":"Ready","status":"True"'; }

api() { # path: GET it as the cluster's admin
	curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://127.0.0.1:$api_port$1"
}

build() {
	local need=()
	for c in etcd containerd runc ctr openssl curl ip; do command -v $c >/dev/null || need+=("$c"); done
	[ -x /usr/lib/cni/bridge ] || need+=(/usr/lib/cni/bridge)
	[ ${#need[@]} -eq 0 ] || die "missing ${need[*]}: apt-get install etcd-server containerd runc containernetworking-plugins iproute2 openssl curl"
	mkdir -p "$bin"
	# The version in the binaries, as release builds have it (without it
	# they say v0.0.0-master, which kubectl version refuses).
	local ld="-s -w -X k8s.io/component-base/version.gitVersion=$version"
	ld+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37"
	local b0
	b0=$(date +%s)
	(cd "$here" && CGO_ENABLED=0 nice -n 19 ionice -c 3 go build -trimpath -ldflags "$ld" -o "$bin/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet) || die "building Kubernetes $version failed"
	say "Kubernetes $version binaries in $bin ($(($(date +%s) - b0)) s)"
}

pkiinit() {
	mkdir -p "$pki"
	openssl ecparam -name prime256v1 -genkey -noout -out "$pki/ca.key" 2>/dev/null
	openssl req -x509 -new -key "$pki/ca.key" -subj /CN=benchbook-k8s-ca -days 7 -out "$pki/ca.crt" \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
	openssl ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key" 2>/dev/null
	openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
	# name CN O SANs
	cert apiserver kube-apiserver "" "IP:127.0.0.1,DNS:localhost,IP:10.96.0.1"
	cert admin benchbook-admin system:masters
	cert kcm system:kube-controller-manager ""
	cert scheduler system:kube-scheduler ""
	cert kubelet system:node:localhost system:nodes
	cert kubelet-serving system:node:localhost system:nodes "IP:127.0.0.1,DNS:localhost"
	cert apiserver-kubelet kube-apiserver-kubelet-client ""
	for u in admin kcm scheduler kubelet; do kubeconfig "$u"; done
}

cert() {
	local name=$1 cn=$2 org=$3 san=${4:-}
	openssl ecparam -name prime256v1 -genkey -noout -out "$pki/$name.key" 2>/dev/null
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=critical,digitalSignature"
		echo "extendedKeyUsage=serverAuth,clientAuth"
		[ -z "$san" ] || echo "subjectAltName=$san"
	} >"$pki/$name.ext"
	openssl req -new -key "$pki/$name.key" -subj "/CN=$cn${org:+/O=$org}" |
		openssl x509 -req -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -set_serial "0x$(openssl rand -hex 8)" -days 7 \
			-extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
}

kubeconfig() {
	cat >"$state/$1.kubeconfig" <<-EOF
		apiVersion: v1
		kind: Config
		clusters:
		- name: benchbook
		  cluster: {server: "https://127.0.0.1:$api_port", certificate-authority: "$pki/ca.crt"}
		users:
		- name: $1
		  user: {client-certificate: "$pki/$1.crt", client-key: "$pki/$1.key"}
		contexts:
		- name: benchbook
		  context: {cluster: benchbook, user: $1, namespace: default}
		current-context: benchbook
	EOF
}

containerd_config() {
	mkdir -p "$state/cni"
	cat >"$state/cni/10-$net.conflist" <<-EOF
		{"cniVersion": "0.4.0", "name": "$net", "plugins": [{"type": "bridge", "bridge": "$bridge",
		 "isGateway": false, "ipMasq": false,
		 "ipam": {"type": "host-local", "ranges": [[{"subnet": "$subnet"}]], "dataDir": "$state/cni-ipam"}}]}
	EOF
	# restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, and runc
	# fails every sandbox lowering its OOM score ("can't get final child's
	# PID from pipe"). netns_mounts_under_state_dir keeps the pods' network
	# namespaces inside the state directory; disable_apparmor loads no
	# profile into the kernel; Root keeps runc's state here too.
	cat >"$state/containerd.toml" <<-EOF
		version = 2
		root = "$state/containerd/root"
		state = "$state/containerd/state"
		disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs",
		  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
		  "io.containerd.snapshotter.v1.zfs"]
		[grpc]
		  address = "$sock"
		[ttrpc]
		  address = "$sock.ttrpc"
		[debug]
		  address = ""
		[metrics]
		  address = ""
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "$pause_image"
		  stream_server_address = "127.0.0.1"
		  restrict_oom_score_adj = true
		  netns_mounts_under_state_dir = true
		  disable_apparmor = true
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        SystemdCgroup = false
		        Root = "$state/runc"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$state/cni"
	EOF
}

kubelet_config() {
	# cgroup v1 (refused by default since 1.35), the cgroupfs driver (no
	# systemd), every pod under one cgroup of ours, no iptables chains, logs
	# and plugins in the state directory, eviction only when nearly out.
	cat >"$state/kubelet.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		address: 127.0.0.1
		port: $kubelet_port
		readOnlyPort: 0
		healthzPort: 0
		cgroupDriver: cgroupfs
		failCgroupV1: false
		cgroupRoot: /$cgroot
		makeIPTablesUtilChains: false
		containerRuntimeEndpoint: unix://$sock
		podLogsDir: $state/pod-logs
		volumePluginDir: $state/volume-plugins
		tlsCertFile: $pki/kubelet-serving.crt
		tlsPrivateKeyFile: $pki/kubelet-serving.key
		authentication:
		  anonymous: {enabled: false}
		  webhook: {enabled: false}
		  x509: {clientCAFile: $pki/ca.crt}
		authorization: {mode: AlwaysAllow}
		maxPods: 16
		evictionHard: {memory.available: 50Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
		imageGCHighThresholdPercent: 100
		imageGCLowThresholdPercent: 99
	EOF
}

# cgroups: the kubelet wants its root to exist in every hierarchy; a new
# cpuset cgroup has no CPUs or memory nodes until given its parent's.
mkcgroups() {
	for h in /sys/fs/cgroup/*/; do
		[ -e "$h/cgroup.procs" ] || continue
		mkdir -p "$h$cgroot"
		if [ -e "$h/cpuset.cpus" ]; then
			cat "$h/cpuset.cpus" >"$h$cgroot/cpuset.cpus"
			cat "$h/cpuset.mems" >"$h$cgroot/cpuset.mems"
		fi
	done
}

up() {
	if [ -d "$state" ]; then
		die "$state exists: a cluster is up (or was not taken down): run $0 down first"
	fi
	build
	mkdir -p "$state"/{pid,log,host}
	local images=$state/images
	mkdir -p "$images"
	pause_image=$("$here/image.sh" pause "$images/pause.tar")
	agent_image=$("$here/image.sh" agent "$images/agent.tar")
	echo "$agent_image" >"$state/agent-image"
	say "images $pause_image $agent_image"
	t0=$(date +%s.%N) # what follows is the start the issue bounds at 30 s
	for s in $sysctls; do cat "/proc/sys/$s" >"$state/host/sysctl.$(echo "$s" | tr / .)"; done
	for d in $hostdirs; do [ -e "$d" ] || echo "$d" >>"$state/host/created-dirs"; done
	pkiinit
	containerd_config
	kubelet_config
	say "certificates and configuration"

	start etcd etcd --name benchbook-k8s --data-dir "$state/etcd" \
		--listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
		--listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
		--initial-cluster "benchbook-k8s=http://127.0.0.1:$etcd_peer" --listen-metrics-urls "" \
		--quota-backend-bytes $((256 << 20)) --logger zap --log-level warn
	start containerd containerd --config "$state/containerd.toml"
	wait_for "etcd" 20 curl -sf "http://127.0.0.1:$etcd_port/health"
	start kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" --endpoint-reconciler-type none \
		--cert-dir "$state/apiserver" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
		--client-ca-file "$pki/ca.crt" --anonymous-auth=false --authorization-mode Node,RBAC \
		--enable-admission-plugins NodeRestriction \
		--service-account-issuer "https://127.0.0.1:$api_port" --service-account-key-file "$pki/sa.pub" \
		--service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range 10.96.0.0/24 \
		--kubelet-client-certificate "$pki/apiserver-kubelet.crt" --kubelet-client-key "$pki/apiserver-kubelet.key" \
		--kubelet-certificate-authority "$pki/ca.crt" --kubelet-preferred-address-types Hostname \
		--profiling=false --event-ttl 10m
	wait_for "containerd" 20 ctr -a "$sock" version
	ctr -a "$sock" -n k8s.io images import "$images/pause.tar" >/dev/null
	ctr -a "$sock" -n k8s.io images import "$images/agent.tar" >/dev/null
	say "images imported"
	wait_for "kube-apiserver ready" 60 api /readyz
	start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$state/kcm.kubeconfig" \
		--secure-port 0 --cert-dir "$state/kcm" --leader-elect=false --use-service-account-credentials \
		--service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" --profiling=false
	start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$state/scheduler.kubeconfig" \
		--secure-port 0 --leader-elect=false --profiling=false
	mkcgroups
	start kubelet "$bin/kubelet" --config "$state/kubelet.yaml" --kubeconfig "$state/kubelet.kubeconfig" \
		--hostname-override localhost --root-dir "$state/kubelet" --cert-dir "$state/kubelet-pki"
	wait_for "node Ready" 60 node_ready
	# The namespace's default service account, which the admission of every
	# pod wants, comes from the controller manager.
	wait_for "default service account" 30 api /api/v1/namespaces/default/serviceaccounts/default
	print_env
}

print_env() {
	[ -e "$state/agent-image" ] || die "no cluster is up ($state/agent-image is missing): $0 up"
	echo "export KUBECONFIG=$state/admin.kubeconfig"
	echo "export BENCHBOOK_AGENT_IMAGE=$(cat "$state/agent-image")"
}

stop() { # name: TERM, then KILL after 10 s
	local f=$state/pid/$1 pid
	[ -e "$f" ] || return 0
	pid=$(cat "$f")
	if ours "$pid"; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do ours "$pid" || break; sleep 0.2; done
		ours "$pid" && kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

down() {
	local pid
	# The control plane first, so nothing starts a pod again.
	for p in kubelet kube-scheduler kube-controller-manager kube-apiserver; do stop $p; done
	# Every container through its runtime, while it runs: the shims exit and
	# unmount the containers' root file systems.
	if [ -S "$sock" ] && ctr -a "$sock" version >/dev/null 2>&1; then
		for id in $(ctr -a "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
			ctr -a "$sock" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true
		done
	fi
	stop containerd
	# Shims left over (their containerd gone): the processes whose address is
	# our containerd's socket.
	for pid in $(grep -lzF -- "$sock" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
		ours "$pid" && kill -9 "$pid" 2>/dev/null || true
	done
	# Container processes left in our cgroups.
	for procs in $(find /sys/fs/cgroup/*/"$cgroot" -name cgroup.procs 2>/dev/null); do
		for pid in $(cat "$procs"); do kill -9 "$pid" 2>/dev/null || true; done
	done
	stop etcd
	# What containerd and the kubelet mounted under the state directory
	# (root file systems, secret volumes, network namespaces), deepest first.
	if [ -d "$state" ]; then
		for m in $(awk -v s="$state/" 'index($5, s) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
			umount "$m" 2>/dev/null || umount -l "$m"
		done
	fi
	for h in /sys/fs/cgroup/*/; do
		[ -d "$h$cgroot" ] || continue
		for _ in $(seq 50); do
			find "$h$cgroot" -depth -type d -exec rmdir {} + 2>/dev/null || true
			[ -d "$h$cgroot" ] || break
			sleep 0.1
		done
		[ -d "$h$cgroot" ] && say "could not remove the cgroup $h$cgroot"
	done
	ip link show "$bridge" >/dev/null 2>&1 && ip link delete "$bridge"
	# libcni's result cache, named NETWORK-SANDBOX-IFNAME: our network's,
	# and the loopback containerd sets up in each sandbox of ours.
	rm -f /var/lib/cni/results/"$net"-*
	for d in "$state"/containerd/*/io.containerd.grpc.v1.cri/sandboxes/*/; do
		[ -d "$d" ] && rm -f /var/lib/cni/results/cni-loopback-"$(basename "$d")"-*
	done
	for l in /var/log/containers/*; do
		[ -L "$l" ] && case $(readlink "$l") in "$state"/*) rm -f "$l" ;; esac
	done
	if [ -e "$state/host/created-dirs" ]; then
		for d in $(cat "$state/host/created-dirs"); do [ -d "$d" ] && rmdir --ignore-fail-on-non-empty "$d"; done
	fi
	for s in $sysctls; do
		f=$state/host/sysctl.$(echo "$s" | tr / .)
		[ -e "$f" ] && cat "$f" >"/proc/sys/$s"
	done
	[ -d "$state" ] && rm -rf --one-file-system "$state"
	say "down: nothing left"
}

[ "${BASH_SOURCE[0]}" = "$0" ] || return 0 # sourced: the functions alone
case ${1:-} in
build) build ;;
up) up ;;
down) down ;;
env) print_env ;;
*) echo "usage: $0 up|down|env|build" >&2; exit 2 ;;
esac
